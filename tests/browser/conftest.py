"""A real browser (Debian's chromium through Playwright) against pytest-django's live server."""

import os
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from tests.conftest import skip_or_fail
from tests.evaluation.factories import labelled_csv, make_dataset
from tests.loopback import live_server_without_nagle

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

    from tests.browser.study_helpers import FakeProlific

CHROMIUM = "/usr/bin/chromium"
live_server_without_nagle()
# What Playwright's driver disables with its own --disable-features (chromiumSwitches.ts). Chromium
# keeps only the last of several such switches, so the one below repeats them:
# test_it_keeps_every_feature_playwright_disables checks the launched browser's command line.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
# Chromium 156 renders each new window's address-bar popups ahead of time as two WebUI pages, in a
# renderer of their own. A test's every context is a new window, and a headless run never shows
# them: 0.5 s of CPU a context (10 contexts: 7.6 s of Chromium CPU with them, 2.6 s without).
UNSHOWN_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
# Quiet, sandbox-free flags: tests run as root in containers and must not reach the network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-features=" + ",".join(PLAYWRIGHT_DISABLED_FEATURES + UNSHOWN_FEATURES),
]

# Every page runs under the site's Content-Security-Policy; a violation Chrome reports
# (in the console, or as a securitypolicyviolation event) fails the test that caused it.
CSP_VIOLATIONS: list[str] = []
# Playwright's screenshots hide the caret by leaving style="" on every input, which htmx
# later copies into a history snapshot; an empty inline style does nothing and is not ours.
_EMPTY_HASH = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
_REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  if (event.effectiveDirective === "style-src-attr" && event.target.getAttribute &&
      event.target.getAttribute("style") === "") return;
  console.error("Content Security Policy violation: " + event.effectiveDirective + " blocked " +
    (event.blockedURI || "inline") + " at " + event.sourceFile + ":" + event.lineNumber +
    (event.target && event.target.outerHTML ? " in " + event.target.outerHTML.slice(0, 200) : ""));
});
"""


def watch_csp(context):
    """Record the CSP violations of every page of ``context``; returns the context."""
    context.add_init_script(script=_REPORT_VIOLATIONS)

    def on_console(message):
        if "Content Security Policy" in message.text and _EMPTY_HASH not in message.text:
            CSP_VIOLATIONS.append(f"{message.text} ({message.location.get('url', '')})")

    context.on("console", on_console)
    return context


def poll_now(page, interval_ms: int = 1000) -> None:
    """Fire the page's htmx polls now rather than waiting out their interval in real time: the page's
    clock (``page.clock.install()`` before it loaded) jumps one interval ahead. Time still flows, so a
    poll that answered just before the database changed is followed by the next at the usual
    interval: an ``expect`` after this never misses a change, it only waits less for it."""
    page.clock.fast_forward(interval_ms)


def assert_polling_stopped(page, polls: list, interval_ms: int = 1000) -> None:
    """A page that has stopped polling sends nothing while its clock jumps over three intervals
    (``polls``: the poll requests the test has seen the page send)."""
    before = len(polls)
    page.clock.fast_forward(3 * interval_ms)
    # What the jump sent reaches this process through the browser and the driver a moment later.
    page.wait_for_timeout(500)
    assert len(polls) == before, polls[before:]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    CSP_VIOLATIONS.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    violations, CSP_VIOLATIONS[:] = list(CSP_VIOLATIONS), []
    assert not violations, "Content-Security-Policy violations:\n" + "\n".join(violations)
    return result


@pytest.fixture
def dataset(db):
    """Three labelled expressions (tests/evaluation/factories.py) in the dataset "Browser corpus"."""
    return make_dataset(name="Browser corpus", csv=labelled_csv(3))


@dataclass
class SharedChromium:
    playwright: "Playwright"
    browser: "Browser"
    prolific: "FakeProlific"


@pytest.fixture(scope="package")
def chromium(django_db_setup):
    """One Playwright driver and one Chromium for the browser tests in a row; every test opens its
    own contexts (own cookies, storage, cache and connections) and has them closed after it.

    Starting the driver and Chromium cost about half a second of the machine's two cores per test.
    Chromium resolves app.prolific.com to the fake Prolific (study_helpers), one for the package:
    the resolver rule is a launch flag, so the server outlives the tests and each test reads only
    its own visits (the ``prolific`` fixture clears them).
    """
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        skip_or_fail(f"{CHROMIUM} is missing (apt-get install chromium)")
    from django.db import connections
    from playwright.sync_api import sync_playwright

    from tests.browser.study_helpers import fake_prolific

    # Playwright's sync API keeps an event loop running in the main thread for as long as it is
    # open; the tests' own ORM calls are still synchronous, so Django's guard would misfire.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    # While that loop runs, asgiref keeps Django's connections in a context variable instead of the
    # thread: the package's tests get other connection objects, which lack the snapshot of the
    # migrations' rows that serialized_rollback writes back after each flush. They are given it
    # (the test database, and so the snapshot, exists first: django_db_setup above).
    snapshots = {
        alias: connections[alias]._test_serialized_contents
        for alias in connections
        if hasattr(connections[alias], "_test_serialized_contents")
    }
    try:
        with fake_prolific() as prolific, sync_playwright() as playwright:
            for alias, snapshot in snapshots.items():
                connections[alias]._test_serialized_contents = snapshot
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, prolific.resolver_rule]
            )
            try:
                yield SharedChromium(playwright=playwright, browser=browser, prolific=prolific)
            finally:
                browser.close()
                # Those connections are unreachable once the loop stops: closed now, not left open.
                connections.close_all()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def browser(chromium):
    yield chromium.browser
    # What a test left open goes with it: the next test starts from a browser with no context.
    for context in list(chromium.browser.contexts):
        context.close()


@pytest.fixture
def prolific(chromium):
    """The fake Prolific (study_helpers.FakeProlific), its visits this test's only."""
    chromium.prolific.visits.clear()
    return chromium.prolific


@pytest.fixture
def open_page(browser, prolific):
    """``open_page(locale, **context_options)``: a participant's page in a fresh browser context."""
    from tests.browser.study_helpers import participant_pages

    return participant_pages(browser)


@pytest.fixture
def page(browser):
    context = watch_csp(browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900}))
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def sign_in(page, base_url: str, username: str, password: str) -> None:
    """Through the login page, as a person would; lands on the home page."""
    page.goto(base_url + "/accounts/login/")
    page.get_by_label("Username:", exact=True).fill(username)
    page.get_by_label("Password:", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name=f"Welcome, {username}").wait_for()


@pytest.fixture
def context_for(browser, live_server):
    """A signed-in page per person, each in its own browser context (own cookies, own session)."""
    from tests.conftest import PASSWORD

    contexts = []

    def open_for(user):
        context = watch_csp(
            browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900}, accept_downloads=True)
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        sign_in(page, live_server.url, user.get_username(), PASSWORD)
        return page

    yield open_for
    for context in contexts:
        context.close()


@pytest.fixture(scope="session", autouse=True)
def _close_live_server_sessions(django_db_setup, django_db_blocker):
    """Chromium keeps HTTP connections alive, and a live-server thread waiting on one
    still holds the database connection of its last request when the server stops;
    PostgreSQL then refuses to drop the test database. End those sessions first."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
