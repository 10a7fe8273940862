"""A real browser (Debian's chromium through Playwright) against pytest-django's live server."""

import os
import shutil

import pytest

from tests.conftest import skip_or_fail

CHROMIUM = "/usr/bin/chromium"
# Quiet, sandbox-free flags: tests run as root in containers and must not reach the network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def browser(monkeypatch):
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        skip_or_fail(f"{CHROMIUM} is missing (apt-get install chromium)")
    # Playwright's sync API keeps an event loop in the main thread; the test's
    # own ORM calls are still synchronous, so Django's guard would misfire.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()
