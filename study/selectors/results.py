"""The results of a study (Pragmatics Meets Culture §6.2, A.2) and its long-format export.

Four queries load everything (participants, assignments, answers, preferences, each with
``values()``); pandas and ``study.analysis`` do the rest, so the cost does not grow with
the number of rows in queries. Previews never count; test participants count only on request.
"""

import io

import pandas as pd
from django.utils import timezone

from .. import analysis
from ..models import (
    Answer,
    Assignment,
    Criterion,
    PageVisit,
    Participant,
    ParticipantStatus,
    Phase,
    Preference,
    Speaker,
    Study,
)
from .participants import UNFINISHED, participant_abandon_cutoff

CRITERIA = [choice.value for choice in Criterion]
SPEAKERS = [choice.value for choice in Speaker]
UNASSIGNED = "unassigned"

EXPORT_COLUMNS = [
    "participant",
    "group",
    "participant_status",
    "excluded",
    "is_test",
    "artwork_id",
    "artwork_culture",
    "familiar",
    "is_qc",
    "order",
    "measure",
    "phase",
    "question_id",
    "question_type",
    "symbol",
    "criterion",
    "value",
    "correct",
    "confidence",
    "knew_before",
    "description_id",
    "speaker",
    "description_model",
    "side",
    "left_description_id",
    "right_description_id",
    "answered_at",
    "page_seconds",
]
MEASURE_ORDER = {"symbols_pre": 0, "qa_pre": 1, "symbols_post": 2, "qa_post": 3, "preference": 4}


# Loading ---------------------------------------------------------------------------------


def _effective_status(status: str, last_seen_at, cutoff) -> str:
    # The flow marks stale sessions as returned only when someone touches them; the
    # counts must not wait for that.
    if status in UNFINISHED and last_seen_at is not None and last_seen_at < cutoff:
        return ParticipantStatus.RETURNED
    return status


def _participant_filter(study: Study, include_test: bool, prefix: str = "") -> dict:
    lookups = {f"{prefix}study": study, f"{prefix}is_preview": False}
    if not include_test:
        lookups[f"{prefix}is_test"] = False
    return lookups


def _load(*, study: Study, include_test: bool) -> dict[str, pd.DataFrame]:
    cutoff = participant_abandon_cutoff()
    participants = pd.DataFrame.from_records(
        list(
            Participant.objects.filter(**_participant_filter(study, include_test)).values(
                "id",
                "prolific_pid",
                "pseudonym",
                "group",
                "status",
                "is_test",
                "consented_at",
                "last_seen_at",
                "entered_at",
            )
        ),
        columns=[
            "id",
            "prolific_pid",
            "pseudonym",
            "group",
            "status",
            "is_test",
            "consented_at",
            "last_seen_at",
            "entered_at",
        ],
    )
    if len(participants):
        participants["status"] = [
            _effective_status(status, seen, cutoff)
            for status, seen in zip(participants["status"], participants["last_seen_at"], strict=True)
        ]
    participants["group"] = participants["group"].fillna("").replace("", UNASSIGNED)

    owner = _participant_filter(study, include_test, "participant__")
    assignment_fields = [
        "id",
        "participant_id",
        "order",
        "is_qc",
        "artwork__key",
        "artwork__culture",
        "artwork__elements",
        "shown_id",
        "shown__key",
        "shown__speaker",
        "shown__model",
        "shown__self_eval_score",
        "left_id",
        "left__key",
        "left__speaker",
        "left__self_eval_score",
        "right_id",
        "right__key",
        "right__speaker",
        "right__self_eval_score",
        "symbols_pre",
        "symbols_post",
    ]
    assignments = pd.DataFrame.from_records(
        list(Assignment.objects.filter(**owner).values(*assignment_fields)), columns=assignment_fields
    )

    answer_fields = [
        "id",
        "assignment_id",
        "phase",
        "question__key",
        "question__type",
        "question__symbol",
        "choice",
        "is_correct",
        "confidence",
        "knew_before",
        "answered_at",
    ]
    answers = pd.DataFrame.from_records(
        list(
            Answer.objects.filter(**_participant_filter(study, include_test, "assignment__participant__")).values(
                *answer_fields
            )
        ),
        columns=answer_fields,
    )

    preference_fields = [
        "id",
        "assignment_id",
        "criterion",
        "side",
        "chosen_id",
        "chosen__key",
        "chosen__speaker",
        "chosen__model",
        "answered_at",
    ]
    preferences = pd.DataFrame.from_records(
        list(
            Preference.objects.filter(**_participant_filter(study, include_test, "assignment__participant__")).values(
                *preference_fields
            )
        ),
        columns=preference_fields,
    )

    # Every assignment row carries its participant's group and status, and whether the
    # artwork's culture is the participant's own.
    assignments = assignments.merge(
        participants[["id", "group", "status", "is_test", "pseudonym", "prolific_pid", "entered_at"]].rename(
            columns={"id": "participant_id"}
        ),
        on="participant_id",
        how="inner",
    )
    assignments["familiar"] = assignments["artwork__culture"] == assignments["group"]
    return {"participants": participants, "assignments": assignments, "answers": answers, "preferences": preferences}


