"""The long-format export streamed from the database: byte for byte what the export wrote when it
loaded every answer into pandas and sorted the rows in Python (kept below as the reference), on a
study with every kind of row: excluded, returned and idle sessions, test participants, previews,
questions without a symbol (no prior-knowledge answer), answers with commas and quotes.
"""

import io
from datetime import timedelta

import pandas as pd
import pytest
from django.urls import reverse
from django.utils import timezone

from study.models import (
    Answer,
    Assignment,
    Criterion,
    Description,
    PageVisit,
    Participant,
    ParticipantStatus,
    Phase,
    Preference,
    Question,
    Speaker,
    Study,
)
from study.rules import UNFINISHED, participant_abandon_cutoff
from study.selectors.results import (
    EXPORT_COLUMNS,
    StudyExportRows,
    study_export_chunks,
    study_export_csv,
    study_export_rows,
)
from study.services.simulation import synthetic_responses_generate

from .factories import make_study, package_dict
from .test_results import _media, build_scenario  # noqa: F401

pytestmark = pytest.mark.django_db

CRITERIA = [choice.value for choice in Criterion]
UNASSIGNED = "unassigned"
MEASURE_ORDER = {"symbols_pre": 0, "qa_pre": 1, "symbols_post": 2, "qa_post": 3, "preference": 4}


# The reference: the export before it was streamed ------------------------------------------


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


def reference_rows(*, study: Study, include_test: bool = False, raw_pid: bool = False) -> list[dict]:
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


def _columns(*, raw_pid: bool = False) -> list[str]:
    return [*EXPORT_COLUMNS, "prolific_pid"] if raw_pid else list(EXPORT_COLUMNS)


def reference_csv(*, study: Study, include_test: bool = False, raw_pid: bool = False) -> str:
    """The long-format rows as CSV text (header even when there is no row)."""
    rows = reference_rows(study=study, include_test=include_test, raw_pid=raw_pid)
    # object dtype keeps integers integers (confidence would become 4.0 next to blanks).
    frame = pd.DataFrame(rows, columns=_columns(raw_pid=raw_pid), dtype=object)
    out = io.StringIO()
    frame.to_csv(out, index=False, lineterminator="\n")
    return out.getvalue()


# The streamed export -----------------------------------------------------------------------


@pytest.fixture
def study(_media):  # noqa: F811
    study = make_study(package_dict(slug="streamed"))
    build_scenario(study)
    # Answers with the characters CSV must quote, and a question that names no symbol.
    question = Question.objects.filter(artwork__study=study, artwork__key="am1").order_by("position").first()
    Question.objects.filter(pk=question.pk).update(answer='A "quoted" answer, with a comma', symbol="")
    Description.objects.filter(artwork__study=study, speaker=Speaker.BASE).update(model="")
    synthetic_responses_generate(study=study, n=6, seed=11, qc_fail_rate=0.34)
    # Someone who stopped half way, and a time on the second exactly (isoformat drops the fraction).
    half = Participant.objects.filter(study=study, is_test=True).order_by("id").first()
    Participant.objects.filter(pk=half.pk).update(status=ParticipantStatus.IN_PROGRESS)
    Answer.objects.filter(assignment__participant=half).update(
        answered_at=timezone.now().replace(microsecond=0) - timedelta(hours=1)
    )
    return study


@pytest.mark.parametrize("include_test", [False, True])
@pytest.mark.parametrize("raw_pid", [False, True])
def test_it_streams_the_csv_the_export_wrote_before(study, include_test, raw_pid):
    expected = reference_csv(study=study, include_test=include_test, raw_pid=raw_pid)
    assert expected.count("\n") > (150 if include_test else 40)
    assert study_export_csv(study=study, include_test=include_test, raw_pid=raw_pid) == expected
    assert study_export_rows(study=study, include_test=include_test, raw_pid=raw_pid) == reference_rows(
        study=study, include_test=include_test, raw_pid=raw_pid
    )


def test_it_sends_the_download_in_chunks_with_the_download_headers(study, researcher_client, monkeypatch):
    monkeypatch.setattr("study.selectors.results.EXPORT_CHUNK", 7)
    chunks = list(study_export_chunks(study=study, include_test=True))
    assert len(chunks) > 10 and "".join(chunks) == reference_csv(study=study, include_test=True)
    for url in (
        reverse("study:export", args=[study.slug]) + "?include_test=1&raw_pid=1",
        reverse("study_api:responses", args=[study.slug]) + "?format=csv&include_test=1&raw_pid=1",
    ):
        response = researcher_client.get(url)
        assert response.status_code == 200 and response.streaming
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert response["Content-Disposition"] == 'attachment; filename="streamed-responses.csv"'
        assert response["X-Content-Type-Options"] == "nosniff"
        assert "sandbox" in response["Content-Security-Policy"]
        body = b"".join(response.streaming_content).decode()
        assert body == reference_csv(study=study, include_test=True, raw_pid=True)


def test_it_pages_the_responses_as_the_whole_list_would(study, researcher_client):
    rows = reference_rows(study=study, include_test=True)
    lazy = StudyExportRows(study=study, include_test=True)
    assert lazy.count() == len(rows)
    for start, stop in [(0, 10), (3, 40), (len(rows) - 5, len(rows) + 10), (17, 17)]:
        assert lazy[start:stop] == rows[start:stop]
    url = reverse("study_api:responses", args=[study.slug]) + "?include_test=1&page_size=25"
    page = researcher_client.get(url + "&page=3").json()
    assert page["count"] == len(rows) and page["results"] == rows[50:75]
    assert "page=4" in page["next"] and "page=2" in page["previous"]
    assert researcher_client.get(url + "&page=999").status_code == 404
