"""A researcher imports Vietnamese idioms through the browser, from sign-in to the dataset page."""

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Expression, ImportJob, ImportJobStatus
from core.roles import RESEARCHER
from tests.conftest import PASSWORD, make_user

# The live server reads the database from another thread, so the test cannot
# hide inside a transaction; serialized_rollback restores the taxonomy and role
# groups of the data migration that an earlier transactional test may have flushed.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CSV = (
    "expression,explanation,kind,traits,theme,vùng miền\n"
    "Nước chảy đá mòn,Kiên trì bền bỉ thì việc khó mấy cũng làm được.,idiom,,life_lessons,\n"
    '"Cấy thưa thừa thóc, cấy mau dốc bồ",Kinh nghiệm cấy lúa: cấy thưa vừa phải thì được mùa.,proverb,"folk_knowledge;1",work_nature,Nam Bộ\n'
    "Tốt mẽ khoe màu,Chê người chỉ chuộng vẻ bề ngoài.,idiom,pragmatic,criticism,\n"
    "Nước  chảy ĐÁ mòn,Dòng lặp lại để kiểm tra việc bỏ qua câu trùng.,idiom,,,\n"
).encode()


def test_it_imports_a_csv_from_upload_to_the_dataset_page(page, live_server, eager):
    make_user("linh", RESEARCHER)
    base = live_server.url

    page.goto(base + "/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    page.get_by_label("Username:", exact=True).fill("linh")
    page.get_by_label("Password:", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Researcher")).to_be_visible()

    page.get_by_role("link", name="Import", exact=True).click()
    expect(page.get_by_role("heading", name="Import expressions")).to_be_visible()
    page.get_by_label("Dataset:", exact=True).fill("Thành ngữ thử")
    page.get_by_label("File:", exact=True).set_input_files(
        {"name": "thanh-ngu.csv", "mimeType": "text/csv", "buffer": CSV}
    )
    page.get_by_role("button", name="Upload and preview").click()

    expect(page.get_by_role("heading", name="Preview")).to_be_visible()
    status = page.locator("#job-status")
    expect(status).to_contain_text("4 rows read")
    expect(status).to_contain_text("3 expressions will be created")
    expect(status).to_contain_text("1 duplicate will be skipped")
    expect(status).to_contain_text("same as row 2 of this file")
    expect(status).to_contain_text("Columns kept as metadata: vùng miền")
    expect(status.get_by_role("row", name=re.compile("Cấy thưa thừa thóc"))).to_contain_text(
        "Literal expression Folk knowledge"
    )
    page.screenshot(path="/tmp/vivid-import-preview.png", full_page=True)
    assert Expression.objects.count() == 0

    page.get_by_role("button", name="Confirm import").click()
    expect(page.get_by_role("heading", name="Import finished")).to_be_visible()
    expect(status).to_contain_text("Created 3 expressions, skipped 1 duplicate.")
    job = ImportJob.objects.get()
    assert job.status == ImportJobStatus.DONE

    page.get_by_role("button", name="Open the dataset “Thành ngữ thử”").click()
    table = page.locator("#expression-table")
    expect(table.locator("tbody tr")).to_have_count(3)
    expect(table).to_contain_text("Showing 1–3 of 3 expressions")
    expect(table.get_by_role("row", name=re.compile("Tốt mẽ khoe màu"))).to_contain_text("Pragmatic nuance")
    page.screenshot(path="/tmp/vivid-dataset.png", full_page=True)

    # Typing filters the table in place and records the filter in the address bar.
    dataset_url = page.url
    page.get_by_label("Search:", exact=True).fill("nước chảy")
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"\?q=n%C6%B0%E1%BB%9Bc(\+|%20)ch%E1%BA%A3y"))
    expect(table).to_contain_text("(filtered from 3)")
    page.reload()
    expect(page.get_by_label("Search:", exact=True)).to_have_value("nước chảy")
    expect(table.locator("tbody tr")).to_have_count(1)
    page.go_back()
    expect(page).to_have_url(dataset_url)
    expect(table.locator("tbody tr")).to_have_count(3)

    page.get_by_label("Language").select_option("vi")
    expect(page.get_by_role("button", name="Xuất CSV")).to_be_visible()
    expect(table).to_contain_text("Sắc thái mỉa mai, châm biếm")
    page.screenshot(path="/tmp/vivid-dataset-vi.png", full_page=True)
