"""The corpus pages: datasets, exports and the import wizard, as each persona sees them."""

import csv
import io
import json
import re
import unicodedata
from html import unescape

import pandas as pd
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import services
from annotation.models import Dataset, Expression, ImportJob, ImportJobStatus

from .factories import client_for, make_dataset, make_researcher, text_of

HEADER = ["expression", "explanation", "kind", "traits", "theme", "region"]
ROWS = [
    [
        "Ăn quả nhớ kẻ trồng cây",
        "Hưởng thành quả thì phải nhớ ơn người đã gây dựng nên.",
        "proverb",
        "",
        "virtues",
        "Bắc Bộ",
    ],
    ["Nước chảy đá mòn", "Kiên trì bền bỉ thì việc khó mấy cũng làm được.", "idiom", "", "life_lessons", ""],
    [
        "Cấy thưa thừa thóc, cấy mau dốc bồ",
        "Kinh nghiệm cấy lúa: cấy thưa vừa phải thì được mùa.",
        "proverb",
        "folk_knowledge;1",
        "work_nature",
        "Nam Bộ",
    ],
    ["Tốt mẽ khoe màu", "Chê người chỉ chuộng vẻ bề ngoài.", "idiom", "pragmatic", "criticism", ""],
]


def csv_bytes(rows, header=HEADER) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def upload(name="tuc-ngu.csv", content=None):
    return SimpleUploadedFile(name, csv_bytes(ROWS) if content is None else content, content_type="text/csv")


@pytest.fixture
def tuc_ngu_dataset(researcher):
    """Four proverbs and idioms with a metadata column, imported and described by the researcher."""
    return make_dataset(
        name="Tục ngữ",
        csv=csv_bytes(ROWS).decode(),
        filename="seed.csv",
        user=researcher,
        description="Tục ngữ về lao động và đạo đức",
    )


def job_for(user, content=None, dataset_name="Tục ngữ") -> ImportJob:
    return services.import_job_create(
        dataset_name=dataset_name, filename="tuc-ngu.csv", content=content or csv_bytes(ROWS), user=user
    )


