"""The study's statistics: counts, preference rates, position bias, QA accuracy, Kendall's tau.

Responses are written straight with the ORM (no participant flow) so every expected figure
can be counted by hand from the scenario below.
"""

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from core import statistics
from study import analysis
from study.models import (
    Answer,
    Artwork,
    Assignment,
    Description,
    Participant,
    ParticipantStatus,
    Preference,
    Question,
)
from study.selectors.results import study_results

from .factories import make_study, package_dict

pytestmark = pytest.mark.django_db

COMPLETED = ParticipantStatus.COMPLETED
CRITERIA = ("comprehension", "knowledge_gain", "prior_knowledge")


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _wilson(k: int, n: int) -> list[float]:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return [low, high]


def _share_bootstrap(successes, participants, *, n_resamples=analysis.N_RESAMPLES, seed=analysis.SEED) -> list:
    """The reference: draw participants with replacement (in sorted order of their ids, from
    numpy's default_rng(seed)), take all of their rows, the share of successes in those."""
    successes, participants = np.asarray(successes, dtype=float), np.asarray(participants)
    ids = np.unique(participants)
    rows = [np.flatnonzero(participants == pid) for pid in ids]
    draws = np.random.default_rng(seed).integers(0, ids.size, (n_resamples, ids.size))
    rates = [successes[np.concatenate([rows[i] for i in draw])].mean() for draw in draws]
    return list(np.quantile(rates, [0.025, 0.975]))


def _expected(study, by_participant: dict[str, list[bool]]) -> tuple[float, int, list]:
    """The share, n and reference interval of rows written out per participant (prolific id)."""
    successes, participants = [], []
    for pid, rows in by_participant.items():
        pk = Participant.objects.get(study=study, prolific_pid=pid).pk
        successes += rows
        participants += [pk] * len(rows)
    ci = _share_bootstrap(successes, participants) if len(by_participant) > 1 else [None, None]
    return sum(successes) / len(successes), len(successes), ci


def _assert_share(figure: dict, rate_key: str, expected: tuple):
    rate, n, ci = expected
    assert figure[rate_key] == rate and figure["n"] == n
    if ci == [None, None]:
        assert figure["ci"] == ci
    else:
        assert figure["ci"] == pytest.approx(ci, abs=1e-12)


def participate(
    study,
    pid: str,
    group: str,
    *,
    status=COMPLETED,
    is_test=False,
    is_preview=False,
    items=(),
    qc=(),
    consented=True,
    last_seen_minutes_ago=0,
):
    """A participant with their answers. Each item is a dict:

    ``artwork`` key; ``shown`` and ``left`` speakers; ``choices`` {criterion: speaker};
    ``pre`` and ``post``: correctness of the artwork's two questions in order;
    ``symbols``: the elements picked (pre and post alike). ``qc`` lists QC artwork keys
    with the correctness of their two answers: ``[("qc1", [True, True])]``.
    """
    now = timezone.now()
    participant = Participant.objects.create(
        study=study,
        prolific_pid=pid,
        group=group,
        status=status,
        is_test=is_test,
        is_preview=is_preview,
        consented_at=now if consented else None,
        finished_at=now if status in (COMPLETED, ParticipantStatus.EXCLUDED_QC) else None,
    )
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=now - timedelta(minutes=last_seen_minutes_ago))
    order = 0
    for item in items:
        artwork = Artwork.objects.get(study=study, key=item["artwork"])
        descriptions = {d.speaker: d for d in Description.objects.filter(artwork=artwork, listener=group)}
        left = descriptions[item.get("left", "base")]
        right = descriptions["pragmatic" if left.speaker == "base" else "base"]
        symbols = item.get("symbols")
        assignment = Assignment.objects.create(
            participant=participant,
            artwork=artwork,
            order=order,
            shown=descriptions[item.get("shown", "pragmatic")],
            left=left,
            right=right,
            symbols_pre=symbols,
            symbols_post=symbols,
        )
        order += 1
        _answer(assignment, "pre", item.get("pre", []))
        _answer(assignment, "post", item.get("post", []))
        for criterion, speaker in item.get("choices", {}).items():
            chosen = descriptions[speaker]
            Preference.objects.create(
                assignment=assignment, criterion=criterion, side="left" if chosen == left else "right", chosen=chosen
            )
    for key, correct in qc:
        artwork = Artwork.objects.get(study=study, key=key)
        assignment = Assignment.objects.create(participant=participant, artwork=artwork, order=order, is_qc=True)
        order += 1
        _answer(assignment, "pre", correct)
    return participant


