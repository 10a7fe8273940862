"""The long-format export (one row per answer) and the study_results command."""

import io
import json

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from study.models import Answer, Participant, Preference
from study.selectors.results import EXPORT_COLUMNS, study_export_csv, study_export_rows

from .factories import make_study, package_dict
from .test_results import _media, build_scenario  # noqa: F401  (the fixture is used by name)

pytestmark = pytest.mark.django_db


@pytest.fixture
def scenario(_media):  # noqa: F811
    study = make_study(package_dict(slug="export-study"))
    build_scenario(study)
    return study


def test_it_writes_one_row_per_answer(scenario):
    rows = study_export_rows(study=scenario)
    by_measure = pd.DataFrame(rows)["measure"].value_counts().to_dict()
    # By hand: P1 picked symbols (before and after) on two artworks; P1–P4 answered, P9 and the preview do not count.
    real = Participant.objects.filter(study=scenario, is_preview=False, is_test=False)
    n_answers = Answer.objects.filter(assignment__participant__in=real).count()
    n_preferences = Preference.objects.filter(assignment__participant__in=real).count()
    assert n_answers == 4 + 4 + 2 + 4 + 4 + 4 + 4 + 2  # P1 (two artworks + QC), P2, P3, P4 (+ QC)
    assert n_preferences == 3 * 6
    assert by_measure == {"qa": n_answers, "preference": n_preferences, "symbols_pre": 2, "symbols_post": 2}
    assert len(rows) == n_answers + n_preferences + 4
    assert list(rows[0]) == EXPORT_COLUMNS


def test_it_carries_the_provenance_of_each_answer(scenario):
    rows = study_export_rows(study=scenario)
    p1 = str(Participant.objects.get(study=scenario, prolific_pid="P1").pseudonym)
    mine = [row for row in rows if row["participant"] == p1]
    # The session in the order it was answered: symbols, answers, symbols again, answers, choices.
    assert [row["measure"] for row in mine[:11]] == [
        "symbols_pre",
        "qa",
        "qa",
        "symbols_post",
        "qa",
        "qa",
        "preference",
        "preference",
        "preference",
        "symbols_pre",
        "qa",
    ]
    symbols = mine[0]
    assert symbols["value"] == "am1 symbol" and symbols["correct"] is True and symbols["phase"] == "pre"
    assert [row for row in mine if row["measure"] == "symbols_post" and row["artwork_id"] == "cn1"][0][
        "correct"
    ] is False
    qa = mine[1]
    assert qa["phase"] == "pre" and qa["question_id"] == "am1-q1" and qa["question_type"] == "attuned"
    assert qa["symbol"] == "am1 symbol" and qa["correct"] is False and qa["confidence"] == 2
    assert qa["knew_before"] is False and qa["answered_at"]
    # am1 showed the pragmatic description, which sat on the right (base was left).
    assert (qa["description_id"], qa["speaker"], qa["side"]) == ("am1-american-pragmatic", "pragmatic", "right")
    assert (qa["left_description_id"], qa["right_description_id"]) == ("am1-american-base", "am1-american-pragmatic")
    assert qa["description_model"] == "gemma-3" and qa["familiar"] is True and qa["order"] == 0
    choice = mine[6]
    assert (choice["criterion"], choice["phase"], choice["value"], choice["side"]) == (
        "comprehension",
        "compare",
        "right",
        "right",
    )
    assert choice["speaker"] == "pragmatic" and choice["description_id"] == "am1-american-pragmatic"
    prior = [row for row in mine[6:9] if row["criterion"] == "prior_knowledge"][0]
    assert prior["side"] == "left" and prior["speaker"] == "base"
    unfamiliar = [row for row in mine if row["artwork_id"] == "cn1"]
    assert all(row["familiar"] is False and row["artwork_culture"] == "chinese" for row in unfamiliar)
    qc = [row for row in mine if row["is_qc"]]
    assert len(qc) == 2 and all(row["description_id"] is None for row in qc)


