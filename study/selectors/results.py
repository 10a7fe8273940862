"""The results of a study (Pragmatics Meets Culture §6.2, A.2) and its long-format export.

Results: a few queries whose number does not grow with the study, and whose rows grow with its
assignments, never with its answers (answers and preferences are counted per assignment in the
database); numpy and ``study.analysis`` do the rest, every figure's bootstrap on draws made once
per number of participants (``analysis.Draws``). They are kept in the shared cache under the
study's change stamp (``core.stamps``, scope ``study_results_scope``): every service that writes
something read here bumps it (``study.services.results.study_results_changed``), so a result is
computed once per change, in whichever process asks first.

Export: the rows come from the database in chunks (``.iterator``), in the order they are
written, and leave as they are made (CSV text chunks for a streamed download, dicts for a page
of the API): nothing holds the whole study in memory. Previews never count; test participants
count only on request.
"""

from collections import defaultdict
from itertools import islice

import numpy as np
from django.core.cache import cache
from django.db.models import Count, DurationField, ExpressionWrapper, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.csv_writer import CsvWriter
from core.stamps import stamp_get

from .. import analysis
from ..models import (
    Answer,
    Artwork,
    Assignment,
    Criterion,
    Description,
    PageVisit,
    Participant,
    ParticipantStatus,
    Phase,
    Preference,
    Question,
    Side,
    Speaker,
    Study,
)
from ..rules import UNFINISHED, participant_idle_after

CRITERIA = [choice.value for choice in Criterion]
SPEAKERS = [choice.value for choice in Speaker]
UNASSIGNED = "unassigned"
# Who is analysed (valid, QC excluded) and whose QC answers are scored: statuses the abandon rule
# never changes, so the figures do not depend on the time they are computed at; the counts do.
ANALYSED = (ParticipantStatus.COMPLETED, ParticipantStatus.EXCLUDED_QC)
# Sessions Prolific did not know (PROLIFIC_VERIFY_SECONDS after their consent) were not Prolific's
# participants: counted as released, never exported.
EXPORTED = tuple(status for status in ParticipantStatus.values if status != ParticipantStatus.UNVERIFIED)

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
# Rows fetched per round trip by the export's streams, and CSV rows per chunk sent.
EXPORT_CHUNK = 2000
# A cached result nobody reads again goes after a day; a change makes a new key long before.
RESULTS_TIMEOUT = 24 * 3600


def study_results_scope(study_id: int) -> str:
    """The change stamp's scope of everything a study's results and exports read."""
    return f"study:{study_id}"


def _idle_at(status: str, last_seen_at, step_index: int):
    """When an unfinished session turns returned if nobody sees it again (None for the others)."""
    if status not in UNFINISHED or last_seen_at is None:
        return None
    return last_seen_at + participant_idle_after(step_index=step_index)


def _effective_status(status: str, last_seen_at, step_index: int, now) -> str:
    # The flow marks idle sessions as returned only when someone touches them; the
    # counts must not wait for that.
    idle_at = _idle_at(status, last_seen_at, step_index)
    if idle_at is not None and idle_at < now:
        return ParticipantStatus.RETURNED
    return status


def _exported(lookups: dict, prefix: str = "") -> dict:
    """The export's participants: those of ``lookups`` but the sessions Prolific did not know."""
    return {**lookups, f"{prefix}status__in": EXPORTED}


def _participant_filter(study: Study, include_test: bool, prefix: str = "") -> dict:
    lookups = {f"{prefix}study": study, f"{prefix}is_preview": False}
    if not include_test:
        lookups[f"{prefix}is_test"] = False
    return lookups


def _group(group: str | None) -> str:
    return group or UNASSIGNED


def _groups(study: Study, participant_groups) -> list[str]:
    """The study's groups, then any other group participants have, in the order they arrived."""
    groups = [group for group in (study.groups or []) if isinstance(group, str)]
    for group in participant_groups:
        if group not in groups:
            groups.append(group)
    return groups


# Results ----------------------------------------------------------------------------------