def _answer(assignment, phase: str, correct: list[bool]):
    questions = list(Question.objects.filter(artwork=assignment.artwork).order_by("position"))
    for question, is_correct in zip(questions, correct, strict=False):
        Answer.objects.create(
            assignment=assignment,
            question=question,
            phase=phase,
            options=[question.answer, *question.distractors],
            choice=question.answer if is_correct else question.distractors[0],
            is_correct=is_correct,
            confidence=4 if is_correct else 2,
            knew_before=is_correct and phase == "pre",
        )


def prefs(comprehension, knowledge_gain, prior_knowledge) -> dict:
    return {"comprehension": comprehension, "knowledge_gain": knowledge_gain, "prior_knowledge": prior_knowledge}


P, B = "pragmatic", "base"


def build_scenario(study):
    """Three valid participants (five artworks), plus one of each kind that must not count."""
    participate(
        study,
        "P1",
        "american",
        items=[
            {
                "artwork": "am1",
                "shown": P,
                "left": B,
                "choices": prefs(P, P, B),
                "pre": [False, False],
                "post": [True, True],
                "symbols": ["am1 symbol"],
            },
            {
                "artwork": "cn1",
                "shown": B,
                "left": P,
                "choices": prefs(P, B, B),
                "pre": [False, False],
                "post": [True, False],
                "symbols": ["cn1 symbol", "cn1 tree"],
            },
        ],
        qc=[("qc1", [True, True])],
    )
    participate(
        study,
        "P2",
        "chinese",
        items=[
            {
                "artwork": "cn2",
                "shown": P,
                "left": P,
                "choices": prefs(P, P, P),
                "pre": [True, False],
                "post": [True, True],
            },
            {
                "artwork": "am2",
                "shown": B,
                "left": B,
                "choices": prefs(B, P, B),
                "pre": [False, False],
                "post": [False, True],
            },
        ],
    )
    participate(
        study,
        "P3",
        "american",
        items=[
            {
                "artwork": "am3",
                "shown": B,
                "left": P,
                "choices": prefs(P, P, P),
                "pre": [True, True],
                "post": [True, True],
            },
        ],
    )
    # Failed quality control: counted, never analysed (except its QC answers).
    participate(
        study,
        "P4",
        "american",
        status=ParticipantStatus.EXCLUDED_QC,
        items=[
            {
                "artwork": "am4",
                "shown": P,
                "left": B,
                "choices": prefs(P, P, P),
                "pre": [True, True],
                "post": [True, True],
            },
        ],
        qc=[("qc1", [False, False])],
    )
    participate(study, "P5", "chinese", status=ParticipantStatus.RETURNED)
    # Idle past STUDY_ABANDON_MINUTES: returned even though nobody marked it yet.
    participate(study, "P6", "chinese", status=ParticipantStatus.IN_PROGRESS, last_seen_minutes_ago=10_000)
    participate(study, "P7", "american", status=ParticipantStatus.IN_PROGRESS)
    # Left before consenting, long ago: returned, but never started.
    participate(
        study, "P10", "american", status=ParticipantStatus.ENTERED, consented=False, last_seen_minutes_ago=10_000
    )
    participate(study, "P8", "american", status=ParticipantStatus.NO_CONSENT, consented=False)
    participate(
        study,
        "P9",
        "american",
        is_test=True,
        items=[
            {
                "artwork": "am5",
                "shown": B,
                "left": B,
                "choices": prefs(B, B, B),
                "pre": [True, True],
                "post": [False, False],
            },
        ],
    )
    participate(
        study,
        "researcher",
        "american",
        is_preview=True,
        items=[
            {
                "artwork": "am6",
                "shown": B,
                "left": B,
                "choices": prefs(B, B, B),
                "pre": [True, True],
                "post": [False, False],
            },
        ],
    )


@pytest.fixture
def scenario(_media):
    study = make_study(package_dict(slug="pref-study"))
    build_scenario(study)
    return study


# analysis.py -----------------------------------------------------------------------------