# Results ----------------------------------------------------------------------------------


def _groups(study: Study, participants: pd.DataFrame) -> list[str]:
    groups = [group for group in (study.groups or []) if isinstance(group, str)]
    for group in participants["group"].unique():
        if group not in groups:
            groups.append(group)
    return groups


def _participant_counts(frame: pd.DataFrame) -> dict:
    status = frame["status"]
    return {
        "started": int(frame["consented_at"].notna().sum()),
        "completed": int((status == ParticipantStatus.COMPLETED).sum()),
        # Valid and completed coincide: a failed QC check ends with its own status.
        "valid": int((status == ParticipantStatus.COMPLETED).sum()),
        "excluded_qc": int((status == ParticipantStatus.EXCLUDED_QC).sum()),
        "returned": int((status == ParticipantStatus.RETURNED).sum()),
        "in_progress": int((status == ParticipantStatus.IN_PROGRESS).sum()),
        "no_consent": int((status == ParticipantStatus.NO_CONSENT).sum()),
    }


def _figure(successes: pd.Series, rows: pd.DataFrame) -> tuple[list[bool], list]:
    """A share for ``analysis.shares``: each row's success and the participant who gave it."""
    return successes.astype(bool).tolist(), rows["participant_id"].tolist()


def _preference_figures(rows: pd.DataFrame) -> dict:
    """Per question: which choices went to the pragmatic description."""
    figures = {}
    for criterion in CRITERIA:
        picked = rows[rows["criterion"] == criterion]
        figures[criterion] = _figure(picked["chosen__speaker"] == Speaker.PRAGMATIC, picked)
    return figures


def _qa_figures(rows: pd.DataFrame) -> dict:
    """``familiar``/``unfamiliar`` × ``without`` (pre) / ``with`` (post), as in the paper's Table 3."""
    figures = {}
    for key, familiar in (("familiar", True), ("unfamiliar", False)):
        subset = rows[rows["familiar"] == familiar]
        for phase_key, phase in (("without", Phase.PRE), ("with", Phase.POST)):
            answered = subset[subset["phase"] == phase]
            figures[key, phase_key] = _figure(answered["is_correct"], answered)
    return figures


def _shares(figures: dict) -> dict:
    """Every figure's share with its interval over participants, in one call so that figures over
    the same participants share their resamples."""
    return dict(zip(figures, analysis.shares(list(figures.values())), strict=True))


def _rate(share: dict, key: str) -> dict:
    return {key: share["rate"], "n": share["n"], "ci": share["ci"]}


def _accuracy(share: dict) -> dict:
    return {"mean": share["rate"], "ci": share["ci"], "n": share["n"]}


def _qa_table(shares: dict, scope: tuple) -> dict:
    return {
        key: {phase: _accuracy(shares[(*scope, key, phase)]) for phase in ("without", "with")}
        for key in ("familiar", "unfamiliar")
    }


def _pair_scores(assignments: pd.DataFrame) -> pd.DataFrame:
    """For each compared pair: the pragmatic and base description and their self-evaluation scores."""
    frame = assignments[
        [
            "id",
            "left_id",
            "left__speaker",
            "left__self_eval_score",
            "right_id",
            "right__speaker",
            "right__self_eval_score",
        ]
    ].copy()
    left_pragmatic = frame["left__speaker"] == Speaker.PRAGMATIC
    right_pragmatic = frame["right__speaker"] == Speaker.PRAGMATIC
    # A pair of two descriptions of one speaker has no difference to correlate with.
    frame = frame[left_pragmatic ^ right_pragmatic].copy()
    left_pragmatic = frame["left__speaker"] == Speaker.PRAGMATIC
    frame["pragmatic_score"] = frame["left__self_eval_score"].where(left_pragmatic, frame["right__self_eval_score"])
    frame["base_score"] = frame["right__self_eval_score"].where(left_pragmatic, frame["left__self_eval_score"])
    return frame[["id", "pragmatic_score", "base_score"]].rename(columns={"id": "assignment_id"})