def study_results(*, study: Study, include_test: bool = False) -> dict:
    """Counts, preference rates, position bias, QA accuracy and Kendall's tau of one study.

    Analyses use completed (valid) participants' non-QC artworks only; QC items count
    only towards ``qc_accuracy``. Every interval resamples participants (``interval_method``):
    rates and accuracies through ``analysis.shares``, Kendall's tau through ``analysis.kendall``.

    Read from the shared cache, computed on a miss: the figures once per change of the study's
    stamp; the counts also when an open session passes the abandon time (``_counts_cached``).
    """
    # The stamp is read before anything is computed: a write meanwhile bumps it, and what this
    # call stores under the old stamp is never read again.
    stamp = stamp_get(scope=study_results_scope(study.pk))
    # The creation time beside the id: a study given the id of a deleted one (SQLite reuses the
    # highest) never reads what was cached for the other.
    created = study.created_at.timestamp() if study.created_at else ""
    key = f"study:results:{study.pk}:{created}:{int(bool(include_test))}:{stamp}"
    figures = cache.get(f"{key}:figures")
    if figures is None:
        figures = _figures_compute(study=study, include_test=include_test)
        cache.set(f"{key}:figures", figures, timeout=RESULTS_TIMEOUT)
    counts = _counts_cached(study=study, include_test=include_test, key=f"{key}:counts")
    return {
        "study": {"slug": study.slug, "title": study.title},
        "include_test": bool(include_test),
        "generated_at": max(figures["computed_at"], counts["computed_at"]).isoformat(),
        "groups": figures["groups"],
        "participants": counts["participants"],
        "preferences": figures["preferences"],
        "position_bias": figures["position_bias"],
        "qa_accuracy": figures["qa_accuracy"],
        "qc_accuracy": figures["qc_accuracy"],
        "kendall": figures["kendall"],
        "interval_method": analysis.interval_method(),
    }


def _counts_cached(*, study: Study, include_test: bool, key: str) -> dict:
    """The participant counts, under the stamp but also until the next open session goes idle.

    They are the only part of the results that depends on the time: an unfinished session not
    seen for STUDY_ABANDON_MINUTES (STUDY_HOLD_MINUTES before its first answers) counts as returned
    without any write. So the entry carries the
    moment the earliest open session crosses that line (from the rows it was computed from) and
    is computed again from then on. Not a time bucket in the key: that would recompute every
    bucket whether or not anyone is open, and still be up to a bucket late; this is never late,
    and never expires while nobody is mid-session. A session seen again meanwhile only moves its
    own crossing later, so the entry at worst expires early.
    """
    entry = cache.get(key)
    now = timezone.now()
    if entry is None or (entry["valid_until"] is not None and now >= entry["valid_until"]):
        entry = _counts_compute(study=study, include_test=include_test)
        timeout = RESULTS_TIMEOUT
        if entry["valid_until"] is not None:
            timeout = max(1, min(timeout, int((entry["valid_until"] - now).total_seconds()) + 1))
        cache.set(key, entry, timeout=timeout)
    return entry


def _counts(rows: list[tuple]) -> dict:
    """``rows``: (status, consented) of the participants counted, status as the idle rules make it."""
    statuses = [status for status, _ in rows]
    completed = statuses.count(ParticipantStatus.COMPLETED)
    return {
        "started": sum(1 for status, consented in rows if consented and status != ParticipantStatus.UNVERIFIED),
        "completed": completed,
        # Valid and completed coincide: a failed QC check ends with its own status.
        "valid": completed,
        "excluded_qc": statuses.count(ParticipantStatus.EXCLUDED_QC),
        "returned": statuses.count(ParticipantStatus.RETURNED),
        "in_progress": statuses.count(ParticipantStatus.IN_PROGRESS),
        "no_consent": statuses.count(ParticipantStatus.NO_CONSENT),
        # Released by the Prolific sync: no submission on Prolific carried their PID and SESSION_ID.
        "unverified": statuses.count(ParticipantStatus.UNVERIFIED),
    }