def test_it_bootstraps_a_share_over_participants_like_the_reference():
    # Four people, three to six answers each; their ids in no particular order.
    participants = [30, 30, 30, 7, 7, 7, 7, 7, 7, 12, 12, 12, 12, 5, 5, 5]
    successes = [1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0]
    share = analysis.share(successes, participants, n_resamples=500, seed=4)
    assert share["rate"] == 8 / 16 and share["n"] == 16 and share["k"] == 8
    assert share["ci"] == pytest.approx(_share_bootstrap(successes, participants, n_resamples=500, seed=4), abs=1e-12)
    # Seeded: the same rows give the same interval; the row order does not matter.
    order = np.random.default_rng(0).permutation(len(participants))
    shuffled = analysis.share([successes[i] for i in order], [participants[i] for i in order], n_resamples=500, seed=4)
    assert shuffled["ci"] == pytest.approx(share["ci"], abs=1e-12)
    accuracy = analysis.accuracy([bool(value) for value in successes], participants, n_resamples=500, seed=4)
    assert accuracy == {"mean": share["rate"], "ci": share["ci"], "n": 16}
    assert analysis.share([], []) == {"rate": None, "ci": [None, None], "n": 0, "k": 0}
    # One person's answers say nothing of how people vary: no interval, the share still.
    assert analysis.share([1, 0, 1], [9, 9, 9]) == {"rate": 2 / 3, "ci": [None, None], "n": 3, "k": 2}


def test_it_computes_several_shares_on_shared_draws_as_each_alone():
    figures = [
        ([1, 0, 1, 1, 0, 0], [1, 1, 2, 2, 3, 3]),
        ([0, 0, 1, 1, 1, 0], [1, 1, 2, 2, 3, 3]),
        ([1, 1, 0, 1], [2, 2, 3, 4]),
        ([1], [1]),
    ]
    together = analysis.shares(figures, n_resamples=300, seed=2)
    assert together == [analysis.share(*figure, n_resamples=300, seed=2) for figure in figures]
    for (successes, participants), figure in zip(figures[:3], together[:3], strict=True):
        assert figure["ci"] == pytest.approx(
            _share_bootstrap(successes, participants, n_resamples=300, seed=2), abs=1e-12
        )


def test_it_gives_a_wider_interval_than_wilson_when_a_participant_answers_alike():
    rng = np.random.default_rng(8)
    # Twenty people, thirty answers each; each person mostly agrees with themselves.
    participants = np.repeat(np.arange(20), 30)
    leaning = rng.uniform(0.1, 0.9, 20)[participants]
    successes = (rng.random(participants.size) < leaning).astype(int)
    share = analysis.share(successes.tolist(), participants.tolist())
    assert share["ci"] == pytest.approx(_share_bootstrap(successes, participants), abs=1e-12)
    wilson = _wilson(int(successes.sum()), int(successes.size))
    assert share["ci"][1] - share["ci"][0] > 1.5 * (wilson[1] - wilson[0])


def test_it_gives_kendall_tau_with_a_bootstrap_interval():
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [1, 3, 2, 4, 6, 5, 8, 7]
    result = analysis.kendall(x, y, n_resamples=500, seed=1)
    expected = stats.kendalltau(x, y)
    assert result["tau"] == expected.statistic and result["n"] == 8
    assert result["p_value"] == expected.pvalue
    low, high = result["ci"]
    assert -1 <= low <= result["tau"] <= high <= 1 and low < high
    # Seeded: the same rows give the same interval.
    assert analysis.kendall(x, y, n_resamples=500, seed=1) == result


def test_it_leaves_kendall_undefined_for_few_or_constant_rows():
    empty = {"tau": None, "ci": [None, None], "p_value": None}
    assert analysis.kendall([1, 2], [1, 2]) == {**empty, "n": 2}
    assert analysis.kendall([1, 2, 3], [1, 1, 1]) == {**empty, "n": 3}
    assert analysis.kendall([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1]) == {**empty, "n": 4}
    assert analysis.kendall([1, None, 3], [1, 2, None])["n"] == 1
    assert statistics.finite(float("nan")) is None and statistics.finite(float("inf")) is None


# study_results ----------------------------------------------------------------------------


