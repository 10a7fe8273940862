"""Participants on poor networks: a page sent while the connection drops is retried by study.js,
stored once, and the participant sees that it is being sent; a reload shows where they were.

The connection is made poor in Chromium itself: its network conditions (CDP), requests cut off
by Playwright's routing before or after they reached the server, and the browser taken offline.
"""

import time

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from study.models import Answer, Assignment, Participant, Phase
from study.services.participants import prolific_id_for
from tests.study.factories import make_study, package_dict

from .study_helpers import (
    click_next,
    current_step,
    entry_link,
    fill_page,
    retry_now,
    send_and_wait,
    wait_for_next_page,
)

# In the PostgreSQL pass of `make test` (pg_pass): what a page retried while the connection
# drops leaves in the database is the point, and the two passes take about as long so.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.pg_pass,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

SENDING = "Sending…"
RETRYING = "Connection lost — retrying… Your answers are kept."
OFFLINE = "You are offline. Your answers are kept and will be sent when the connection returns."


@pytest.fixture
def study(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return make_study(
        package_dict(
            slug="browser-network", n_american=2, n_chinese=2, n_qc=1, artworks_per_participant=3, qc_per_participant=1
        )
    )


def _start(open_page, live_server, study, pid, *, fake_clock: bool = False):
    page = open_page()
    if fake_clock:
        # study.js waits 1, 2, 4 then 8 s between attempts; on the fake clock a test passes them at once.
        page.clock.install()
    page.goto(entry_link(live_server.url, study.slug, pid=pid, group="american"))
    return page, live_server.url + reverse("study:run", args=[study.slug])


def _participant(pid) -> Participant:
    return Participant.objects.get(prolific_pid=prolific_id_for(pid))


def _walk_to(page, suffix: str) -> str:
    """Answer and send pages until one whose step ends with ``suffix``; returns that step."""
    for _ in range(20):
        step = current_step(page)
        if step.endswith(suffix):
            return step
        fill_page(page)
        click_next(page)
    raise AssertionError(f"no {suffix} page")


def _status(page):
    return page.locator("form[data-step-form] [data-send-message]")


def _next_button(page):
    return page.locator("form[data-step-form] button[type=submit]").first


def _answers_of(pid: str, step: str) -> list[tuple]:
    order, kind = step.split(":")
    phase = Phase.PRE if kind == "qa" else Phase.POST
    return list(
        Answer.objects.filter(
            assignment__participant__prolific_pid=prolific_id_for(pid), assignment__order=int(order), phase=phase
        ).values_list("question_id", "choice", "confidence")
    )


def _questions(picked: dict[str, str]) -> int:
    return sum(name.endswith("-choice") for name in picked)


def _assert_moved_one_page_on(pid: str, step: str, page) -> None:
    participant = _participant(pid)
    assert participant.plan[participant.step_index - 1] == step
    assert current_step(page) == participant.plan[participant.step_index]


def test_it_walks_pages_on_a_slow_connection_showing_that_the_answers_are_being_sent(open_page, live_server, study):
    pid = "NETSLOW1"
    page, _run = _start(open_page, live_server, study, pid)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    # A slow mobile connection: every request waits 400 ms and bodies trickle in.
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 400, "downloadThroughput": 50_000, "uploadThroughput": 20_000},
    )
    steps = []
    for _ in range(4):  # consent, instructions, the first artwork's symbols and questions
        step = current_step(page)
        steps.append(step)
        if step == "consent":
            button = page.locator("form[data-step-form] button[name=consent][value=yes]")
        else:
            fill_page(page)
            button = _next_button(page)
        started = time.monotonic()

        def send(button=button):
            button.click()
            # Announced politely to screen readers, shown under the button, the buttons held back.
            expect(_status(page)).to_have_text(SENDING)
            expect(page.locator("form[data-step-form] button[type=submit]").first).to_be_disabled()

        send_and_wait(page, send)
        assert time.monotonic() - started >= 0.4, "the network conditions were not applied"
    participant = _participant(pid)
    assert steps == ["consent", *participant.plan[:3]]
    assert current_step(page) == participant.plan[3]
    status = page.locator("[data-send-message]")
    expect(status).to_have_attribute("aria-live", "polite")
    expect(status).to_have_attribute("role", "status")
    expect(status).to_have_text("")
    assert len(_answers_of(pid, participant.plan[2])) > 0


@pytest.mark.parametrize("failure", ["disconnected", "gateway"])
def test_it_retries_a_page_whose_request_never_reached_the_server(open_page, live_server, study, failure):
    pid = f"NETCUT{failure.upper()}"
    page, run = _start(open_page, live_server, study, pid, fake_clock=True)
    step = _walk_to(page, ":qa")
    posts: list[str] = []

    def cut_first(route):
        if route.request.method != "POST":
            route.continue_()
            return
        posts.append(route.request.post_data)
        if len(posts) > 1:
            route.continue_()
        elif failure == "disconnected":
            route.abort("internetdisconnected")
        else:  # a proxy in front of the app answering that the app is unreachable
            route.fulfill(status=503, body="<h1>Service Unavailable</h1>", content_type="text/html")

    page.route(run, cut_first)
    picked = fill_page(page)

    def send():
        _next_button(page).click()
        expect(_status(page)).to_have_text(RETRYING)
        expect(page.locator("form[data-step-form] [data-send-retry]")).to_be_visible()

    send_and_wait(page, send, fake_clock=True)
    assert len(posts) == 2 and posts[0] == posts[1], "the retry must send the same answers"
    _assert_moved_one_page_on(pid, step, page)
    assert len(_answers_of(pid, step)) == _questions(picked) > 0