def _counts_compute(*, study: Study, include_test: bool) -> dict:
    now = timezone.now()
    rows, by_group, valid_until = [], defaultdict(list), None
    for group, status, consented_at, last_seen_at, step_index in (
        Participant.objects.filter(**_participant_filter(study, include_test))
        .order_by("entered_at", "id")
        .values_list("group", "status", "consented_at", "last_seen_at", "step_index")
    ):
        effective = _effective_status(status, last_seen_at, step_index, now)
        if effective in UNFINISHED and last_seen_at is not None:
            crossing = _idle_at(status, last_seen_at, step_index)
            valid_until = crossing if valid_until is None else min(valid_until, crossing)
        row = (effective, consented_at is not None)
        rows.append(row)
        by_group[_group(group)].append(row)
    counts = _counts(rows)
    counts["by_group"] = {group: _counts(by_group.get(group, [])) for group in _groups(study, by_group)}
    return {"participants": counts, "valid_until": valid_until, "computed_at": now}


def _rate(share: dict, key: str) -> dict:
    return {key: share["rate"], "n": share["n"], "ci": share["ci"]}


def _accuracy(share: dict) -> dict:
    return {"mean": share["rate"], "ci": share["ci"], "n": share["n"]}


def _qa_table(shares: dict, scope: tuple) -> dict:
    return {
        key: {phase: _accuracy(shares[(*scope, key, phase)]) for phase in ("without", "with")}
        for key in ("familiar", "unfamiliar")
    }


class _Assignments:
    """The analysed assignments as columns (numpy arrays, one entry per assignment), with what was
    answered on each counted in the database: answers right and given per phase, preferences given
    and how many went to the pragmatic description or the left side per criterion."""

    def __init__(self, *, study: Study, include_test: bool):
        owner = _participant_filter(study, include_test, "participant__")
        participants = list(
            Participant.objects.filter(**_participant_filter(study, include_test))
            .order_by("entered_at", "id")
            .values_list("id", "group", "status")
        )
        self.groups = _groups(study, [_group(group) for _, group, _ in participants])
        group_of = {pk: _group(group) for pk, group, _ in participants}
        valid_of = {pk: status == ParticipantStatus.COMPLETED for pk, _, status in participants}
        culture_of = dict(Artwork.objects.filter(study=study).values_list("id", "culture"))
        speaker_of, score_of = {None: None}, {None: np.nan}
        for pk, speaker, score in Description.objects.filter(artwork__study=study).values_list(
            "id", "speaker", "self_eval_score"
        ):
            speaker_of[pk], score_of[pk] = speaker, np.nan if score is None else score
        rows = [
            row
            for row in Assignment.objects.filter(**owner, participant__status__in=ANALYSED)
            .order_by("id")
            .values_list("id", "participant_id", "is_qc", "artwork_id", "shown_id", "left_id", "right_id")
            # Participants read after their assignments (a new one meanwhile) are left out, as a join would.
            if row[1] in group_of
        ]
        ids, participant, is_qc, artwork, shown, left, right = (
            list(column) for column in (zip(*rows, strict=True) if rows else [()] * 7)
        )
        self.participant = np.array(participant, dtype=np.int64)
        self.is_qc = np.array(is_qc, dtype=bool)
        groups = [group_of[pk] for pk in participant]
        self.group = np.array(groups, dtype=object)
        self.valid = np.array([valid_of[pk] for pk in participant], dtype=bool)
        self.familiar = np.array(
            [culture_of.get(pk) == group for pk, group in zip(artwork, groups, strict=True)], dtype=bool
        )
        self.shown_speaker = np.array([speaker_of[pk] for pk in shown], dtype=object)
        self.shown_score = np.array([score_of[pk] for pk in shown], dtype=float)
        left_pragmatic = np.array([speaker_of[pk] == Speaker.PRAGMATIC for pk in left], dtype=bool)
        right_pragmatic = np.array([speaker_of[pk] == Speaker.PRAGMATIC for pk in right], dtype=bool)
        left_score = np.array([score_of[pk] for pk in left], dtype=float)
        right_score = np.array([score_of[pk] for pk in right], dtype=float)
        # A pair of two descriptions of one speaker has no difference to correlate with.
        self.paired = left_pragmatic ^ right_pragmatic
        self.pragmatic_score = np.where(left_pragmatic, left_score, right_score)
        self.base_score = np.where(left_pragmatic, right_score, left_score)

        position = {pk: index for index, pk in enumerate(ids)}
        answered = (
            Answer.objects.filter(assignment_id__in=_analysed(owner))
            .values("assignment_id")
            .order_by()
            .annotate(
                n_pre=Count("id", filter=Q(phase=Phase.PRE)),
                k_pre=Count("id", filter=Q(phase=Phase.PRE, is_correct=True)),
                n_post=Count("id", filter=Q(phase=Phase.POST)),
                k_post=Count("id", filter=Q(phase=Phase.POST, is_correct=True)),
            )
            .values_list("assignment_id", "n_pre", "k_pre", "n_post", "k_post")
        )
        self.answers = self._columns(("n_pre", "k_pre", "n_post", "k_post"), answered, position)

        names = [f"{part}_{criterion}" for criterion in CRITERIA for part in ("n", "pragmatic", "left")]
        aggregates = {}
        for criterion in CRITERIA:
            aggregates[f"n_{criterion}"] = Count("id", filter=Q(criterion=criterion))
            aggregates[f"pragmatic_{criterion}"] = Count(
                "id", filter=Q(criterion=criterion, chosen__speaker=Speaker.PRAGMATIC)
            )
            aggregates[f"left_{criterion}"] = Count("id", filter=Q(criterion=criterion, side=Side.LEFT))
        chosen = (
            Preference.objects.filter(assignment_id__in=_analysed(owner))
            .values("assignment_id")
            .order_by()
            .annotate(**aggregates)
            .values_list("assignment_id", *names)
        )
        self.preferences = self._columns(names, chosen, position)

    @staticmethod
    def _columns(names, rows, position: dict) -> dict[str, np.ndarray]:
        """Counts per assignment, in the assignments' order (zero where nothing was counted)."""
        table = np.array(list(rows), dtype=np.int64).reshape(-1, len(names) + 1)
        where = np.array([position.get(pk, -1) for pk in table[:, 0].tolist()], dtype=np.int64)
        known = where >= 0
        columns = np.zeros((len(position), len(names)))
        columns[where[known]] = table[known, 1:]
        return {name: columns[:, index] for index, name in enumerate(names)}