def test_it_counts_participants_by_status_and_group(scenario):
    counts = study_results(study=scenario)["participants"]
    # Started = consented: P1–P7 (P8 declined, P9 is a test, the preview never counts).
    assert {key: counts[key] for key in ("started", "completed", "valid", "excluded_qc", "returned")} == {
        "started": 7,
        "completed": 3,
        "valid": 3,
        "excluded_qc": 1,
        "returned": 3,
    }
    assert counts["in_progress"] == 1 and counts["no_consent"] == 1
    american, chinese = counts["by_group"]["american"], counts["by_group"]["chinese"]
    assert (american["completed"], american["excluded_qc"], american["returned"], american["started"]) == (2, 1, 1, 4)
    assert (chinese["completed"], chinese["returned"], chinese["started"]) == (1, 2, 3)


# Each valid participant's choices of the pragmatic description (their artworks in order), by question.
PRAGMATIC_CHOSEN = {
    "comprehension": {"P1": [True, True], "P2": [True, False], "P3": [True]},
    "knowledge_gain": {"P1": [True, False], "P2": [True, True], "P3": [True]},
    "prior_knowledge": {"P1": [False, False], "P2": [True, False], "P3": [True]},
}


def test_it_rates_the_pragmatic_preference_per_question(scenario):
    results = study_results(study=scenario)
    preferences = results["preferences"]
    for criterion, k in (("comprehension", 4), ("knowledge_gain", 4), ("prior_knowledge", 2)):
        assert set(preferences[criterion]) == {"pragmatic_rate", "n", "ci"}
        assert preferences[criterion]["pragmatic_rate"] == k / 5 and preferences[criterion]["n"] == 5, criterion
        _assert_share(preferences[criterion], "pragmatic_rate", _expected(scenario, PRAGMATIC_CHOSEN[criterion]))
    by_group = preferences["by_group"]
    # American: P1 (two artworks) and P3; Chinese: P2.
    assert by_group["american"]["comprehension"]["pragmatic_rate"] == 1.0
    american_prior = {pid: PRAGMATIC_CHOSEN["prior_knowledge"][pid] for pid in ("P1", "P3")}
    assert by_group["american"]["prior_knowledge"]["pragmatic_rate"] == 1 / 3
    _assert_share(by_group["american"]["prior_knowledge"], "pragmatic_rate", _expected(scenario, american_prior))
    # One Chinese participant: the rate, but no interval over participants.
    assert by_group["chinese"]["comprehension"] == {"pragmatic_rate": 0.5, "n": 2, "ci": [None, None]}


def test_it_measures_the_position_bias(scenario):
    bias = study_results(study=scenario)["position_bias"]
    assert set(bias) == {"left_rate", "n", "ci"} and bias["left_rate"] == 10 / 15 and bias["n"] == 15
    # The left description chosen, per participant: three questions per artwork.
    left = {
        "P1": [False, False, True, True, False, False],
        "P2": [True, True, True, True, False, True],
        "P3": [True] * 3,
    }
    _assert_share(bias, "left_rate", _expected(scenario, left))


def test_it_splits_qa_accuracy_by_familiarity_and_phase(scenario):
    qa = study_results(study=scenario)["qa_accuracy"]
    F, T = False, True
    # Familiar: P1's am1, P2's cn2, P3's am3; unfamiliar: P1's cn1, P2's am2.
    expected = {
        ("familiar", "without"): {"P1": [F, F], "P2": [T, F], "P3": [T, T]},
        ("familiar", "with"): {"P1": [T, T], "P2": [T, T], "P3": [T, T]},
        ("unfamiliar", "without"): {"P1": [F, F], "P2": [F, F]},
        ("unfamiliar", "with"): {"P1": [T, F], "P2": [F, T]},
    }
    for (familiarity, phase), rows in expected.items():
        _assert_share(qa[familiarity][phase], "mean", _expected(scenario, rows))
    assert (qa["familiar"]["without"]["mean"], qa["familiar"]["without"]["n"]) == (0.5, 6)
    assert (qa["familiar"]["with"]["mean"], qa["familiar"]["with"]["n"]) == (1.0, 6)
    assert (qa["unfamiliar"]["without"]["mean"], qa["unfamiliar"]["without"]["n"]) == (0.0, 4)
    assert (qa["unfamiliar"]["with"]["mean"], qa["unfamiliar"]["with"]["n"]) == (0.5, 4)
    # All correct, or each person half right: every resample agrees, and so does the interval.
    assert qa["familiar"]["with"]["ci"] == [1.0, 1.0] and qa["unfamiliar"]["with"]["ci"] == [0.5, 0.5]
    # Table 3 rows: by the speaker of the description shown.
    pragmatic, base = qa["by_speaker"]["pragmatic"], qa["by_speaker"]["base"]
    assert pragmatic["familiar"]["without"]["mean"] == 0.25 and pragmatic["familiar"]["without"]["n"] == 4
    _assert_share(pragmatic["familiar"]["without"], "mean", _expected(scenario, {"P1": [F, F], "P2": [T, F]}))
    assert pragmatic["unfamiliar"]["with"] == {"mean": None, "ci": [None, None], "n": 0}
    assert base["familiar"]["with"]["n"] == 2 and base["unfamiliar"]["with"]["mean"] == 0.5
    # Only P3 saw a base description of a familiar artwork: no interval.
    assert base["familiar"]["with"]["ci"] == [None, None]


