"""Importing into a dataset whose name only looks like an existing one (issue 12, item 3)."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Dataset, Expression, ImportJob, ImportJobStatus
from annotation.selectors import dataset_name_key, dataset_near_matches
from annotation.services import (
    dataset_create,
    expression_import,
    import_job_confirm,
    import_job_create,
    import_job_retarget,
)

from .factories import api_client_for

pytestmark = pytest.mark.django_db

CSV = "expression,explanation\nĂn quả nhớ kẻ trồng cây,Biết ơn người đi trước\n"


@pytest.fixture
def vivid_v1(researcher):
    return dataset_create(name="VIVID v1", user=researcher)


def run_import(path, dataset, *extra):
    out = io.StringIO()
    call_command("import_expressions", str(path), "--dataset", dataset, *extra, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def csv_file(tmp_path):
    path = tmp_path / "idioms.csv"
    path.write_text(CSV, encoding="utf-8")
    return path


# --- The selector -----------------------------------------------------------------


def test_it_reads_names_without_accents_case_or_spacing():
    assert dataset_name_key("  Tục   NGỮ  ") == dataset_name_key("tuc ngu")
    assert dataset_name_key("Đồng dao") == "dong dao"


@pytest.mark.parametrize("typed", ["vivid v1 ", "VIVID  v1", "vivid v1", "Vívid V1", "VIVID-v1", "VIVD v1"])
def test_it_offers_the_dataset_a_name_only_looks_like(vivid_v1, typed):
    assert dataset_near_matches(name=typed) == [vivid_v1]


def test_it_offers_nothing_for_an_exact_name_or_an_unrelated_one(vivid_v1):
    dataset_create(name="Ca dao")
    assert dataset_near_matches(name="VIVID v1") == []
    assert dataset_near_matches(name="Thành ngữ Việt") == []
    assert dataset_near_matches(name="  ") == []


def test_it_lists_the_same_key_before_a_typo(vivid_v1):
    typo = dataset_create(name="VIVID v2")
    assert dataset_near_matches(name="vivid v1 ") == [vivid_v1, typo]


# --- The service and its report ---------------------------------------------------


def test_it_reports_a_new_dataset_with_its_look_alikes(vivid_v1):
    report = expression_import(dataset_name="vivid v1", filename="a.csv", content=CSV.encode(), dry_run=True)
    assert report.new_dataset is True and report.near_matches == ["VIVID v1"]
    same = expression_import(dataset_name=" VIVID v1 ", filename="a.csv", content=CSV.encode(), dry_run=True)
    assert same.new_dataset is False and same.near_matches == []


def test_it_moves_a_previewed_import_into_the_chosen_dataset(vivid_v1, researcher):
    job = import_job_create(dataset_name="vivid v1 ", filename="a.csv", content=CSV.encode(), user=researcher)
    assert job.report["new_dataset"] is True and job.report["near_matches"] == ["VIVID v1"]
    job = import_job_retarget(job=job, dataset_name="VIVID v1", user=researcher)
    assert job.dataset_name == "VIVID v1" and job.status == ImportJobStatus.PREVIEWED
    assert job.report["new_dataset"] is False and job.report["created"] == 1


def test_it_refuses_to_move_an_import_already_confirmed(vivid_v1, researcher, django_capture_on_commit_callbacks):
    job = import_job_create(dataset_name="vivid v1", filename="a.csv", content=CSV.encode(), user=researcher)
    with django_capture_on_commit_callbacks(execute=False):
        import_job_confirm(job=job, user=researcher)
    with pytest.raises(Exception, match="can no longer change its dataset"):
        import_job_retarget(job=job, dataset_name="VIVID v1", user=researcher)
    job.refresh_from_db()
    assert job.dataset_name == "vivid v1" and job.status == ImportJobStatus.QUEUED


# --- The preview page ---------------------------------------------------------------


def test_it_warns_on_the_preview_and_imports_into_the_chosen_near_match(
    vivid_v1, researcher_client, eager, django_capture_on_commit_callbacks
):
    upload = SimpleUploadedFile("a.csv", CSV.encode(), content_type="text/csv")
    started = researcher_client.post(reverse("annotation:import_start"), {"dataset_name": "vivid v1 ", "file": upload})
    job = ImportJob.objects.get()
    html = researcher_client.get(started.url).content.decode()
    assert "this import will create a new dataset" in html
    assert 'name="dataset" value="VIVID v1"' in html

    moved = researcher_client.post(reverse("annotation:import_retarget", args=[job.pk]), {"dataset": "VIVID v1"})
    assert moved.status_code == 302 and moved.url == reverse("annotation:import_detail", args=[job.pk])
    assert "this import will create a new dataset" not in researcher_client.get(moved.url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(reverse("annotation:import_confirm", args=[job.pk]))
    assert list(Dataset.objects.values_list("name", flat=True)) == ["VIVID v1"]
    assert Expression.objects.get().dataset == vivid_v1


def test_it_says_nothing_about_a_new_dataset_when_the_name_exists(vivid_v1, researcher_client):
    upload = SimpleUploadedFile("a.csv", CSV.encode(), content_type="text/csv")
    started = researcher_client.post(reverse("annotation:import_start"), {"dataset_name": "VIVID v1", "file": upload})
    assert "will create a new dataset" not in researcher_client.get(started.url).content.decode()


def test_it_moves_an_import_only_into_an_existing_dataset(vivid_v1, researcher, researcher_client):
    job = import_job_create(dataset_name="vivid v1", filename="a.csv", content=CSV.encode(), user=researcher)
    response = researcher_client.post(reverse("annotation:import_retarget", args=[job.pk]), {"dataset": "Nowhere"})
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.dataset_name == "vivid v1"


# --- The command line ---------------------------------------------------------------


@pytest.mark.parametrize("extra", [(), ("--dry-run",)])
def test_it_prints_that_a_new_dataset_will_be_created_and_the_look_alike(vivid_v1, tmp_path, extra):
    out = run_import(csv_file(tmp_path), "vivid v1 ", *extra)
    assert 'new dataset "vivid v1" will be created' in out
    assert '"VIVID v1"' in out
    assert out.strip().splitlines()[-1] == "created 1, skipped_duplicates 0"


def test_it_prints_no_new_dataset_line_for_an_existing_name(vivid_v1, tmp_path):
    assert "new dataset" not in run_import(csv_file(tmp_path), "VIVID v1", "--dry-run")


@pytest.mark.parametrize("command", ["import_suggestions", "import_annotations"])
def test_it_names_the_look_alike_when_another_importer_finds_no_dataset(vivid_v1, tmp_path, command):
    extra = ["--name", "s", "--model", "m"] if command == "import_suggestions" else ["--round", "r"]
    with pytest.raises(CommandError, match="no dataset named 'vivid v1'. Did you mean 'VIVID v1'?"):
        call_command(command, str(csv_file(tmp_path)), "--dataset", "vivid v1", *extra)


# --- The API --------------------------------------------------------------------------


def api_import(client, dataset, dry_run=True):
    upload = SimpleUploadedFile("a.csv", CSV.encode(), content_type="text/csv")
    return client.post(
        reverse("api:import"), {"dataset": dataset, "file": upload, "dry_run": dry_run}, format="multipart"
    )


def test_it_answers_a_dry_run_with_new_dataset_and_near_matches(vivid_v1, researcher):
    client = api_client_for(researcher)
    answer = api_import(client, "vivid v1 ")
    assert answer.status_code == 200
    assert answer.json()["new_dataset"] is True and answer.json()["near_matches"] == ["VIVID v1"]
    answer = api_import(client, "VIVID v1")
    assert answer.json()["new_dataset"] is False and answer.json()["near_matches"] == []
    assert not Expression.objects.exists()


def test_it_declares_new_dataset_and_near_matches_in_the_schema(researcher_client):
    schema = researcher_client.get(reverse("api-schema"), {"format": "json"}).json()
    report = schema["components"]["schemas"]["ImportReport"]
    assert report["properties"]["new_dataset"]["type"] == "boolean"
    assert report["properties"]["near_matches"]["items"]["type"] == "string"
    assert {"new_dataset", "near_matches"} <= set(report["required"])