def _analysed(owner: dict):
    return Assignment.objects.filter(**owner, participant__status__in=ANALYSED).values("id")


def _per_participant(participant: np.ndarray, hits: np.ndarray, rows: np.ndarray) -> tuple:
    """A figure for ``analysis.shares_counted``: the participants who gave rows, each one's successes and rows."""
    ids, of_row = np.unique(participant, return_inverse=True)
    of_row = of_row.ravel()
    total = np.bincount(of_row, rows, ids.size)
    successes = np.bincount(of_row, hits, ids.size)
    present = total > 0
    return ids[present], successes[present], total[present]


def _figures_compute(*, study: Study, include_test: bool) -> dict:
    """Everything of the results but the counts: the same figures as the answers one by one would
    give (every sum here is of whole numbers, and tau depends on no order)."""
    computed_at = timezone.now()
    with analysis.one_thread():
        return _figures(_Assignments(study=study, include_test=include_test), computed_at)


def _figures(data: "_Assignments", computed_at) -> dict:
    groups = data.groups
    valid = data.valid & ~data.is_qc
    answers, preferences = data.answers, data.preferences

    figures: dict = {}

    def add(key, mask, hits, rows):
        figures[key] = _per_participant(data.participant[mask], hits[mask], rows[mask])

    for criterion in CRITERIA:
        n, pragmatic = preferences[f"n_{criterion}"], preferences[f"pragmatic_{criterion}"]
        add(("preferences", criterion), valid, pragmatic, n)
        for group in groups:
            add(("preferences", group, criterion), valid & (data.group == group), pragmatic, n)
    left = sum(preferences[f"left_{criterion}"] for criterion in CRITERIA)
    chosen = sum(preferences[f"n_{criterion}"] for criterion in CRITERIA)
    add(("position_bias",), valid, left, chosen)
    scopes = [("qa",), *(("qa_speaker", speaker) for speaker in SPEAKERS), *(("qa_group", group) for group in groups)]
    for scope in scopes:
        mask = valid
        if scope[0] == "qa_speaker":
            mask = mask & (data.shown_speaker == scope[1])
        elif scope[0] == "qa_group":
            mask = mask & (data.group == scope[1])
        for key, familiar in (("familiar", True), ("unfamiliar", False)):
            for phase_key, phase in (("without", "pre"), ("with", "post")):
                add(
                    (*scope, key, phase_key),
                    mask & (data.familiar == familiar),
                    answers[f"k_{phase}"],
                    answers[f"n_{phase}"],
                )
    add(("qc",), data.is_qc, answers["k_pre"] + answers["k_post"], answers["n_pre"] + answers["n_post"])

    draws = analysis.Draws()
    shares = dict(zip(figures, analysis.shares_counted(list(figures.values()), draws=draws), strict=True))
    preference_rates = {criterion: _rate(shares["preferences", criterion], "pragmatic_rate") for criterion in CRITERIA}
    preference_rates["by_group"] = {
        group: {criterion: _rate(shares["preferences", group, criterion], "pragmatic_rate") for criterion in CRITERIA}
        for group in groups
    }
    qa = _qa_table(shares, ("qa",))
    qa["by_speaker"] = {speaker: _qa_table(shares, ("qa_speaker", speaker)) for speaker in SPEAKERS}
    qa["by_group"] = {group: _qa_table(shares, ("qa_group", group)) for group in groups}
    return {
        "computed_at": computed_at,
        "groups": groups,
        "preferences": preference_rates,
        "position_bias": _rate(shares[("position_bias",)], "left_rate"),
        "qa_accuracy": qa,
        "qc_accuracy": _accuracy(shares[("qc",)]),
        "kendall": _kendall(data, valid, draws),
    }


