"""Issue 27, part 2: WCAG 2.2 AA on every participant page and on the annotator's review page.

axe-core runs the WCAG 2.0/2.1/2.2 A and AA rules on each page a participant sees, in English
and in Chinese, and on the review and adjudication pages; a serious or critical finding fails.
The contexts here bypass the Content-Security-Policy: axe is injected as an inline script, which
the policy rightly blocks. The other browser tests keep the policy and fail on any violation of it.
"""

import json

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import Assignment
from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER
from study.models import Answer, Participant, ParticipantStatus
from study.services.participants import prolific_id_for
from tests.annotation.factories import make_adjudication_round, make_dataset, make_round, make_suggestions, numbered_csv
from tests.conftest import PASSWORD, make_user

from .axe import require_axe, serious_violations
from .conftest import sign_in
from .study_helpers import PROLIFIC_URL, choice_for, current_step, entry_link, radio_groups, take_session
from .test_study_browser import COMPLETE, N_QC, study  # noqa: F401 (a fixture)

HEADING_FOCUSED = (
    "() => { const e = document.activeElement; return !!e && /^H[12]$/.test(e.tagName) && !!e.closest('main'); }"
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@pytest.mark.parametrize(
    ("locale", "group", "lang"),
    [("en-US", "american", "en"), ("zh-CN", "chinese", "zh-Hans")],
    ids=["english", "chinese"],
)
def test_it_finds_no_serious_accessibility_violation_on_any_participant_page(
    open_page,
    prolific,
    live_server,
    study,  # noqa: F811
    locale,
    group,
    lang,
):
    require_axe()
    reports: list[str] = []
    kinds: set[str] = set()

    def check(page, step):
        expect(page.locator("html")).to_have_attribute("lang", lang)
        kinds.add(step.split(":")[-1])
        # study_focus.js put the focus on the step's heading when the page appeared.
        page.wait_for_function(HEADING_FOCUSED)
        if step.endswith(":compare"):
            # Each highlighted sentence carries its pair's number as text, the same on both sides.
            left = page.locator('.description-panel[data-side="left"] [data-match-marker]').all_inner_texts()
            right = page.locator('.description-panel[data-side="right"] [data-match-marker]').all_inner_texts()
            assert left and sorted(left) == sorted(right), (left, right)
        report = serious_violations(page, f"step {step}")
        if report:
            reports.append(report)
        if step.endswith(":compare") or step == "consent":
            # A participant whose system is in dark mode gets the same legible page (Pico follows the system).
            page.emulate_media(color_scheme="dark")
            report = serious_violations(page, f"step {step}, dark colour scheme")
            if report:
                reports.append(report)
            page.emulate_media(color_scheme="light")
        return False

    page = open_page(locale=locale, bypass_csp=True)
    page.goto(entry_link(live_server.url, study.slug, pid=f"AXE{group.upper()}1", group=group))
    take_session(page, on_page=check)
    assert PROLIFIC_URL.match(page.url)
    # Every kind of page was seen, so none escaped the check.
    assert {"consent", "instructions", "symbols", "qa", "compare", "post_symbols", "post_qa"} <= kinds, kinds
    assert not reports, "axe found serious or critical WCAG 2.2 AA violations:\n\n" + "\n\n".join(reports)


def _open_round(annotator):
    """A round of two unanswered items with both traits suggested, for ``annotator`` alone."""
    dataset = make_dataset(name="Axe corpus", csv=numbered_csv(2))
    return make_round(
        dataset,
        [annotator],
        name="Axe round",
        annotators_per_item=1,
        suggestion_set=make_suggestions(dataset, traits=("literal", "pragmatic")),
    )


def _signed_in(browser, live_server, user):
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    sign_in(page, live_server.url, user.get_username(), PASSWORD)
    return page


def test_it_finds_no_serious_accessibility_violation_on_the_review_and_adjudication_pages(browser, live_server):
    require_axe()
    annotator_a, annotator_b = make_user("axe_a", ANNOTATOR), make_user("axe_b", ANNOTATOR)
    researcher = make_user("axe_researcher", RESEARCHER, ADJUDICATOR)
    round_, items = make_adjudication_round(annotator_a, annotator_b, researcher, lock=False)
    reports: list[str] = []

    def check(page, where):
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            report = serious_violations(page, f"{where}, {scheme} colour scheme")
            if report:
                reports.append(report)

    page = _signed_in(browser, live_server, annotator_a)
    submitted = Assignment.objects.filter(item__round=round_, annotator=annotator_a).first()
    page.goto(live_server.url + reverse("annotation:review_item", args=[round_.pk, submitted.pk]))
    expect(page.locator("#review-expression")).to_be_visible()
    check(page, "review page, a submitted item")
    page.context.close()

    annotator_c = make_user("axe_c", ANNOTATOR)
    fresh = _open_round(annotator_c)
    page = _signed_in(browser, live_server, annotator_c)
    page.goto(live_server.url + reverse("annotation:review_queue", args=[fresh.pk]))
    expect(page.locator("#review-form")).to_be_visible()
    check(page, "review page, an item to answer")
    page.locator("#review-form input[type=radio]").first.check()
    check(page, "review page, an item being answered")
    page.context.close()

    from annotation.services import round_lock

    round_lock(round=round_)
    page = _signed_in(browser, live_server, researcher)
    page.goto(live_server.url + reverse("annotation:adjudication_item", args=[round_.pk, items[0].pk]))
    check(page, "adjudication of a disputed item")
    page.context.close()
    assert not reports, "axe found serious or critical WCAG 2.2 AA violations:\n\n" + "\n\n".join(reports)


def test_it_catches_an_unlabelled_control_and_low_contrast_text(page):
    """The check itself can fail: axe, as injected here, reports what it must."""
    require_axe()
    page.set_content(
        '<!doctype html><html lang="en"><head><title>Bad page</title></head><body><main><h1>Bad</h1>'
        '<input type="text" name="who"><p class="faint">Faint text</p></main></body></html>'
    )
    page.add_style_tag(content=".faint { color: #bbb; background: #fff; }")
    report = serious_violations(page, "a bad page")
    assert report and "label" in report and "color-contrast" in report, report


# --- A study with the keyboard alone ---------------------------------------------------------------

_FOCUSED = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const style = getComputedStyle(e);
  const label = e.closest('label');
  const ring = label ? getComputedStyle(label) : null;
  return {
    tag: e.tagName.toLowerCase(), type: e.type || '', name: e.name || '', value: e.value || '',
    checked: !!e.checked, text: (e.innerText || '').trim(), inForm: !!e.closest('form[data-step-form]'),
    groupChecked: e.type === 'radio' ? !!e.form.querySelector(`input[name="${CSS.escape(e.name)}"]:checked`) : false,
    anyChecked: e.type === 'checkbox' ? !!e.form.querySelector('input[name="symbols"]:checked, input[name="none"]:checked') : false,
    outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2
      || !!ring && ring.outlineStyle !== 'none' && parseFloat(ring.outlineWidth) >= 2,
  };
}"""
_MARK_SENT = "() => document.documentElement.setAttribute('data-test-sent', '')"
# The next page is there once the marked <html> is gone: after a navigation or a page written over this one.
_NEXT_PAGE = "() => !!document.documentElement && !document.documentElement.hasAttribute('data-test-sent') && document.readyState !== 'loading'"


def _send_with_enter(page) -> None:
    page.evaluate(_MARK_SENT)
    page.keyboard.press("Enter")
    page.wait_for_function(_NEXT_PAGE)


def _answer_with_keys(page, step: str, unfocused: list[str]) -> None:
    """Tab through the page from its heading: check the first symbol with Space, pick each radio
    group's answer with Space and the arrow keys, and send the page with Enter on its button."""
    groups = radio_groups(page)
    for _ in range(300):
        page.keyboard.press("Tab")
        focused = page.evaluate(_FOCUSED)
        if focused is None or not focused["inForm"]:
            continue
        if not focused["outline"]:
            unfocused.append(f"{step}: {focused['tag']} {focused['name']} {focused['value'] or focused['text']}")
        if focused["type"] == "checkbox":
            if focused["name"] == "symbols" and not focused["anyChecked"]:
                page.keyboard.press("Space")
        elif focused["type"] == "radio":
            if focused["groupChecked"]:
                continue
            name, options = focused["name"], groups[focused["name"]]
            wanted = choice_for(name, options, qc_wrong=False) if name.endswith("-choice") else options[-1]
            # Tab lands on the group's first radio; Space checks it, each arrow press moves the choice on.
            page.keyboard.press("Space")
            for _ in range(options.index(wanted)):
                page.keyboard.press("ArrowDown")
            expect(page.locator(f"form[data-step-form] input[name={json.dumps(name)}]:checked")).to_have_value(wanted)
        elif focused["tag"] == "button" and step == "consent":
            # Past "I agree" to "I do not agree", and back with Shift+Tab.
            assert focused["text"] == "I agree to take part", focused
            page.keyboard.press("Tab")
            assert page.evaluate(_FOCUSED)["text"] == "I do not agree"
            page.keyboard.press("Shift+Tab")
            assert page.evaluate(_FOCUSED)["text"] == "I agree to take part"
            _send_with_enter(page)
            return
        elif focused["tag"] == "button":
            _send_with_enter(page)
            return
    raise AssertionError(f"no button to send {step} was reached with Tab")


def test_it_completes_a_study_with_the_keyboard_alone(open_page, prolific, live_server, study):  # noqa: F811 (study)
    page = open_page()
    page.goto(entry_link(live_server.url, study.slug, pid="KEYBOARD1", group="american"))
    steps: list[str] = []
    unfocused: list[str] = []
    while not PROLIFIC_URL.match(page.url):
        step = current_step(page)
        assert step is not None, f"no step form at {page.url}"
        assert len(steps) < 100, steps[-5:]
        page.wait_for_function(HEADING_FOCUSED)
        steps.append(step)
        _answer_with_keys(page, step, unfocused)

    assert page.url == COMPLETE
    assert prolific.visits == [COMPLETE]
    participant = Participant.objects.get(study=study, prolific_pid=prolific_id_for("KEYBOARD1"))
    assert participant.status == ParticipantStatus.COMPLETED
    assert steps == ["consent", *participant.plan]
    # The arrow keys reached the right answer of every question, attention checks included.
    assert (participant.qc_correct, participant.qc_total) == (N_QC * 2, N_QC * 2)
    assert not Answer.objects.filter(assignment__participant=participant, is_correct=False).exists()
    assert not unfocused, "controls without a visible focus ring:\n" + "\n".join(unfocused)
