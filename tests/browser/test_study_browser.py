"""Prolific participants take the artwork study in a real browser, from the entry link to Prolific's completion URL.

Every page is answered through its own controls, so the draft restore, the "None of these"
logic and the double-submit guard of static/js/study.js run as they do for a person.
Prolific is never reached: app.prolific.com resolves to a small HTTPS server on loopback.
"""

import json
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.utils import translation
from playwright.sync_api import expect

from study.models import Answer, Assignment, Participant, ParticipantStatus, Phase, Preference
from study.services.participants import prolific_id_for
from tests.study.factories import make_study, package_dict

from .study_helpers import (
    PROLIFIC_URL,
    click_next,
    current_step,
    entry_link,
    fill_page,
    radio_groups,
    send_and_wait,
    take_session,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

COMPLETE = "https://app.prolific.com/submissions/complete?cc=C0MPL3TE"
SCREENOUT = "https://app.prolific.com/submissions/complete?cc=SCR33N"
# Six artworks a session: four described ones (two per culture) and two attention checks.
N_ARTWORKS, N_QC = 6, 2
N_REGULAR = N_ARTWORKS - N_QC
# Two questions per artwork: both phases for described artworks, one phase for attention checks.
N_ANSWERS = N_REGULAR * 2 * 2 + N_QC * 2
N_PREFERENCES = N_REGULAR * 3
N_PAGES = 2 + N_REGULAR * 5 + N_QC * 2  # consent, instructions, then the artwork pages


@pytest.fixture
def study(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return make_study(
        package_dict(
            slug="browser-artworks",
            n_american=3,
            n_chinese=3,
            n_qc=N_QC,
            artworks_per_participant=N_ARTWORKS,
            qc_per_participant=N_QC,
        )
    )


def _assert_stored_once(participant: Participant) -> None:
    answers = Answer.objects.filter(assignment__participant=participant)
    keys = list(answers.values_list("assignment_id", "question_id", "phase"))
    assert len(keys) == len(set(keys)) == N_ANSWERS
    preferences = list(
        Preference.objects.filter(assignment__participant=participant).values_list("assignment_id", "criterion")
    )
    assert len(preferences) == len(set(preferences)) == N_PREFERENCES


def _checked(page, name: str):
    return page.locator(f"form[data-step-form] input[name={json.dumps(name)}]:checked")


def test_it_takes_an_american_participant_through_every_page_and_keeps_a_draft_across_a_reload(
    open_page, prolific, live_server, study
):
    reloaded: list[str] = []

    def reload_half_filled(page, step):
        if reloaded or not step.endswith(":qa"):
            return False
        names = list(radio_groups(page))
        assert len(names) == 5  # the symbol question: choice, confidence, knew before; the agnostic one: no knew before
        # Half the page: the first question's answer and confidence, nothing else.
        picked = fill_page(page, names=names[:2])
        draft_key = page.locator("form[data-step-form]").get_attribute("data-draft-key")
        page.reload()
        assert current_step(page) == step, "a reload must show the same page"
        for name, value in picked.items():
            expect(_checked(page, name)).to_have_attribute("value", value)
        for name in names[2:]:
            expect(_checked(page, name)).to_have_count(0)
        # The restore came from the draft study.js keeps, not from the browser's own form memory.
        draft = json.loads(page.evaluate("key => localStorage.getItem(key)", draft_key))
        assert draft == {name: [value] for name, value in picked.items()}
        reloaded.append(step)
        return False  # the ordinary answering fills in the rest and sends the page

    page = open_page()
    page.goto(entry_link(live_server.url, study.slug, pid="BROWSERAM1", group="american"))
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_role("heading", name="Consent to take part")).to_be_visible()
    steps = take_session(page, on_page=reload_half_filled)

    assert page.url == COMPLETE
    assert prolific.visits == [COMPLETE]
    expect(page.get_by_role("heading", name="Submission complete")).to_be_visible()
    assert reloaded, "no question page was reloaded"

    participant = Participant.objects.get(study=study, prolific_pid=prolific_id_for("BROWSERAM1"))
    assert participant.status == ParticipantStatus.COMPLETED
    assert (participant.group, participant.prolific_study_id) == ("american", prolific_id_for("prolific-study"))
    assert steps == ["consent", *participant.plan]
    assert len(steps) == N_PAGES
    assert (participant.qc_correct, participant.qc_total) == (N_QC * 2, N_QC * 2)
    _assert_stored_once(participant)
    # Every answer is the one clicked: the helper picks the correct option everywhere.
    assert not Answer.objects.filter(assignment__participant=participant, is_correct=False).exists()
    pre = Answer.objects.filter(assignment__participant=participant, assignment__artwork__key__startswith="am")
    assert pre.filter(phase=Phase.PRE, confidence=1, knew_before=True).exists()
    assert Assignment.objects.filter(participant=participant, symbols_pre__isnull=True).count() == 0


def _zh(text: str) -> str | None:
    """The Simplified Chinese of a UI string, once the lead's translations are compiled; None before."""
    if not (Path(django_settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo").exists():
        return None
    with translation.override("zh-hans"):
        translated = translation.gettext(text)
    return translated if translated != text else None


def test_it_shows_a_chinese_participant_glossed_and_highlighted_chinese_pages_and_ignores_a_replayed_page(
    open_page, prolific, live_server, study
):
    pid = "BROWSERZH1"
    compared: dict[str, str] = {}
    replayed: list[str] = []
    next_label = _zh("Next")

    def check_page(page, step):
        expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
        if next_label and step not in ("consent",) and not step.endswith("instructions"):
            expect(page.locator("form[data-step-form] button[type=submit]")).to_have_text(next_label)
        if step.endswith(":compare"):
            assignment = Assignment.objects.select_related("artwork").get(
                participant__prolific_pid=prolific_id_for(pid), order=int(step.split(":")[0])
            )
            culture = assignment.artwork.culture
            compared[step] = culture
            glosses = page.locator(".description-panel .gloss")
            if culture == "chinese":
                # "long life" in the pragmatic description carries its confirmed Chinese label.
                expect(glosses.filter(has_text="（长寿）")).to_have_count(1)
                expect(page.locator(".description-panel .term").first).to_contain_text("long life")
            else:
                expect(glosses).to_have_count(0)
            # The pair's similar sentences share one highlight on both sides.
            left = page.locator('.description-panel[data-side="left"] .match')
            right = page.locator('.description-panel[data-side="right"] .match')
            expect(left).to_have_count(1)
            expect(right).to_have_count(1)
            assert left.get_attribute("data-match") == right.get_attribute("data-match")
            expect(left).to_have_text("The river flows past a tree.")
            expect(right).to_have_text("The river flows past a tree.")
        if step.endswith(":symbols") and not step.startswith("1:") and not replayed:
            # Send this page, then the browser's back button, then send what the back button shows.
            fill_page(page)
            click_next(page)
            after = current_step(page)
            assert after != step
            stored = Assignment.objects.get(
                participant__prolific_pid=prolific_id_for(pid), order=int(step.split(":")[0])
            ).symbols_pre
            page.go_back(wait_until="load")
            shown = current_step(page)
            # Pages are never cached, so the back button fetches the current page, not the one sent.
            assert shown == after, f"back showed {shown} after {step} was sent"
            replayed.append(step)
            # Re-send the old page as a stale tab would: its step and its answers, with this session's cookie.
            page.evaluate(
                """step => {
                    const form = document.querySelector('form[data-step-form]');
                    // The old page had no radio buttons to fill; the browser must not hold the form back.
                    form.noValidate = true;
                    form.querySelector('input[name=step]').value = step;
                    const box = document.createElement('input');
                    box.type = 'hidden'; box.name = 'none'; box.value = '1';
                    form.appendChild(box);
                }""",
                step,
            )
            send_and_wait(page, page.locator("form[data-step-form] button[type=submit]").first.click)
            assert current_step(page) == after, "a stale page must lead back to the current page"
            assert (
                Assignment.objects.get(
                    participant__prolific_pid=prolific_id_for(pid), order=int(step.split(":")[0])
                ).symbols_pre
                == stored
            ), "a stale page overwrote the stored answer"
            return True
        return False

    page = open_page(locale="zh-CN")
    page.goto(entry_link(live_server.url, study.slug, pid=pid, group="chinese"))
    steps = take_session(page, on_page=check_page)
    assert page.url == COMPLETE
    assert prolific.visits == [COMPLETE]

    assert replayed, "the back button was never used"
    assert sorted(compared.values()) == ["american", "american", "chinese", "chinese"]
    participant = Participant.objects.get(study=study, prolific_pid=prolific_id_for(pid))
    assert participant.status == ParticipantStatus.COMPLETED
    assert participant.group == "chinese"
    # The replayed page does not count as a page of its own.
    assert steps == ["consent", *participant.plan]
    _assert_stored_once(participant)


def test_it_screens_out_a_participant_who_fails_the_attention_checks(open_page, prolific, live_server, study):
    page = open_page()
    page.goto(entry_link(live_server.url, study.slug, pid="BROWSERQC1", group="american"))
    take_session(page, qc_wrong=True)
    assert page.url == SCREENOUT
    assert prolific.visits == [SCREENOUT]

    participant = Participant.objects.get(study=study, prolific_pid=prolific_id_for("BROWSERQC1"))
    assert participant.status == ParticipantStatus.EXCLUDED_QC
    assert (participant.qc_correct, participant.qc_total) == (0, N_QC * 2)
    _assert_stored_once(participant)


def test_it_stores_a_page_once_when_next_is_clicked_twice(open_page, prolific, live_server, study):
    pid = "BROWSERDBL1"
    doubled: dict[str, str] = {}

    def double_send(page, step):
        if step.endswith(":qa") and "qa" not in doubled:
            # A person's double click: study.js sends the form once.
            fill_page(page)
            send_and_wait(page, page.locator("form[data-step-form] button[type=submit]").dblclick)
            doubled["qa"] = current_step(page)
            return True
        if step.endswith(":post_qa") and "post_qa" not in doubled:
            # The same page sent three times at once, as without study.js: the server stores it once.
            fill_page(page)
            statuses = page.evaluate(
                """async () => {
                    const form = document.querySelector('form[data-step-form]');
                    const send = () => fetch(location.href, {method: 'POST', body: new FormData(form)});
                    const responses = await Promise.all([send(), send(), send()]);
                    return responses.map(r => r.status);
                }"""
            )
            assert statuses == [200, 200, 200]
            page.reload()
            doubled["post_qa"] = current_step(page)
            return True
        return False

    page = open_page()
    failures: list[str] = []
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 500 else None)
    page.goto(entry_link(live_server.url, study.slug, pid=pid, group="american"))
    steps = take_session(page, on_page=double_send)
    assert PROLIFIC_URL.match(page.url) and page.url == COMPLETE
    assert prolific.visits == [COMPLETE]
    assert failures == []

    participant = Participant.objects.get(study=study, prolific_pid=prolific_id_for(pid))
    plan = participant.plan
    qa, post_qa = next(s for s in plan if s.endswith(":qa")), next(s for s in plan if s.endswith(":post_qa"))
    # Each doubled page moved the session on by exactly one page.
    assert doubled == {"qa": plan[plan.index(qa) + 1], "post_qa": plan[plan.index(post_qa) + 1]}
    assert steps == ["consent", *plan]
    assert participant.status == ParticipantStatus.COMPLETED
    _assert_stored_once(participant)