def _kendall(data: _Assignments, valid: np.ndarray, draws: analysis.Draws) -> dict:
    """Kendall's tau per question and for the QA gain; the intervals resample participants (each
    pair carries its participant), as one person's choices are not independent."""
    result = {}
    scored = valid & data.paired & ~np.isnan(data.pragmatic_score) & ~np.isnan(data.base_score)
    difference = (data.pragmatic_score - data.base_score)[scored]
    participant = data.participant[scored]
    for criterion in CRITERIA:
        # Each choice is a pair: the score difference, and 1 where it went to the pragmatic description.
        given = data.preferences[f"n_{criterion}"][scored].astype(np.int64)
        pragmatic = data.preferences[f"pragmatic_{criterion}"][scored].astype(np.int64)
        x = np.concatenate([np.repeat(difference, pragmatic), np.repeat(difference, given - pragmatic)])
        y = np.concatenate([np.ones(pragmatic.sum(), dtype=int), np.zeros((given - pragmatic).sum(), dtype=int)])
        clusters = np.concatenate([np.repeat(participant, pragmatic), np.repeat(participant, given - pragmatic)])
        result[criterion] = analysis.kendall(x.tolist(), y.tolist(), clusters=clusters.tolist(), draws=draws)

    # QA gain: per assignment, post accuracy minus pre accuracy, against the shown description's score.
    answers = data.answers
    both = valid & (answers["n_pre"] > 0) & (answers["n_post"] > 0) & ~np.isnan(data.shown_score)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = answers["k_post"] / answers["n_post"] - answers["k_pre"] / answers["n_pre"]
    result["qa_gain"] = analysis.kendall(
        data.shown_score[both].tolist(), gain[both].tolist(), clusters=data.participant[both].tolist(), draws=draws
    )
    return result


# Long-format export -----------------------------------------------------------------------


def export_columns(*, raw_pid: bool = False) -> list[str]:
    return [*EXPORT_COLUMNS, "prolific_pid"] if raw_pid else list(EXPORT_COLUMNS)


def _symbols(elements) -> set[str]:
    return {
        element.get("name") for element in (elements or []) if isinstance(element, dict) and element.get("is_symbol")
    }


def _iso(value) -> str | None:
    return None if value is None else value.isoformat()


def _grouped(rows):
    """Consecutive rows with the same participant (their first value) as (participant, rows)."""
    key, group = None, []
    for row in rows:
        if row[0] != key:
            if group:
                yield key, group
            key, group = row[0], []
        group.append(row)
    if group:
        yield key, group