def test_it_marks_excluded_sessions_and_hides_previews(scenario):
    frame = pd.DataFrame(study_export_rows(study=scenario))
    excluded = Participant.objects.get(study=scenario, prolific_pid="P4")
    mine = frame[frame["participant"] == str(excluded.pseudonym)]
    assert len(mine) and mine["excluded"].all() and set(mine["participant_status"]) == {"excluded_qc"}
    assert not frame[frame["participant_status"] == "completed"]["excluded"].any()
    preview = Participant.objects.get(study=scenario, is_preview=True)
    assert str(preview.pseudonym) not in set(frame["participant"])
    with_test = pd.DataFrame(study_export_rows(study=scenario, include_test=True))
    assert with_test["is_test"].sum() == 4 + 3 and not frame["is_test"].any()
    assert str(preview.pseudonym) not in set(with_test["participant"])


def test_it_uses_pseudonyms_unless_asked_for_raw_ids(scenario):
    text = study_export_csv(study=scenario)
    assert "P1" not in set(pd.read_csv(io.StringIO(text))["participant"])
    assert "prolific_pid" not in text.splitlines()[0].split(",")
    raw = pd.read_csv(io.StringIO(study_export_csv(study=scenario, raw_pid=True)))
    assert list(raw.columns) == [*EXPORT_COLUMNS, "prolific_pid"]
    assert set(raw["prolific_pid"]) == {"P1", "P2", "P3", "P4"}
    pseudonym = str(Participant.objects.get(study=scenario, prolific_pid="P2").pseudonym)
    assert set(raw.loc[raw["prolific_pid"] == "P2", "participant"]) == {pseudonym}


def test_it_writes_csv_that_reads_back(scenario):
    frame = pd.read_csv(io.StringIO(study_export_csv(study=scenario)))
    assert list(frame.columns) == EXPORT_COLUMNS
    assert len(frame) == len(study_export_rows(study=scenario))
    confidence = frame["confidence"].dropna()
    # Integers stay integers (no "4.0").
    assert set(confidence.astype(int)) == {2, 4}
    # Read as text: pandas would turn "4.0" back into 4 (a substring test of the whole file also
    # matched timestamps such as 08:52:14.046945).
    written = pd.read_csv(io.StringIO(study_export_csv(study=scenario)), dtype=str)["confidence"].dropna()
    assert set(written) == {"2", "4"}


def test_it_writes_a_header_for_an_empty_study(_media):  # noqa: F811
    study = make_study(package_dict(slug="nobody"))
    assert study_export_csv(study=study).strip() == ",".join(EXPORT_COLUMNS)


def test_it_prints_results_as_json_from_the_command(scenario, capsys):
    call_command("study_results", scenario.slug, "--format", "json")
    data = json.loads(capsys.readouterr().out)
    assert data["participants"]["valid"] == 3
    assert set(data["preferences"]) >= {"comprehension", "knowledge_gain", "prior_knowledge"}
    assert data["preferences"]["comprehension"]["pragmatic_rate"] == 0.8
    assert set(data["position_bias"]) >= {"left_rate", "n"}
    assert set(data["qa_accuracy"]["familiar"]) >= {"without", "with"}
    assert set(data["qa_accuracy"]["unfamiliar"]["with"]) >= {"mean", "ci"}
    assert "kendall" in data
    call_command("study_results", scenario.slug, "--format", "json", "--include-test")
    assert json.loads(capsys.readouterr().out)["participants"]["completed"] == 4


def test_it_prints_the_long_format_csv_from_the_command(scenario, capsys, tmp_path):
    call_command("study_results", scenario.slug, "--format", "csv")
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert len(frame) == len(study_export_rows(study=scenario)) and "prolific_pid" not in frame
    target = tmp_path / "out.csv"
    call_command(
        "study_results", scenario.slug, "--format", "csv", "--raw-pid", "--include-test", "--output", str(target)
    )
    written = pd.read_csv(target)
    assert "P9" in set(written["prolific_pid"]) and capsys.readouterr().out == ""


def test_it_names_an_unknown_slug(scenario):
    with pytest.raises(CommandError, match="no-such-study"):
        call_command("study_results", "no-such-study", "--format", "json")
