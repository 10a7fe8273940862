"""The pages the Content-Security-Policy could break, in a real browser with the policy on.

The conftest fails any test whose pages report a CSP violation, so each test here
only has to use the page: Swagger UI, the Django admin, the language switch and
the confirmation dialogs that used to be inline handlers.
"""

import re

import pytest
from playwright.sync_api import expect

from core.roles import RESEARCHER
from study.models import Study, StudyStatus
from tests.browser.conftest import CSP_VIOLATIONS
from tests.conftest import PASSWORD, make_user
from tests.study.factories import make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_it_reports_an_inline_script_as_a_violation(context_for, live_server):
    page = context_for(make_user("lan", RESEARCHER))
    with page.expect_console_message(lambda message: "Content Security Policy" in message.text):
        page.evaluate(
            "() => { const s = document.createElement('script');"
            " s.textContent = 'window.ranInline = true;'; document.head.append(s); }"
        )
    assert page.evaluate("window.ranInline === undefined")
    assert any("Content Security Policy" in violation for violation in CSP_VIOLATIONS)
    CSP_VIOLATIONS.clear()  # expected here: the listener itself is under test


def test_it_renders_swagger_ui_under_the_policy(context_for, live_server):
    page = context_for(make_user("minh", RESEARCHER))
    page.goto(live_server.url + "/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("VIVID Studio API")
    expect(page.locator(".opblock").first).to_be_visible()
    page.locator(".opblock-summary").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()


def test_it_runs_the_admin_under_the_policy(page, live_server):
    make_user("root", is_staff=True, is_superuser=True)
    page.goto(live_server.url + "/admin/")
    page.get_by_label("Username:").fill("root")
    page.get_by_label("Password:").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()
    page.goto(live_server.url + "/admin/auth/user/")
    expect(page.locator("#result_list")).to_be_visible()
    page.locator("#action-toggle").check()  # actions.js
    expect(page.locator(".action-counter")).to_contain_text("1 of 1 selected")
    page.goto(live_server.url + "/admin/auth/user/add/")
    expect(page.locator("#id_username")).to_be_visible()


def test_it_switches_the_language_from_the_menu(context_for, live_server):
    page = context_for(make_user("hoa", RESEARCHER))
    page.locator("#language-select").select_option("vi")
    expect(page.locator("html")).to_have_attribute("lang", "vi")
    page.locator("#language-select").select_option("en")
    expect(page.locator("html")).to_have_attribute("lang", "en")


def test_it_asks_before_deleting_a_draft_study(context_for, live_server):
    study = make_study(status=StudyStatus.DRAFT)
    page = context_for(make_user("quan", RESEARCHER))
    page.goto(live_server.url + f"/studies/{study.slug}/")
    questions = []

    def answer(dialog, accept):
        questions.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, False))
    page.get_by_role("button", name="Delete the draft").click()
    expect(page.get_by_role("button", name="Delete the draft")).to_be_visible()
    assert questions == ["Delete this draft study and its images?"]
    assert Study.objects.filter(pk=study.pk).exists()

    page.once("dialog", lambda dialog: answer(dialog, True))
    page.get_by_role("button", name="Delete the draft").click()
    expect(page).to_have_url(re.compile(r"/studies/$"))
    assert len(questions) == 2 and not Study.objects.filter(pk=study.pk).exists()