class _Follower:
    """One of the streams ordered by participant, read up to the participant the assignments are at."""

    def __init__(self, rows, rank: dict):
        self._groups = _grouped(rows)
        self._rank = rank
        self._next = None
        self._advance()

    def _advance(self):
        for participant, rows in self._groups:
            # Rows of participants read after the participants were (written meanwhile) are passed over.
            if participant in self._rank:
                self._next = (self._rank[participant], rows)
                return
        self._next = None

    def take(self, rank: int) -> list:
        while self._next is not None and self._next[0] < rank:
            self._advance()
        if self._next is not None and self._next[0] == rank:
            rows = self._next[1]
            self._advance()
            return rows
        return []


def _export_lists(*, study: Study, include_test: bool, raw_pid: bool, participant_ids: list[int] | None = None):
    """Every row of the export as a list of values in ``export_columns`` order, in its order.

    Four streams, each ordered by participant (arrival, id): the assignments, the answers, the
    preferences and the times of the submitted pages; one participant at a time is assembled
    from them. The participants, and the study's artworks, questions and descriptions, are read
    first (a row each); nothing else in Python grows with the study.
    """
    who = _exported(_participant_filter(study, include_test))
    owner = _exported(_participant_filter(study, include_test, "participant__"), "participant__")
    through = _exported(
        _participant_filter(study, include_test, "assignment__participant__"), "assignment__participant__"
    )
    if participant_ids is not None:
        who["id__in"] = participant_ids
        owner["participant_id__in"] = participant_ids
        through["assignment__participant_id__in"] = participant_ids
    artworks = {
        pk: (key, culture, _symbols(elements))
        for pk, key, culture, elements in Artwork.objects.filter(study=study).values_list(
            "id", "key", "culture", "elements"
        )
    }
    questions = {
        pk: (key, kind, symbol or None)
        for pk, key, kind, symbol in Question.objects.filter(artwork__study=study).values_list(
            "id", "key", "type", "symbol"
        )
    }
    descriptions = {
        pk: (key, speaker, model)
        for pk, key, speaker, model in Description.objects.filter(artwork__study=study).values_list(
            "id", "key", "speaker", "model"
        )
    }
    now = timezone.now()
    participants = {}
    for pk, pseudonym, group, status, is_test, last_seen_at, step_index, prolific_pid in (
        Participant.objects.filter(**who)
        .order_by("entered_at", "id")
        .values_list("id", "pseudonym", "group", "status", "is_test", "last_seen_at", "step_index", "prolific_pid")
    ):
        status = _effective_status(status, last_seen_at, step_index, now)
        participants[pk] = (str(pseudonym), _group(group), status, bool(is_test), prolific_pid)
    # Each participant's place in the order every stream follows.
    rank = {pk: position for position, pk in enumerate(participants)}
    chunk = EXPORT_CHUNK
    assignments = (
        Assignment.objects.filter(**owner)
        .order_by("participant__entered_at", "participant_id", "order")
        .values_list(
            "participant_id",
            "id",
            "order",
            "is_qc",
            "artwork_id",
            "shown_id",
            "left_id",
            "right_id",
            "symbols_pre",
            "symbols_post",
        )
        .iterator(chunk_size=chunk)
    )
    by_participant = ("assignment__participant__entered_at", "assignment__participant_id", "assignment_id", "id")
    answers = _Follower(
        Answer.objects.filter(**through)
        .order_by(*by_participant)
        .values_list(
            "assignment__participant_id",
            "assignment_id",
            "phase",
            "question_id",
            "choice",
            "is_correct",
            "confidence",
            "knew_before",
            "answered_at",
        )
        .iterator(chunk_size=chunk),
        rank,
    )
    preferences = _Follower(
        Preference.objects.filter(**through)
        .order_by(*by_participant)
        .values_list("assignment__participant_id", "assignment_id", "criterion", "side", "chosen_id", "answered_at")
        .iterator(chunk_size=chunk),
        rank,
    )
    # The time on each page, subtracted in the database: one value to read instead of two times.
    visits = _Follower(
        PageVisit.objects.filter(**owner, submitted_at__isnull=False)
        .order_by("participant__entered_at", "participant_id")
        .values_list(
            "participant_id",
            "step",
            ExpressionWrapper(F("submitted_at") - F("shown_at"), output_field=DurationField()),
        )
        .iterator(chunk_size=chunk),
        rank,
    )
    none = (None, None, None)
    for participant_id, rows in _grouped(assignments):
        if participant_id not in rank:
            continue
        position = rank[participant_id]
        pseudonym, group, status, is_test, prolific_pid = participants[participant_id]
        # Time on the page where each answer was given (first shown to submitted).
        seconds = {step: duration.total_seconds() for _, step, duration in visits.take(position)}
        answered = defaultdict(list)
        for row in answers.take(position):
            answered[row[1]].append(row)
        chosen = defaultdict(list)
        for row in preferences.take(position):
            chosen[row[1]].append(row)
        for (
            _participant,
            assignment_id,
            order,
            is_qc,
            artwork_id,
            shown_id,
            left_id,
            right_id,
            symbols_pre,
            symbols_post,
        ) in rows:
            artwork_key, culture, expected = artworks[artwork_id]
            shown_key, shown_speaker, shown_model = descriptions.get(shown_id, none)
            side = None
            if shown_id is not None:
                side = "left" if shown_id == left_id else "right" if shown_id == right_id else None
            base = [
                pseudonym,
                group,
                status,
                status != ParticipantStatus.COMPLETED,
                is_test,
                artwork_key,
                culture,
                culture == group,
                bool(is_qc),
                order,
                None,  # measure
                None,  # phase
                None,  # question_id
                None,  # question_type
                None,  # symbol
                None,  # criterion
                None,  # value
                None,  # correct
                None,  # confidence
                None,  # knew_before
                shown_key,
                shown_speaker,
                shown_model,
                side,
                descriptions.get(left_id, none)[0],
                descriptions.get(right_id, none)[0],
                None,  # answered_at
                None,  # page_seconds
            ]
            if raw_pid:
                base.append(prolific_pid)
            made = []
            for rank_of_row, field, phase, page in (
                (0, symbols_pre, Phase.PRE.value, "symbols"),
                (2, symbols_post, Phase.POST.value, "post_symbols"),
            ):
                if not isinstance(field, list):
                    continue
                row = base.copy()
                row[10:12] = ("symbols_pre" if rank_of_row == 0 else "symbols_post", phase)
                row[16] = "|".join(str(name) for name in field)
                row[17] = set(field) == expected
                row[27] = seconds.get(f"{order}:{page}")
                made.append((rank_of_row, "", row))
            for _, _, phase, question_id, choice, is_correct, confidence, knew_before, answered_at in answered.get(
                assignment_id, ()
            ):
                question_key, question_type, symbol = questions[question_id]
                row = base.copy()
                row[10:20] = (
                    "qa",
                    phase,
                    question_key,
                    question_type,
                    symbol,
                    None,
                    choice,
                    bool(is_correct),
                    int(confidence),
                    # Null where the question named no symbol: not asked, which is not "no".
                    None if knew_before is None else bool(knew_before),
                )
                row[26] = _iso(answered_at)
                row[27] = seconds.get(f"{order}:{'qa' if phase == Phase.PRE else 'post_qa'}")
                made.append((MEASURE_ORDER[f"qa_{phase}"], question_key, row))
            for _, _, criterion, side_chosen, chosen_id, answered_at in chosen.get(assignment_id, ()):
                key_chosen, speaker_chosen, model_chosen = descriptions.get(chosen_id, none)
                row = base.copy()
                row[10:12] = ("preference", "compare")
                row[15:17] = (criterion, side_chosen)
                row[20:24] = (key_chosen, speaker_chosen, model_chosen, side_chosen)
                row[26] = _iso(answered_at)
                row[27] = seconds.get(f"{order}:compare")
                tiebreak = str(CRITERIA.index(criterion)) if criterion in CRITERIA else "9"
                made.append((MEASURE_ORDER["preference"], tiebreak, row))
            made.sort(key=lambda item: item[:2])
            for _, _, row in made:
                yield row


