"""Issue 12, items 3 and 7: a look-alike dataset name, and the API docs signed out."""

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Dataset, Expression
from core.roles import RESEARCHER
from tests.conftest import PASSWORD, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CSV = "expression,explanation\nNước chảy đá mòn,Kiên trì bền bỉ thì việc khó mấy cũng làm được.\n".encode()


def test_it_warns_of_a_new_dataset_and_imports_into_the_near_match(context_for, live_server, eager):
    existing = Dataset.objects.create(name="VIVID v1")
    page = context_for(make_user("linh", RESEARCHER))

    page.goto(live_server.url + "/imports/new/")
    page.get_by_label("Dataset:", exact=True).fill("vivid v1 ")
    page.get_by_label("File:", exact=True).set_input_files({"name": "a.csv", "mimeType": "text/csv", "buffer": CSV})
    page.get_by_role("button", name="Upload and preview").click()

    warning = page.locator("#new-dataset-warning")
    expect(warning).to_contain_text("No dataset is named “vivid v1”: this import will create a new dataset.")
    warning.get_by_role("button", name="Import into “VIVID v1”").click()

    expect(page.locator("#new-dataset-warning")).to_have_count(0)
    expect(page.get_by_text("Into the dataset “VIVID v1”")).to_be_visible()
    page.get_by_role("button", name="Confirm import").click()
    expect(page.get_by_role("heading", name="Import finished")).to_be_visible()
    assert list(Dataset.objects.values_list("name", flat=True)) == ["VIVID v1"]
    assert Expression.objects.get().dataset == existing


def test_it_sends_a_signed_out_visit_to_the_docs_through_the_sign_in_page(page, live_server):
    make_user("minh", RESEARCHER)

    page.goto(live_server.url + "/api/docs/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/api/docs/$"))
    page.get_by_label("Username:", exact=True).fill("minh")
    page.get_by_label("Password:", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    expect(page).to_have_url(live_server.url + "/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("VIVID Studio API")