def test_it_counts_qc_answers_of_finished_sessions_only_in_qc_accuracy(scenario):
    results = study_results(study=scenario)
    assert set(results["qc_accuracy"]) == {"mean", "ci", "n"}
    assert results["qc_accuracy"]["mean"] == 0.5 and results["qc_accuracy"]["n"] == 4
    _assert_share(results["qc_accuracy"], "mean", _expected(scenario, {"P1": [True, True], "P4": [False, False]}))
    assert results["qa_accuracy"]["familiar"]["without"]["n"] == 6


def test_it_includes_test_participants_only_on_request(scenario):
    without = study_results(study=scenario)
    with_test = study_results(study=scenario, include_test=True)
    assert without["include_test"] is False and with_test["include_test"] is True
    assert with_test["participants"]["completed"] == 4 and with_test["participants"]["started"] == 8
    assert with_test["preferences"]["comprehension"]["pragmatic_rate"] == 4 / 6
    assert with_test["preferences"]["comprehension"]["n"] == 6
    # The preview answered too, but never counts, not even with test data.
    assert with_test["position_bias"]["n"] == 18


def test_it_has_the_keys_of_the_cli_contract(scenario):
    results = study_results(study=scenario)
    assert {"participants", "preferences", "position_bias", "qa_accuracy", "kendall", "study"} <= set(results)
    assert {"started", "completed", "valid", "excluded_qc", "returned", "by_group"} <= set(results["participants"])
    for criterion in CRITERIA:
        assert {"pragmatic_rate", "n", "ci"} <= set(results["preferences"][criterion])
    assert {"left_rate", "n", "ci"} <= set(results["position_bias"])
    for familiarity in ("familiar", "unfamiliar"):
        for phase in ("without", "with"):
            assert {"mean", "ci", "n"} <= set(results["qa_accuracy"][familiarity][phase])
    for key in (*CRITERIA, "qa_gain"):
        assert set(results["kendall"][key]) == {"tau", "ci", "n", "p_value"}
    assert results["study"] == {"slug": "pref-study", "title": scenario.title}


def test_it_reports_an_empty_study_without_errors(_media):
    study = make_study(package_dict(slug="empty"))
    results = study_results(study=study)
    assert results["participants"]["started"] == 0
    assert results["preferences"]["comprehension"] == {"pragmatic_rate": None, "n": 0, "ci": [None, None]}
    assert results["position_bias"]["left_rate"] is None
    assert results["qa_accuracy"]["familiar"]["with"]["mean"] is None
    assert results["kendall"]["qa_gain"] == {"tau": None, "ci": [None, None], "n": 0, "p_value": None}


def _set_scores(study, key: str, pragmatic: float, base: float):
    artwork = Artwork.objects.get(study=study, key=key)
    Description.objects.filter(artwork=artwork, speaker="pragmatic").update(self_eval_score=pragmatic)
    Description.objects.filter(artwork=artwork, speaker="base").update(self_eval_score=base)