def study_export_iter(*, study: Study, include_test: bool = False, raw_pid: bool = False):
    """One dict per answer, in order: each symbol selection, each multiple-choice answer (with its
    confidence and prior knowledge), each preference. Excluded sessions are kept and marked;
    previews never appear. The participant is the pseudonym unless ``raw_pid``."""
    columns = export_columns(raw_pid=raw_pid)
    for row in _export_lists(study=study, include_test=include_test, raw_pid=raw_pid):
        yield dict(zip(columns, row, strict=True))


def study_export_rows(*, study: Study, include_test: bool = False, raw_pid: bool = False) -> list[dict]:
    """``study_export_iter``'s rows as a list (small studies, tests)."""
    return list(study_export_iter(study=study, include_test=include_test, raw_pid=raw_pid))


def study_export_chunks(*, study: Study, include_test: bool = False, raw_pid: bool = False):
    """The long-format CSV as text chunks, the header first (even when there is no row): the
    text pandas' ``to_csv`` wrote for these rows (empty for None, ``True``/``False``, minimal quoting),
    with text cells a spreadsheet would run as formulas neutralised (core.csv_writer)."""
    writer = CsvWriter()
    writer.writerow(export_columns(raw_pid=raw_pid))
    rows = _export_lists(study=study, include_test=include_test, raw_pid=raw_pid)
    while True:
        batch = list(islice(rows, EXPORT_CHUNK))
        writer.writerows(batch)
        text = writer.take()
        if text:
            yield text
        if len(batch) < EXPORT_CHUNK:
            return