def table_rows(response) -> list[str]:
    rows = re.findall(r"<tr>(.*?)</tr>", response.content.decode(), re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", " ", row)).split()) for row in rows]


# --- who may open what ---------------------------------------------------------------------------------------------


def read_urls(tuc_ngu_dataset):
    return [
        reverse("annotation:dataset_list"),
        reverse("annotation:dataset_detail", args=[tuc_ngu_dataset.pk]),
        reverse("annotation:dataset_export", args=[tuc_ngu_dataset.pk]) + "?format=csv",
    ]


def import_get_urls(job):
    return [reverse("annotation:import_start"), reverse("annotation:import_detail", args=[job.pk])]


def import_post_urls(job):
    return [reverse("annotation:import_confirm", args=[job.pk]), reverse("annotation:import_cancel", args=[job.pk])]


def test_it_sends_anonymous_visitors_to_the_login_page(anonymous_client, tuc_ngu_dataset, researcher):
    job = job_for(researcher)
    for url in read_urls(tuc_ngu_dataset) + import_get_urls(job):
        response = anonymous_client.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith(reverse("login") + "?next="), url
    for url in import_post_urls(job):
        assert anonymous_client.post(url).status_code == 302, url
    assert ImportJob.objects.get(pk=job.pk).status == ImportJobStatus.PREVIEWED


def test_it_forbids_every_page_to_a_signed_in_user_without_a_role(outsider_client, tuc_ngu_dataset, researcher):
    job = job_for(researcher)
    for url in read_urls(tuc_ngu_dataset) + import_get_urls(job):
        response = outsider_client.get(url)
        assert response.status_code == 403, url
        assert "Your account has no role yet" in text_of(response)
    for url in import_post_urls(job):
        assert outsider_client.post(url).status_code == 403, url
    assert ImportJob.objects.get(pk=job.pk).status == ImportJobStatus.PREVIEWED


@pytest.mark.parametrize("persona", ["annotator_client", "adjudicator_client", "researcher_client"])
def test_it_lets_every_role_read_and_export_datasets(request, persona, tuc_ngu_dataset):
    client = request.getfixturevalue(persona)
    for url in read_urls(tuc_ngu_dataset):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("persona", ["annotator_client", "adjudicator_client"])
def test_it_keeps_the_import_pages_for_researchers(request, persona, researcher):
    client = request.getfixturevalue(persona)
    job = job_for(researcher)
    for url in import_get_urls(job):
        response = client.get(url)
        assert response.status_code == 403, url
        assert "Your role does not give access to this page" in text_of(response)
    for url in import_post_urls(job):
        assert client.post(url).status_code == 403, url
    assert ImportJob.objects.get(pk=job.pk).status == ImportJobStatus.PREVIEWED


def test_it_opens_the_import_pages_to_researchers(researcher_client, researcher):
    job = job_for(researcher)
    for url in import_get_urls(job):
        assert researcher_client.get(url).status_code == 200, url


def test_it_accepts_only_post_to_confirm_and_cancel(researcher_client, researcher):
    job = job_for(researcher)
    for url in import_post_urls(job):
        assert researcher_client.get(url).status_code == 405, url
    assert ImportJob.objects.get(pk=job.pk).status == ImportJobStatus.PREVIEWED


def test_it_answers_404_with_the_site_layout(researcher_client):
    response = researcher_client.get(reverse("annotation:dataset_detail", args=[999999]))
    assert response.status_code == 404
    assert "Page not found" in text_of(response)
    assert 'href="/static/css/vivid.css"' in response.content.decode()


# --- datasets ------------------------------------------------------------------------------------------------------


def test_it_lists_datasets_with_their_size_and_creator(annotator_client, tuc_ngu_dataset, researcher):
    services.dataset_create(name="Thành ngữ rỗng")
    response = annotator_client.get(reverse("annotation:dataset_list"))
    rows = table_rows(response)
    assert rows[0] == "Name Description Expressions Created by Created"
    assert rows[1].startswith("Thành ngữ rỗng — 0 —")
    assert rows[2].startswith("Tục ngữ Tục ngữ về lao động và đạo đức 4 researcher")
    assert reverse("annotation:dataset_detail", args=[tuc_ngu_dataset.pk]) in response.content.decode()
    # Importing is a researcher's job: an annotator is not offered it.
    assert reverse("annotation:import_start") not in response.content.decode()


def test_it_shows_a_dataset_with_kinds_traits_and_themes(researcher_client, tuc_ngu_dataset):
    response = researcher_client.get(reverse("annotation:dataset_detail", args=[tuc_ngu_dataset.pk]))
    rows = table_rows(response)
    assert rows[0] == "Expression Explanation Kind Traits Theme"
    assert rows[1] == "Ăn quả nhớ kẻ trồng cây Hưởng thành quả thì phải nhớ ơn người đã gây dựng nên. Proverb — Virtues"
    assert rows[3] == (
        "Cấy thưa thừa thóc, cấy mau dốc bồ Kinh nghiệm cấy lúa: cấy thưa vừa phải thì được mùa. "
        "Proverb Literal expression Folk knowledge Work and nature"
    )
    page = text_of(response)
    assert "Showing 1–4 of 4 expressions" in page
    html = response.content.decode()
    export = reverse("annotation:dataset_export", args=[tuc_ngu_dataset.pk])
    assert f'href="{export}?format=csv"' in html and f'href="{export}?format=jsonl"' in html
    assert f'href="{reverse("annotation:import_start")}?dataset=T%E1%BB%A5c%20ng%E1%BB%AF"' in html
    assert 'hx-trigger="input delay:300ms, submit"' in html and 'hx-push-url="true"' in html


def test_it_offers_import_into_a_dataset_only_to_researchers(annotator_client, tuc_ngu_dataset):
    response = annotator_client.get(reverse("annotation:dataset_detail", args=[tuc_ngu_dataset.pk]))
    assert "Import into this dataset" not in text_of(response)
    assert "Export CSV" in text_of(response)


def test_it_returns_only_the_table_to_htmx(researcher_client, tuc_ngu_dataset):
    url = reverse("annotation:dataset_detail", args=[tuc_ngu_dataset.pk])
    response = researcher_client.get(url, {"q": "nước"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and "<form" not in html and '<nav aria-label="Main"' not in html
    assert [row.split(" ")[0:4] for row in table_rows(response)[1:]] == [["Nước", "chảy", "đá", "mòn"]]
    assert "Showing 1–1 of 1 expression (filtered from 4)" in text_of(response)
    assert "HX-Request" in response["Vary"]


def test_it_returns_the_full_page_when_htmx_restores_history(researcher_client, tuc_ngu_dataset):
    url = reverse("annotation:dataset_detail", args=[tuc_ngu_dataset.pk])
    response = researcher_client.get(
        url, {"q": "nước"}, headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )
    html = response.content.decode()
    assert "<html" in html and "<search>" in html
    # The filter survives the reload: the search box is filled in.
    assert 'value="nước"' in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Vietnamese letters match whatever their case, and typed decomposed (NFD) or not.
        ({"q": "NƯỚC CHẢY"}, ["Nước chảy đá mòn"]),
        ({"q": unicodedata.normalize("NFD", "ăn quả")}, ["Ăn quả nhớ kẻ trồng cây"]),
        ({"q": "Kiên trì"}, ["Nước chảy đá mòn"]),
        ({"trait": "folk_knowledge"}, ["Cấy thưa thừa thóc, cấy mau dốc bồ"]),
        ({"trait": "pragmatic", "kind": "idiom"}, ["Tốt mẽ khoe màu"]),
        ({"theme": "virtues"}, ["Ăn quả nhớ kẻ trồng cây"]),
        ({"kind": "proverb"}, ["Ăn quả nhớ kẻ trồng cây", "Cấy thưa thừa thóc, cấy mau dốc bồ"]),
        ({"kind": "idiom", "theme": "virtues"}, []),
        # A stale link with a trait that no longer exists shows everything instead of an error.
        ({"trait": "no-such-trait"}, [r[0] for r in ROWS]),
    ],
)
def test_it_filters_expressions(researcher_client, tuc_ngu_dataset, query, expected):
    response = researcher_client.get(reverse("annotation:dataset_detail", args=[tuc_ngu_dataset.pk]), query)
    assert response.status_code == 200
    shown = re.findall(r'<th scope="row" lang="vi">(.*?)</th>', response.content.decode())
    assert shown == expected
    if not expected:
        assert "No expression matches these filters." in text_of(response)


def test_it_pages_through_a_large_dataset_keeping_the_filters(researcher_client, researcher):
    rows = [[f"Câu số {n:03d}", f"Giải thích {n}", "idiom", "", "", ""] for n in range(120)]
    big = make_dataset(name="Lớn", csv=csv_bytes(rows).decode(), filename="big.csv", user=researcher)
    url = reverse("annotation:dataset_detail", args=[big.pk])
    response = researcher_client.get(url, {"kind": "idiom", "page": 2})
    shown = re.findall(r'<th scope="row" lang="vi">(.*?)</th>', response.content.decode())
    assert shown[0] == "Câu số 050" and shown[-1] == "Câu số 099" and len(shown) == 50
    page = text_of(response)
    assert "Showing 51–100 of 120 expressions" in page and "Page 2 of 3" in page
    html = response.content.decode()
    assert 'href="?kind=idiom&amp;page=3"' in html and 'href="?kind=idiom&amp;page=1"' in html


def test_it_exports_csv_that_pandas_reads(adjudicator_client, tuc_ngu_dataset):
    response = adjudicator_client.get(
        reverse("annotation:dataset_export", args=[tuc_ngu_dataset.pk]), {"format": "csv"}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment;")
    assert "filename*=utf-8''T%E1%BB%A5c%20ng%E1%BB%AF.csv" in response["Content-Disposition"]
    frame = pd.read_csv(io.StringIO(response.content.decode("utf-8")))
    assert list(frame["expression"]) == [r[0] for r in ROWS]
    assert frame.loc[2, "traits"] == "literal,folk_knowledge"
    assert frame.loc[0, "region"] == "Bắc Bộ"


def test_it_exports_jsonl_that_pandas_reads(adjudicator_client, tuc_ngu_dataset):
    response = adjudicator_client.get(
        reverse("annotation:dataset_export", args=[tuc_ngu_dataset.pk]), {"format": "jsonl"}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert "T%E1%BB%A5c%20ng%E1%BB%AF.jsonl" in response["Content-Disposition"]
    frame = pd.read_json(io.StringIO(response.content.decode("utf-8")), lines=True)
    assert list(frame["expression"]) == [r[0] for r in ROWS]
    assert frame.loc[2, "traits"] == ["literal", "folk_knowledge"]
    assert frame.loc[3, "theme"] == "criticism"


def test_it_gives_a_plain_filename_to_an_ascii_dataset(annotator_client, researcher):
    ascii_named = make_dataset(name="idioms-2024", csv=csv_bytes(ROWS[:1]).decode(), filename="a.csv", user=researcher)
    response = annotator_client.get(reverse("annotation:dataset_export", args=[ascii_named.pk]), {"format": "jsonl"})
    assert response["Content-Disposition"] == 'attachment; filename="idioms-2024.jsonl"'
    assert json.loads(response.content.decode().splitlines()[0])["expression"] == "Ăn quả nhớ kẻ trồng cây"


@pytest.mark.parametrize("fmt", ["xlsx", "", "CSV"])
def test_it_refuses_an_unknown_export_format(annotator_client, tuc_ngu_dataset, fmt):
    response = annotator_client.get(reverse("annotation:dataset_export", args=[tuc_ngu_dataset.pk]), {"format": fmt})
    assert response.status_code == 400
    assert response.content.decode() == f"Unknown export format “{fmt}”; use ?format=csv or ?format=jsonl."


# --- the import wizard ---------------------------------------------------------------------------------------------


def test_it_prefills_the_upload_form(researcher_client, tuc_ngu_dataset):
    response = researcher_client.get(reverse("annotation:import_start"), {"dataset": "Tục ngữ"})
    html = response.content.decode()
    assert 'name="dataset_name" value="Tục ngữ"' in html
    assert 'list="dataset-names"' in html and '<option value="Tục ngữ"></option>' in html
    assert 'accept=".csv,.tsv,.json,.jsonl,.xlsx"' in html
    for fieldname in services.KNOWN_FIELDS:
        assert f'name="map_{fieldname}"' in html
    page = text_of(response)
    assert "Trait codes or numbers separated by commas or semicolons" in page
    assert "Any other column is kept with each expression as metadata" in page


def test_it_imports_through_the_whole_wizard(researcher_client, eager, django_capture_on_commit_callbacks):
    response = researcher_client.post(
        reverse("annotation:import_start"), {"dataset_name": "  Ca dao mới ", "file": upload()}
    )
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response.url == reverse("annotation:import_detail", args=[job.pk])
    assert job.dataset_name == "Ca dao mới" and job.status == ImportJobStatus.PREVIEWED
    assert not Dataset.objects.filter(name="Ca dao mới").exists()

    preview = researcher_client.get(response.url)
    page = text_of(preview)
    assert "4 rows read" in page and "4 expressions will be created" in page and "0 duplicates will be skipped" in page
    assert "Columns kept as metadata: region" in page
    assert "First 4 rows to be imported" in page
    rows = table_rows(preview)
    assert rows[0] == "Row Expression Explanation Kind Traits Theme Metadata"
    assert rows[3].startswith("4 Cấy thưa thừa thóc, cấy mau dốc bồ") and rows[3].endswith(
        "Proverb Literal expression Folk knowledge Work and nature region : Nam Bộ"
    )
    assert 'hx-trigger="every 1s"' not in preview.content.decode()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        confirmed = researcher_client.post(reverse("annotation:import_confirm", args=[job.pk]))
    # The job queued once; the other callbacks retire cached counts of the dataset (core.stamps).
    assert len([c for c in callbacks if "import_job" in c.__qualname__]) == 1
    assert confirmed.status_code == 302 and confirmed.url == reverse("annotation:import_detail", args=[job.pk])

    job.refresh_from_db()
    assert job.status == ImportJobStatus.DONE
    done = researcher_client.get(confirmed.url)
    page = text_of(done)
    assert "Created 4 expressions, skipped 0 duplicates." in page
    assert "created 4, skipped_duplicates 0" in page
    assert 'hx-trigger="every 1s"' not in done.content.decode()
    dataset = Dataset.objects.get(name="Ca dao mới")
    assert dataset.created_by.username == "researcher"
    assert reverse("annotation:dataset_detail", args=[dataset.pk]) in done.content.decode()

    listing = researcher_client.get(reverse("annotation:dataset_detail", args=[dataset.pk]))
    shown = re.findall(r'<th scope="row" lang="vi">(.*?)</th>', listing.content.decode())
    assert shown == [r[0] for r in ROWS]


def test_it_lists_duplicates_before_confirming(researcher_client, tuc_ngu_dataset):
    rows = [
        ROWS[0],
        ["nước  chảy ĐÁ mòn", "Trùng", "idiom", "", "", ""],
        ["Mới tinh", "Câu mới", "", "", "", ""],
        ["Mới  tinh", "Lặp", "", "", "", ""],
    ]
    response = researcher_client.post(
        reverse("annotation:import_start"),
        {"dataset_name": "Tục ngữ", "file": upload(content=csv_bytes(rows))},
        follow=True,
    )
    page = text_of(response)
    assert "1 expression will be created" in page and "3 duplicates will be skipped" in page
    assert "Duplicates that will be skipped" in page
    assert "2 Ăn quả nhớ kẻ trồng cây already in the dataset" in table_rows(response)
    assert "5 Mới tinh same as row 4 of this file" in table_rows(response)


def test_it_maps_columns_with_other_names(researcher_client):
    content = csv_bytes([["Nước chảy đá mòn", "Kiên trì thì thành công."]], header=["Thành ngữ", "Nghĩa"])
    response = researcher_client.post(
        reverse("annotation:import_start"),
        {
            "dataset_name": "Ánh xạ",
            "file": upload(content=content),
            "map_expression": "thành ngữ",
            "map_explanation": "Nghĩa",
        },
        follow=True,
    )
    job = ImportJob.objects.get()
    assert job.column_map == {"expression": "thành ngữ", "explanation": "Nghĩa"}
    assert job.status == ImportJobStatus.PREVIEWED
    assert "1 expression will be created" in text_of(response)


def test_it_shows_row_and_column_errors_and_writes_nothing(
    researcher_client, tuc_ngu_dataset, eager, django_capture_on_commit_callbacks
):
    before = (Dataset.objects.count(), Expression.objects.count())
    rows = [ROWS[0], ["", "Thiếu câu", "idiom", "", "", ""], ["Câu lạ", "Có đặc điểm lạ", "riddle", "magic", "", ""]]
    response = researcher_client.post(
        reverse("annotation:import_start"),
        {"dataset_name": "Lỗi", "file": upload(content=csv_bytes(rows))},
        follow=True,
    )
    job = ImportJob.objects.get()
    assert job.status == ImportJobStatus.FAILED
    page = text_of(response)
    assert "The file cannot be imported" in page and "Nothing was written." in page
    rows_shown = table_rows(response)
    assert rows_shown[0] == "Row Column Problem"
    assert "3 expression the expression is empty" in rows_shown
    assert "4 kind unknown kind 'riddle' (use idiom or proverb)" in rows_shown
    assert any(row.startswith("4 traits unknown trait 'magic'") for row in rows_shown)
    assert "Confirm import" not in page
    assert f"{reverse('annotation:import_start')}?dataset=L%E1%BB%97i" in response.content.decode()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        refused = researcher_client.post(reverse("annotation:import_confirm", args=[job.pk]), follow=True)
    assert callbacks == []
    assert "This import can no longer be confirmed (status: failed); upload the file again." in text_of(refused)
    assert (Dataset.objects.count(), Expression.objects.count()) == before


def test_it_reports_a_missing_column_for_the_whole_file(researcher_client):
    content = csv_bytes([["Nước chảy đá mòn"]], header=["expression"])
    response = researcher_client.post(
        reverse("annotation:import_start"), {"dataset_name": "Thiếu", "file": upload(content=content)}, follow=True
    )
    assert any(row.startswith("whole file explanation required column is missing") for row in table_rows(response))


def test_it_refuses_an_unsupported_file_on_the_form(researcher_client):
    response = researcher_client.post(
        reverse("annotation:import_start"), {"dataset_name": "Tục ngữ", "file": upload(name="notes.txt")}
    )
    assert response.status_code == 200
    assert "“notes.txt” is not a supported file; use one of .csv, .tsv, .json, .jsonl, .xlsx." in text_of(response)
    assert 'aria-invalid="true"' in response.content.decode()
    assert not ImportJob.objects.exists()


def test_it_requires_a_dataset_name_and_a_file(researcher_client):
    response = researcher_client.post(reverse("annotation:import_start"), {"dataset_name": "   "})
    assert response.status_code == 200
    assert text_of(response).count("This field is required.") == 2
    assert not ImportJob.objects.exists()


def test_it_imports_once_when_confirmed_twice(researcher_client, researcher, eager, django_capture_on_commit_callbacks):
    job = job_for(researcher, dataset_name="Hai lần")
    url = reverse("annotation:import_confirm", args=[job.pk])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        first = researcher_client.post(url)
        second = researcher_client.post(url)
    assert len([c for c in callbacks if "import_job" in c.__qualname__]) == 1
    assert first.status_code == second.status_code == 302
    assert Expression.objects.filter(dataset__name="Hai lần").count() == 4
    job.refresh_from_db()
    assert job.status == ImportJobStatus.DONE and job.report["created"] == 4


def test_it_polls_while_the_import_is_queued(researcher_client, researcher):
    job = job_for(researcher)
    # No commit callbacks run in this test, so the job stays queued as if the worker were busy.
    researcher_client.post(reverse("annotation:import_confirm", args=[job.pk]))
    url = reverse("annotation:import_detail", args=[job.pk])
    fragment = researcher_client.get(url, headers={"HX-Request": "true"})
    html = fragment.content.decode()
    assert html.lstrip().startswith('<section id="job-status" data-status="queued"')
    assert f'hx-get="{url}" hx-trigger="every 1s"' in html
    assert "<html" not in html and "Importing… This page updates by itself." in text_of(fragment)

    services.import_job_run(job_id=job.pk)
    finished = researcher_client.get(url, headers={"HX-Request": "true"})
    assert 'data-status="done"' in finished.content.decode()
    assert "hx-trigger" not in finished.content.decode()
    assert "Created 4 expressions" in text_of(finished)


def test_it_cancels_a_previewed_import(researcher_client, researcher, django_capture_on_commit_callbacks):
    job = job_for(researcher, dataset_name="Huỷ")
    response = researcher_client.post(reverse("annotation:import_cancel", args=[job.pk]), follow=True)
    assert "Import cancelled" in text_of(response)
    job.refresh_from_db()
    assert job.status == ImportJobStatus.CANCELLED
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        refused = researcher_client.post(reverse("annotation:import_confirm", args=[job.pk]), follow=True)
    assert callbacks == []
    assert "This import can no longer be confirmed (status: cancelled)" in text_of(refused)
    assert not Dataset.objects.filter(name="Huỷ").exists()


def test_it_cannot_cancel_a_confirmed_import(researcher_client, researcher):
    job = job_for(researcher)
    researcher_client.post(reverse("annotation:import_confirm", args=[job.pk]))
    response = researcher_client.post(reverse("annotation:import_cancel", args=[job.pk]), follow=True)
    assert "This import was already confirmed and can no longer be cancelled." in text_of(response)
    job.refresh_from_db()
    assert job.status == ImportJobStatus.QUEUED


def test_it_hides_my_import_from_another_researcher(researcher, tuc_ngu_dataset):
    job = job_for(researcher)
    other = client_for(make_researcher("researcher_2"))
    assert other.get(reverse("annotation:import_detail", args=[job.pk])).status_code == 404
    for url in import_post_urls(job):
        assert other.post(url).status_code == 404, url
    job.refresh_from_db()
    assert job.status == ImportJobStatus.PREVIEWED

    admin = client_for(User.objects.create_superuser("root", "root@example.org", "x-long-password-1"))
    assert admin.get(reverse("annotation:import_detail", args=[job.pk])).status_code == 200


# --- languages -----------------------------------------------------------------------------------------------------


def test_it_switches_the_pages_to_vietnamese(researcher_client, tuc_ngu_dataset):
    url = reverse("annotation:dataset_detail", args=[tuc_ngu_dataset.pk])
    response = researcher_client.post(reverse("set_language"), {"language": "vi", "next": url})
    assert response.status_code == 302 and response.url == url

    page = text_of(researcher_client.get(url))
    assert "Xuất CSV" in page and "Nhập vào bộ dữ liệu này" in page and "Tìm kiếm" in page
    # Trait and theme names come from the taxonomy's Vietnamese columns.
    assert "Kinh nghiệm dân gian" in page and "Sản xuất, lao động và thiên nhiên" in page
    assert "Folk knowledge" not in page and "Export CSV" not in page
    assert '<html lang="vi" data-theme="light">' in researcher_client.get(url).content.decode()

    home = text_of(researcher_client.get(reverse("home")))
    assert "Nhà nghiên cứu" in home and "Researcher" not in home

    researcher_client.post(reverse("set_language"), {"language": "en", "next": url})
    assert "Export CSV" in text_of(researcher_client.get(url))


def test_it_shows_the_import_wizard_in_vietnamese(researcher_client, researcher):
    researcher_client.post(reverse("set_language"), {"language": "vi", "next": "/"})
    job = job_for(researcher)
    page = text_of(researcher_client.get(reverse("annotation:import_detail", args=[job.pk])))
    assert "Xác nhận nhập" in page and "Sẽ tạo 4 câu" in page