def test_it_correlates_self_evaluation_with_preferences_and_qa_gain(_media):
    study = make_study(package_dict(slug="monotone"))
    # Binary fractions keep the differences exact, so equal differences tie as the choices do.
    scores = {"am1": (0.25, 0.5), "am2": (0.375, 0.625), "am3": (0.625, 0.375), "am4": (0.75, 0.5)}
    for key, (pragmatic, base) in scores.items():
        _set_scores(study, key, pragmatic, base)
    # Pragmatic chosen for comprehension exactly where its score is higher; the opposite for
    # knowledge gain; always for prior knowledge (constant, so undefined).
    plan = [
        ("am1", prefs(B, P, P), [True, True], [False, False]),  # gain -1
        ("am2", prefs(B, P, P), [False, False], [False, False]),  # gain 0
        ("am3", prefs(P, B, P), [False, False], [True, False]),  # gain 0.5
        ("am4", prefs(P, B, P), [False, False], [True, True]),  # gain 1
    ]
    for n, (key, choices, pre, post) in enumerate(plan):
        participate(
            study,
            f"K{n}",
            "american",
            items=[
                {"artwork": key, "shown": P, "left": B, "choices": choices, "pre": pre, "post": post},
            ],
        )
    # Unscored pairs are skipped, not counted as zero.
    _set_scores(study, "am5", None, 0.5)
    participate(
        study,
        "K9",
        "american",
        items=[
            {
                "artwork": "am5",
                "shown": P,
                "left": B,
                "choices": prefs(P, P, P),
                "pre": [False, False],
                "post": [True, True],
            },
        ],
    )

    kendall = study_results(study=study)["kendall"]
    assert kendall["comprehension"]["tau"] == 1.0 and kendall["comprehension"]["n"] == 4
    assert kendall["comprehension"]["ci"] == [1.0, 1.0]
    expected_p = stats.kendalltau([-0.25, -0.25, 0.25, 0.25], [0, 0, 1, 1]).pvalue
    assert kendall["comprehension"]["p_value"] == expected_p
    assert kendall["knowledge_gain"]["tau"] == -1.0
    assert kendall["prior_knowledge"] == {"tau": None, "ci": [None, None], "n": 4, "p_value": None}
    assert kendall["qa_gain"]["tau"] == 1.0 and kendall["qa_gain"]["n"] == 4
    assert kendall["qa_gain"]["ci"] == [1.0, 1.0]


def test_it_leaves_kendall_undefined_below_three_pairs(_media):
    study = make_study(package_dict(slug="tiny"))
    _set_scores(study, "am1", 0.25, 0.5)
    _set_scores(study, "am2", 0.75, 0.5)
    participate(
        study,
        "T1",
        "american",
        items=[
            {"artwork": "am1", "shown": P, "choices": prefs(B, B, B), "pre": [False, False], "post": [False, False]},
            {"artwork": "am2", "shown": P, "choices": prefs(P, P, P), "pre": [False, False], "post": [True, True]},
        ],
    )
    kendall = study_results(study=study)["kendall"]
    for key in (*CRITERIA, "qa_gain"):
        assert kendall[key] == {"tau": None, "ci": [None, None], "n": 2, "p_value": None}, key


# Intervals over participants ------------------------------------------------------------------


def _participant_bootstrap(x, y, participants, *, n_resamples, seed):
    """The reference: draw participants with replacement, take all their rows, scipy's tau-b on those."""
    x, y, participants = np.asarray(x, dtype=float), np.asarray(y, dtype=float), np.asarray(participants)
    ids = np.unique(participants)
    rows = [np.flatnonzero(participants == pid) for pid in ids]
    draws = np.random.default_rng(seed).integers(0, ids.size, (n_resamples, ids.size))
    taus = []
    for draw in draws:
        picked = np.concatenate([rows[i] for i in draw])
        if len(set(x[picked])) > 1 and len(set(y[picked])) > 1:
            taus.append(stats.kendalltau(x[picked], y[picked]).statistic)
    return list(np.quantile(taus, [0.025, 0.975]))


def test_it_bootstraps_kendall_tau_over_participants():
    rng = np.random.default_rng(5)
    participants = np.repeat(np.arange(15), 6)  # fifteen people, six choices each
    leaning = rng.normal(0, 1, 15)[participants]
    x = rng.choice([-0.5, -0.25, 0.0, 0.25, 0.5], participants.size)
    y = (x + leaning + rng.normal(0, 0.5, participants.size) > 0).astype(int)
    clustered = analysis.kendall(x.tolist(), y.tolist(), clusters=participants.tolist(), n_resamples=400, seed=3)
    assert clustered["tau"] == stats.kendalltau(x, y).statistic and clustered["n"] == 90
    assert clustered["ci"] == pytest.approx(_participant_bootstrap(x, y, participants, n_resamples=400, seed=3))
    rows = analysis.kendall(x.tolist(), y.tolist(), n_resamples=400, seed=3)
    assert rows["tau"] == clustered["tau"]
    assert clustered["ci"][1] - clustered["ci"][0] > rows["ci"][1] - rows["ci"][0]