def study_export_csv(*, study: Study, include_test: bool = False, raw_pid: bool = False) -> str:
    """The long-format rows as CSV text (header even when there is no row)."""
    return "".join(study_export_chunks(study=study, include_test=include_test, raw_pid=raw_pid))


class StudyExportRows:
    """The export's rows as a sequence a paginator can count and slice without making them all.

    ``count()`` adds up each participant's rows in the database (a symbol row per stored
    selection, one per answer and per preference); a slice makes only the rows of the
    participants it spans.
    """

    def __init__(self, *, study: Study, include_test: bool = False, raw_pid: bool = False):
        self.study, self.include_test, self.raw_pid = study, include_test, raw_pid
        self._spans: list[tuple[int, int]] | None = None

    def _participant_rows(self) -> list[tuple[int, int]]:
        if self._spans is None:

            def count(queryset, by: str, rows):
                return Coalesce(
                    Subquery(
                        queryset.filter(**{by: OuterRef("pk")}).order_by().values(by).annotate(n=rows).values("n"),
                        output_field=IntegerField(),
                    ),
                    Value(0),
                )

            symbols = count(
                Assignment.objects.all(),
                "participant",
                Count("id", filter=Q(symbols_pre__isnull=False)) + Count("id", filter=Q(symbols_post__isnull=False)),
            )
            answers = count(Answer.objects.all(), "assignment__participant", Count("id"))
            chosen = count(Preference.objects.all(), "assignment__participant", Count("id"))
            self._spans = list(
                Participant.objects.filter(**_exported(_participant_filter(self.study, self.include_test)))
                .order_by("entered_at", "id")
                .annotate(rows=symbols + answers + chosen)
                .filter(rows__gt=0)
                .values_list("id", "rows")
            )
        return self._spans

    def count(self) -> int:
        return sum(rows for _, rows in self._participant_rows())

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index):
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("StudyExportRows takes a slice")
        start, stop, _ = index.indices(self.count())
        if stop <= start:
            return []
        ids, first, position = [], None, 0
        for participant_id, rows in self._participant_rows():
            if position + rows > start and position < stop:
                ids.append(participant_id)
                if first is None:
                    first = position
            position += rows
            if position >= stop:
                break
        columns = export_columns(raw_pid=self.raw_pid)
        lists = _export_lists(
            study=self.study, include_test=self.include_test, raw_pid=self.raw_pid, participant_ids=ids
        )
        return [dict(zip(columns, row, strict=True)) for row in islice(lists, start - first, stop - first)]
