"""The CLI contract: generate_test_responses then study_results, as checks outside the repo call them."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from study.models import Participant, ParticipantStatus

from .factories import make_study, package_dict

pytestmark = pytest.mark.django_db


def test_it_generates_test_responses_through_the_pages_and_reports_them_with_include_test():
    study = make_study(package_dict(quota_per_group=1))
    out = StringIO()
    call_command("generate_test_responses", study.slug, "--n", "6", "--seed", "7", "--qc-fail-rate", "0.5", stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert lines[-1] == f"6 test responses stored for {study.slug}"
    assert lines[-2].startswith("rate: ") and "participants per second" in lines[-2]
    assert Participant.objects.filter(is_test=True).count() == 6
    assert Participant.objects.filter(status=ParticipantStatus.EXCLUDED_QC).count() == 3

    default = StringIO()
    call_command("study_results", study.slug, "--format", "json", stdout=default)
    assert json.loads(default.getvalue())["participants"]["started"] == 0

    out = StringIO()
    call_command("study_results", study.slug, "--format", "json", "--include-test", stdout=out)
    results = json.loads(out.getvalue())
    assert results["participants"] == results["participants"] | {
        "started": 6,
        "completed": 3,
        "valid": 3,
        "excluded_qc": 3,
        "returned": 0,
    }
    for criterion in ("comprehension", "knowledge_gain", "prior_knowledge"):
        block = results["preferences"][criterion]
        assert block["n"] == 3 * 10 and 0 <= block["pragmatic_rate"] <= 1 and len(block["ci"]) == 2
    assert results["position_bias"]["n"] == 3 * 10 * 3
    for familiarity in ("familiar", "unfamiliar"):
        for phase in ("without", "with"):
            assert set(results["qa_accuracy"][familiarity][phase]) >= {"mean", "ci"}
    assert set(results["kendall"]) >= {"comprehension", "knowledge_gain", "prior_knowledge", "qa_gain"}

    csv_out = StringIO()
    call_command("study_results", study.slug, "--format", "csv", "--include-test", stdout=csv_out)
    lines = csv_out.getvalue().strip().splitlines()
    assert "participant" in lines[0] and len(lines) > 100


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope", "--n", "1"], "No study"),
        (["artworks", "--n", "0"], "at least 1"),
        (["artworks", "--n", "1", "--qc-fail-rate", "2"], "between 0 and 1"),
    ],
)
def test_it_refuses_bad_arguments_clearly(args, message):
    make_study()
    with pytest.raises(CommandError, match=message):
        call_command("generate_test_responses", *args, stdout=StringIO(), stderr=StringIO())