def _kendall(assignments: pd.DataFrame, answers: pd.DataFrame, preferences: pd.DataFrame) -> dict:
    """Kendall's tau per question and for the QA gain; the intervals resample participants (each
    pair carries its ``participant_id``), as one person's choices are not independent."""
    result = {}
    scored = preferences.merge(_pair_scores(assignments), on="assignment_id", how="inner")
    scored = scored.dropna(subset=["pragmatic_score", "base_score"])
    for criterion in CRITERIA:
        rows = scored[scored["criterion"] == criterion]
        x = (rows["pragmatic_score"] - rows["base_score"]).astype(float).tolist()
        y = (rows["chosen__speaker"] == Speaker.PRAGMATIC).astype(int).tolist()
        result[criterion] = analysis.kendall(x, y, clusters=rows["participant_id"].tolist())

    # QA gain: per assignment, post accuracy minus pre accuracy, against the shown description's score.
    if len(answers):
        per_phase = (
            answers.assign(correct=answers["is_correct"].astype(float))
            .pivot_table(index="assignment_id", columns="phase", values="correct", aggfunc="mean")
            .reindex(columns=[Phase.PRE.value, Phase.POST.value])
        )
        gains = (per_phase[Phase.POST.value] - per_phase[Phase.PRE.value]).dropna().rename("gain").reset_index()
    else:
        gains = pd.DataFrame(columns=["assignment_id", "gain"])
    shown = assignments[["id", "participant_id", "shown__self_eval_score"]].rename(columns={"id": "assignment_id"})
    gained = gains.merge(shown, on="assignment_id", how="inner").dropna(subset=["shown__self_eval_score", "gain"])
    result["qa_gain"] = analysis.kendall(
        gained["shown__self_eval_score"].astype(float).tolist(),
        gained["gain"].astype(float).tolist(),
        clusters=gained["participant_id"].tolist(),
    )
    return result


def study_results(*, study: Study, include_test: bool = False) -> dict:
    """Counts, preference rates, position bias, QA accuracy and Kendall's tau of one study.

    Analyses use completed (valid) participants' non-QC artworks only; QC items count
    only towards ``qc_accuracy``. Every interval resamples participants (``interval_method``):
    rates and accuracies through ``analysis.shares``, Kendall's tau through ``analysis.kendall``.
    """
    data = _load(study=study, include_test=include_test)
    participants, assignments = data["participants"], data["assignments"]
    answers = data["answers"].merge(
        assignments[["id", "participant_id", "group", "status", "is_qc", "familiar", "shown__speaker"]].rename(
            columns={"id": "assignment_id"}
        ),
        on="assignment_id",
        how="inner",
    )
    preferences = data["preferences"].merge(
        assignments[["id", "participant_id", "group", "status", "is_qc"]].rename(columns={"id": "assignment_id"}),
        on="assignment_id",
        how="inner",
    )
    valid = ParticipantStatus.COMPLETED
    valid_assignments = assignments[(assignments["status"] == valid) & ~assignments["is_qc"].astype(bool)]
    valid_answers = answers[(answers["status"] == valid) & ~answers["is_qc"].astype(bool)]
    valid_preferences = preferences[(preferences["status"] == valid) & ~preferences["is_qc"].astype(bool)]
    groups = _groups(study, participants)

    counts = _participant_counts(participants)
    counts["by_group"] = {group: _participant_counts(participants[participants["group"] == group]) for group in groups}

    checked = answers[
        answers["is_qc"].astype(bool)
        & answers["status"].isin([ParticipantStatus.COMPLETED, ParticipantStatus.EXCLUDED_QC])
    ]
    # Every share of the results, keyed by where it goes.
    figures = {("preferences", key): figure for key, figure in _preference_figures(valid_preferences).items()}
    for group in groups:
        by_group = _preference_figures(valid_preferences[valid_preferences["group"] == group])
        figures.update({("preferences", group, key): figure for key, figure in by_group.items()})
    figures[("position_bias",)] = _figure(valid_preferences["side"] == "left", valid_preferences)
    figures.update({("qa", *key): figure for key, figure in _qa_figures(valid_answers).items()})
    for speaker in SPEAKERS:
        by_speaker = _qa_figures(valid_answers[valid_answers["shown__speaker"] == speaker])
        figures.update({("qa_speaker", speaker, *key): figure for key, figure in by_speaker.items()})
    for group in groups:
        by_group = _qa_figures(valid_answers[valid_answers["group"] == group])
        figures.update({("qa_group", group, *key): figure for key, figure in by_group.items()})
    figures[("qc",)] = _figure(checked["is_correct"], checked)
    shares = _shares(figures)

    preference_rates = {criterion: _rate(shares["preferences", criterion], "pragmatic_rate") for criterion in CRITERIA}
    preference_rates["by_group"] = {
        group: {criterion: _rate(shares["preferences", group, criterion], "pragmatic_rate") for criterion in CRITERIA}
        for group in groups
    }
    qa = _qa_table(shares, ("qa",))
    qa["by_speaker"] = {speaker: _qa_table(shares, ("qa_speaker", speaker)) for speaker in SPEAKERS}
    qa["by_group"] = {group: _qa_table(shares, ("qa_group", group)) for group in groups}

    return {
        "study": {"slug": study.slug, "title": study.title},
        "include_test": bool(include_test),
        "generated_at": timezone.now().isoformat(),
        "groups": groups,
        "participants": counts,
        "preferences": preference_rates,
        "position_bias": _rate(shares[("position_bias",)], "left_rate"),
        "qa_accuracy": qa,
        "qc_accuracy": _accuracy(shares[("qc",)]),
        "kendall": _kendall(valid_assignments, valid_answers, valid_preferences),
        "interval_method": analysis.interval_method(),
    }


