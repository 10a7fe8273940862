"""Issue 12, items 4–6 in Chromium: the consent page's details and text, no knew-before question without
a symbol, and a Chinese participant reading the package's translated title, question and options."""

import pytest
from playwright.sync_api import expect

from study.models import Artwork, Question, Study, StudyStatus
from study.services.imports import study_import
from tests.study.factories import write_package
from tests.study.test_package_consent import CONSENT_FIELDS, translated_package

from .study_helpers import click_next, current_step, entry_link, fill_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

# Shown as text on the consent page, never run: markdown_html escapes raw HTML.
SCRIPT = "<script>window.consentScriptRan = true</script>"


@pytest.fixture
def study(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    fields = {**CONSENT_FIELDS, "consent": {"en": f"{CONSENT_FIELDS['consent']['en']}\n\n{SCRIPT}"}}
    imported = study_import(
        source=write_package(tmp_path / "package", translated_package(**fields)), start_prepare=False
    )
    Study.objects.filter(pk=imported.pk).update(status=StudyStatus.LIVE, highlight_status="ready", terms_status="ready")
    return imported


def test_it_shows_the_consent_details_and_the_markdown_without_running_a_script(open_page, live_server, study):
    page = open_page()
    page.goto(entry_link(live_server.url, study.slug, pid="NEWCOMERCONSENT", group="american"))
    expect(page.get_by_role("heading", name="Consent to take part")).to_be_visible()
    facts = page.get_by_test_id("consent-facts")
    expect(facts.locator("[data-fact=duration]")).to_have_text("About 25 minutes")
    expect(facts.locator("[data-fact=reward]")).to_have_text("£3.75")
    expect(facts.locator("[data-fact=contact]")).to_contain_text("team@example.org")
    expect(facts.locator("[data-fact=ethics]")).to_have_text("ERC-2025-117")
    text = page.get_by_test_id("consent-text")
    expect(text.get_by_role("heading", name="Your data")).to_be_visible()
    expect(text.locator("li em")).to_have_text("pseudonymous")
    link = text.get_by_role("link", name="the board")
    expect(link).to_have_attribute("href", "https://ethics.example.org")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(text.locator("img, script")).to_have_count(0)
    expect(text).to_contain_text(SCRIPT)
    assert page.evaluate("window.consentScriptRan") is None


def test_a_chinese_participant_reads_the_translations_and_is_not_asked_knew_before_without_a_symbol(
    open_page, live_server, study
):
    page = open_page("zh-CN")
    page.goto(entry_link(live_server.url, study.slug, pid="NEWCOMERZH", group="chinese"))
    expect(page).to_have_title("艺术作品描述研究")
    # Consent, instructions, then the artwork pages until the translated artwork's questions,
    # wherever the participant's draw puts that artwork (five pages an artwork).
    for _ in range(2 + 5 * Artwork.objects.filter(study=study).count()):
        step = current_step(page)
        if step.endswith(":qa") and page.locator("figcaption strong").inner_text() == "作品一":
            break
        fill_page(page)
        click_next(page)
    else:
        raise AssertionError("the translated artwork's questions never came")

    symbol_q = Question.objects.get(artwork__study=study, key="cn1-q1")
    agnostic_q = Question.objects.get(artwork__study=study, key="cn1-q2")
    first = page.locator(f"#question-{symbol_q.pk}")
    expect(first).to_contain_text("这个符号象征什么？")
    expect(first.locator("legend")).to_contain_text("长寿符号")
    labels = [text.strip() for text in first.locator(".options label").all_inner_texts()]
    assert sorted(labels) == sorted(["正确答案", *[f"错误答案{n}" for n in range(1, 6)]])
    expect(first.locator(f"input[name=q{symbol_q.pk}-knew]")).to_have_count(2)
    second = page.locator(f"#question-{agnostic_q.pk}")
    expect(second.locator(f"input[name^=q{agnostic_q.pk}-]")).to_have_count(11)  # 6 options, 5 confidence levels
    expect(second.locator(f"input[name=q{agnostic_q.pk}-knew]")).to_have_count(0)

    # The translated option sends the English one, which is what is scored.
    first.locator(".options label", has_text="正确答案").locator("input").check()
    expect(first.locator(".options input:checked")).to_have_attribute("value", "cn1 right answer")