@pytest.mark.parametrize("next_page", ["arrives", "dropped once"])
def test_it_stores_a_page_once_when_the_server_got_it_but_the_answer_was_lost(open_page, live_server, study, next_page):
    pid = "NETLOST" + next_page.split()[0].upper()
    page, run = _start(open_page, live_server, study, pid, fake_clock=True)
    step = _walk_to(page, ":qa")
    first_status: list[int] = []
    posts: list[str] = []
    gets: list[str] = []

    def lose_first_reply(route):
        if route.request.method != "POST":
            gets.append(route.request.url)
            if next_page == "dropped once" and len(gets) == 1:
                # The retry was answered "already stored, see the run page"; that page is lost too.
                route.abort("connectionreset")
            else:
                route.continue_()
            return
        posts.append(route.request.post_data)
        if first_status:
            route.continue_()
            return
        # The request reaches the server and is stored; the answer never reaches the browser.
        first_status.append(route.fetch().status)
        route.abort("connectionreset")

    page.route(run, lose_first_reply)
    picked = fill_page(page)

    def send():
        _next_button(page).click()
        expect(_status(page)).to_have_text(RETRYING)

    send_and_wait(page, send, fake_clock=True)
    assert first_status == [200]
    assert len(posts) == 2 and posts[0] == posts[1]
    assert gets == [run] * (1 if next_page == "arrives" else 2), (
        "the stored page is followed by one GET of the run page"
    )
    # The retry arrived for a page already stored: nothing stored twice, no page skipped.
    _assert_moved_one_page_on(pid, step, page)
    assert len(_answers_of(pid, step)) == _questions(picked) > 0
    expect(page.locator("[data-send-message]")).to_have_text("")


def test_it_sends_a_page_answered_offline_once_the_connection_returns(open_page, live_server, study):
    pid = "NETOFF1"
    page, _run = _start(open_page, live_server, study, pid, fake_clock=True)
    step = _walk_to(page, ":symbols")
    page.context.set_offline(True)
    fill_page(page)
    page.evaluate("document.documentElement.setAttribute('data-test-sent', '')")
    _next_button(page).click()
    expect(_status(page)).to_have_text(OFFLINE)
    retry = page.locator("form[data-step-form] [data-send-retry]")
    # Several retries fail while offline (each hides the button as it starts, shows it as it fails);
    # the page and its answers stay.
    for _ in range(3):
        expect(retry).to_be_visible()
        retry_now(page)
    expect(_status(page)).to_have_text(OFFLINE)
    expect(retry).to_be_visible()
    assert current_step(page) == step
    participant = _participant(pid)
    assert participant.plan[participant.step_index] == step
    # Meanwhile the participant changes their mind: what the page shows is what gets sent.
    page.locator("form[data-step-form] input[name=none]").check()
    expect(page.locator("form[data-step-form] input[name=symbols]:checked")).to_have_count(0)

    page.context.set_offline(False)  # the "online" event sends it at once
    wait_for_next_page(page, timeout=5_000)
    _assert_moved_one_page_on(pid, step, page)
    assignment = Assignment.objects.get(participant=participant, order=int(step.split(":")[0]))
    assert assignment.symbols_pre == []


def test_it_shows_the_unsent_page_with_its_answers_after_a_reload_once_back_online(open_page, live_server, study):
    pid = "NETRELOAD1"
    page, run = _start(open_page, live_server, study, pid)
    step = _walk_to(page, ":qa")
    page.context.set_offline(True)
    picked = fill_page(page)
    _next_button(page).click()
    expect(_status(page)).to_have_text(OFFLINE)

    # Back online, but the network still drops every page sent; "Try again" sends it once more.
    posts: list[str] = []

    def drop_posts(route):
        if route.request.method == "POST":
            posts.append(route.request.post_data)
            route.abort("internetdisconnected")
        else:
            route.continue_()

    page.route(run, drop_posts)
    page.context.set_offline(False)
    expect(_status(page)).to_have_text(RETRYING)
    tried = len(posts)
    assert tried >= 1, "the online event sent the page again"
    # The next timed retry is at least 1.6 s after the one that just failed: within 0.7 s only the button sends.
    page.locator("form[data-step-form] [data-send-retry]").click()
    for _ in range(7):
        if len(posts) > tried:
            break
        page.wait_for_timeout(100)
    assert len(posts) == tried + 1 and posts[-1] == posts[0]
    # The participant gives up waiting and reloads.
    page.reload()
    page.wait_for_function("() => document.documentElement.hasAttribute('data-study-ready')")
    assert current_step(page) == step, "a reload must show the page the participant was on"
    for name, value in picked.items():
        expect(page.locator(f'form[data-step-form] input[name="{name}"]:checked')).to_have_value(value)
    expect(page.locator("[data-send-message]")).to_have_text("")
    assert _answers_of(pid, step) == []

    page.unroute(run)
    click_next(page)
    _assert_moved_one_page_on(pid, step, page)
    assert len(_answers_of(pid, step)) == _questions(picked) > 0


def test_it_shows_the_page_with_its_errors_when_the_server_refuses_the_answers(open_page, live_server, study):
    pid = "NET422"
    page, _run = _start(open_page, live_server, study, pid)
    step = _walk_to(page, ":qa")
    page.evaluate("document.querySelector('form[data-step-form]').noValidate = true")
    send_and_wait(page, _next_button(page).click)
    assert current_step(page) == step
    expect(page.locator(".message-error[role=alert]")).to_be_visible()
    expect(page.locator("[data-send-message]")).to_have_text("")
    # The page shown is fully working again: answered, it goes on.
    picked = fill_page(page)
    click_next(page)
    _assert_moved_one_page_on(pid, step, page)
    assert len(_answers_of(pid, step)) == _questions(picked) > 0