# Long-format export -----------------------------------------------------------------------


def _iso(value) -> str | None:
    if value is None or value is pd.NaT or (isinstance(value, float) and pd.isna(value)):
        return None
    return value.isoformat()


def _symbols(elements) -> set[str]:
    return {
        element.get("name") for element in (elements or []) if isinstance(element, dict) and element.get("is_symbol")
    }


def _none(value):
    """pandas turns missing values into NaN/NaT; the rows carry None."""
    if value is None:
        return None
    try:
        return None if pd.isna(value) else value
    except (TypeError, ValueError):
        return value


def study_export_rows(*, study: Study, include_test: bool = False, raw_pid: bool = False) -> list[dict]:
    """One row per answer: each symbol selection, each multiple-choice answer (with its
    confidence and prior knowledge), each preference. Excluded sessions are kept and
    marked; previews never appear. The participant is the pseudonym unless ``raw_pid``."""
    data = _load(study=study, include_test=include_test)
    assignments = data["assignments"]
    by_assignment = {row["id"]: row for row in assignments.to_dict("records")}
    rows = []
    # Time on the page where each answer was given (first shown to submitted).
    page_seconds = {}
    participant_ids = {row["participant_id"] for row in by_assignment.values()}
    if participant_ids:
        for participant_id, step, shown_at, submitted_at in PageVisit.objects.filter(
            participant_id__in=participant_ids, submitted_at__isnull=False
        ).values_list("participant_id", "step", "shown_at", "submitted_at"):
            page_seconds[(participant_id, step)] = (submitted_at - shown_at).total_seconds()

    def seconds_on(assignment: dict, kind: str):
        return page_seconds.get((assignment["participant_id"], f"{int(assignment['order'])}:{kind}"))

    def base_row(assignment: dict) -> dict:
        shown_id, left_id = _none(assignment["shown_id"]), _none(assignment["left_id"])
        right_id = _none(assignment["right_id"])
        side = None
        if shown_id is not None:
            side = "left" if shown_id == left_id else "right" if shown_id == right_id else None
        row = {
            "participant": str(assignment["pseudonym"]),
            "group": assignment["group"],
            "participant_status": assignment["status"],
            "excluded": assignment["status"] != ParticipantStatus.COMPLETED,
            "is_test": bool(assignment["is_test"]),
            "artwork_id": assignment["artwork__key"],
            "artwork_culture": assignment["artwork__culture"],
            "familiar": bool(assignment["familiar"]),
            "is_qc": bool(assignment["is_qc"]),
            "order": int(assignment["order"]),
            "measure": None,
            "phase": None,
            "question_id": None,
            "question_type": None,
            "symbol": None,
            "criterion": None,
            "value": None,
            "correct": None,
            "confidence": None,
            "knew_before": None,
            "description_id": _none(assignment["shown__key"]),
            "speaker": _none(assignment["shown__speaker"]),
            "description_model": _none(assignment["shown__model"]),
            "side": side,
            "left_description_id": _none(assignment["left__key"]),
            "right_description_id": _none(assignment["right__key"]),
            "answered_at": None,
            "page_seconds": None,
        }
        if raw_pid:
            row["prolific_pid"] = assignment["prolific_pid"]
        # Sort keys, dropped before the rows leave.
        row["_entered"] = assignment["entered_at"]
        row["_participant"] = assignment["participant_id"]
        return row

    for assignment in by_assignment.values():
        expected = _symbols(assignment["artwork__elements"])
        for phase, field in ((Phase.PRE, "symbols_pre"), (Phase.POST, "symbols_post")):
            selected = assignment[field]
            if not isinstance(selected, list):
                continue
            row = base_row(assignment)
            row.update(
                measure=field,
                phase=phase.value,
                value="|".join(str(name) for name in selected),
                correct=set(selected) == expected,
                page_seconds=seconds_on(assignment, "symbols" if phase == Phase.PRE else "post_symbols"),
                _rank=MEASURE_ORDER[field],
                _tiebreak="",
            )
            rows.append(row)

    for answer in data["answers"].to_dict("records"):
        assignment = by_assignment.get(answer["assignment_id"])
        if assignment is None:
            continue
        row = base_row(assignment)
        row.update(
            measure="qa",
            phase=answer["phase"],
            question_id=answer["question__key"],
            question_type=answer["question__type"],
            symbol=answer["question__symbol"] or None,
            value=answer["choice"],
            correct=bool(answer["is_correct"]),
            confidence=int(answer["confidence"]),
            # Null where the question named no symbol: not asked, which is not "no".
            knew_before=None if _none(answer["knew_before"]) is None else bool(answer["knew_before"]),
            answered_at=_iso(answer["answered_at"]),
            page_seconds=seconds_on(assignment, "qa" if answer["phase"] == Phase.PRE else "post_qa"),
            _rank=MEASURE_ORDER[f"qa_{answer['phase']}"],
            _tiebreak=answer["question__key"],
        )
        rows.append(row)

    for preference in data["preferences"].to_dict("records"):
        assignment = by_assignment.get(preference["assignment_id"])
        if assignment is None:
            continue
        row = base_row(assignment)
        row.update(
            measure="preference",
            phase="compare",
            criterion=preference["criterion"],
            value=preference["side"],
            description_id=preference["chosen__key"],
            speaker=preference["chosen__speaker"],
            description_model=preference["chosen__model"],
            side=preference["side"],
            answered_at=_iso(preference["answered_at"]),
            page_seconds=seconds_on(assignment, "compare"),
            _rank=MEASURE_ORDER["preference"],
            _tiebreak=str(CRITERIA.index(preference["criterion"])) if preference["criterion"] in CRITERIA else "9",
        )
        rows.append(row)

    rows.sort(key=lambda row: (row["_entered"], row["_participant"], row["order"], row["_rank"], row["_tiebreak"]))
    for row in rows:
        for key in ("_entered", "_participant", "_rank", "_tiebreak"):
            del row[key]
    return rows


def export_columns(*, raw_pid: bool = False) -> list[str]:
    return [*EXPORT_COLUMNS, "prolific_pid"] if raw_pid else list(EXPORT_COLUMNS)


def study_export_csv(*, study: Study, include_test: bool = False, raw_pid: bool = False) -> str:
    """The long-format rows as CSV text (header even when there is no row)."""
    rows = study_export_rows(study=study, include_test=include_test, raw_pid=raw_pid)
    # object dtype keeps integers integers (confidence would become 4.0 next to blanks).
    frame = pd.DataFrame(rows, columns=export_columns(raw_pid=raw_pid), dtype=object)
    out = io.StringIO()
    frame.to_csv(out, index=False, lineterminator="\n")
    return out.getvalue()