def test_it_resamples_participants_for_the_study_kendall_intervals(_media):
    study = make_study(package_dict(slug="clustered"))
    scores = {"am1": (0.25, 0.5), "am2": (0.375, 0.625), "am3": (0.625, 0.375), "am4": (0.75, 0.5)}
    for key, (pragmatic, base) in scores.items():
        _set_scores(study, key, pragmatic, base)
    # Each participant answers four artworks; K0 and K1 follow the score, K2 goes against it, K3 always picks base.
    follows = [prefs(B, B, P), prefs(B, P, P), prefs(P, P, B), prefs(P, B, B)]
    against = [prefs(P, P, P), prefs(P, B, B), prefs(B, P, P), prefs(B, B, B)]
    plans = {"K0": follows, "K1": follows, "K2": against, "K3": [prefs(B, B, B)] * 4}
    pragmatic_of = {}
    for pid, choices in plans.items():
        items = []
        for key, choice in zip(scores, choices, strict=True):
            items.append(
                {"artwork": key, "shown": P, "left": B, "choices": choice, "pre": [False, True], "post": [True, True]}
            )
        participant = participate(study, pid, "american", items=items)
        pragmatic_of[participant.pk] = choices

    results = study_results(study=study)
    assert results["interval_method"] == {
        "bootstrap": "participants",
        "resamples": 2000,
        "confidence": 0.95,
        "method": "percentile",
        "bootstrapped": ["preferences", "position_bias", "qa_accuracy", "qc_accuracy", "kendall"],
    }
    # The pairs, rebuilt by hand (tau and the resamples do not depend on their order).
    for criterion in CRITERIA:
        x, y, participants = [], [], []
        for participant_id, choices in sorted(pragmatic_of.items()):
            for (pragmatic, base), choice in zip(scores.values(), choices, strict=True):
                x.append(pragmatic - base)
                y.append(int(choice[criterion] == P))
                participants.append(participant_id)
        figure = results["kendall"][criterion]
        assert figure["n"] == 16 and figure["tau"] == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
        expected = _participant_bootstrap(x, y, participants, n_resamples=2000, seed=analysis.SEED)
        assert figure["ci"] == pytest.approx(expected, abs=1e-12), criterion
        if criterion == "comprehension":
            # Resampling the sixteen rows as if independent gives a narrower interval.
            rows = analysis.kendall(x, y)["ci"]
            assert rows[1] - rows[0] < figure["ci"][1] - figure["ci"][0]


def test_it_widens_the_study_rates_when_each_participant_chooses_alike(_media):
    study = make_study(package_dict(slug="alike"))
    # Four people, four artworks each: two always pick the pragmatic description, two never.
    chosen = {"A1": P, "A2": B, "A3": P, "A4": B}
    for pid, speaker in chosen.items():
        items = [
            {"artwork": key, "shown": P, "left": B, "choices": prefs(speaker, speaker, speaker), "pre": [True, False]}
            for key in ("am1", "am2", "am3", "am4")
        ]
        participate(study, pid, "american", items=items)
    results = study_results(study=study)
    figure = results["preferences"]["comprehension"]
    assert figure["pragmatic_rate"] == 0.5 and figure["n"] == 16
    rows = {pid: [speaker == P] * 4 for pid, speaker in chosen.items()}
    _assert_share(figure, "pragmatic_rate", _expected(study, rows))
    wilson = _wilson(8, 16)
    assert figure["ci"][1] - figure["ci"][0] > wilson[1] - wilson[0]
    # Every pair is chosen on the left by half of the people: the same for the position bias.
    bias = results["position_bias"]
    assert bias["n"] == 48 and bias["ci"][1] - bias["ci"][0] > _wilson(24, 48)[1] - _wilson(24, 48)[0]
    assert results["interval_method"]["bootstrap"] == "participants"


def test_it_gives_no_kendall_interval_over_a_single_participant():
    x, y = [1, 2, 3, 4, 5], [1, 3, 2, 5, 4]
    result = analysis.kendall(x, y, clusters=[7] * 5)
    assert result["tau"] == stats.kendalltau(x, y).statistic and result["n"] == 5
    assert result["ci"] == [None, None] and result["p_value"] == stats.kendalltau(x, y).pvalue
