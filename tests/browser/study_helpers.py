"""A participant's hands in the browser: open the Prolific link, answer whatever page is shown, click Next.

The pages are answered through their real controls (checkboxes, radio buttons, the submit
button), so study.js runs as it does for a person.

Prolific itself is never reached. Playwright cannot intercept the target of a redirect, so
the browser is told to resolve app.prolific.com to a small HTTPS server on loopback, with a
throwaway self-signed certificate the test browser is told to accept.
"""

import json
import re
import ssl
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from study.models import Question
from study.services.participants import prolific_id_for
from tests.loopback import LoopbackHandler, LoopbackServer, serve_in_thread, stop_serving
from tests.waiting import wait_until

PROLIFIC_HOST = "app.prolific.com"
PROLIFIC_HTML = (
    b"<!doctype html><html><head><title>Prolific</title></head><body><h1>Submission complete</h1></body></html>"
)
PROLIFIC_URL = re.compile(r"^https://app\.prolific\.com/submissions/complete\?cc=")
STEP_INPUT = "form[data-step-form] input[type=hidden][name=step]"

# Test-only certificate and key for app.prolific.com (self-signed, never trusted anywhere else).
TEST_CERTIFICATE = """-----BEGIN CERTIFICATE-----
MIIBqjCCAVCgAwIBAgIUWnln1pOzhnaZNEQ+lGC0kG65wnowCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQYXBwLnByb2xpZmljLmNvbTAgFw0yNjExMjkxNjE3MTFaGA8y
MTI2MTEwNTE2MTcxMVowGzEZMBcGA1UEAwwQYXBwLnByb2xpZmljLmNvbTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABHrBad7I9J1Zrg3NADGRdhuXfdoMDRqa7M/d
/sFM98gOoYDZTrsmBYvstZ5ngpOXLsC0kuETy2BvA6e0ji6AOa2jcDBuMB0GA1Ud
DgQWBBSBYB10g43xBGQL4yBdTM/KyRYtHDAfBgNVHSMEGDAWgBSBYB10g43xBGQL
4yBdTM/KyRYtHDAPBgNVHRMBAf8EBTADAQH/MBsGA1UdEQQUMBKCEGFwcC5wcm9s
aWZpYy5jb20wCgYIKoZIzj0EAwIDSAAwRQIgXxbTQ1g273F7jCjvOcbM0ITrKIVe
J4Iho+6BumfXiNUCIQD9nb3D3z3i9v4Vc87vUMIv2IZDmFJY9SmyE9blX1PRfw==
-----END CERTIFICATE-----
"""
TEST_KEY = """-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQguiKYLSNc9vrT0B46
is4tEt9U12mynhoIEHmOWamCTu2hRANCAAR6wWneyPSdWa4NzQAxkXYbl33aDA0a
muzP3f7BTPfIDqGA2U67JgWL7LWeZ4KTly7AtJLhE8tgbwOntI4ugDmt
-----END PRIVATE KEY-----
"""


@dataclass
class FakeProlific:
    port: int
    visits: list[str] = field(default_factory=list)

    @property
    def resolver_rule(self) -> str:
        return f"--host-resolver-rules=MAP {PROLIFIC_HOST} 127.0.0.1:{self.port}"


@contextmanager
def fake_prolific():
    """Prolific's completion page on a loopback HTTPS port; records every URL asked for."""
    with tempfile.TemporaryDirectory(prefix="fake-prolific-") as folder:
        certificate, key = Path(folder) / "cert.pem", Path(folder) / "key.pem"
        certificate.write_text(TEST_CERTIFICATE)
        key.write_text(TEST_KEY)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(certificate, key)
    visits: list[str] = []

    class Handler(LoopbackHandler):
        def do_GET(self):  # noqa: N802 (the name http.server dispatches to)
            if self.path == "/favicon.ico":
                self.send_error(404)
                return
            visits.append(f"https://{PROLIFIC_HOST}{self.path}")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PROLIFIC_HTML)))
            self.end_headers()
            self.wfile.write(PROLIFIC_HTML)

    server = LoopbackServer(("127.0.0.1", 0), Handler)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = serve_in_thread(server, name="fake-prolific-completion")
    try:
        yield FakeProlific(port=server.server_address[1], visits=visits)
    finally:
        stop_serving(server, thread)


def participant_pages(browser):
    """``open_page(locale, **context_options)``: a page in a fresh browser context (own cookies, own
    localStorage) per call, on ``browser`` (tests/browser/conftest.py's, where app.prolific.com is the
    fake Prolific) with the fake's self-signed certificate accepted."""
    from tests.browser.conftest import watch_csp

    def open_page(locale: str = "en-US", **options):
        context = watch_csp(
            browser.new_context(
                **{"locale": locale, "viewport": {"width": 1280, "height": 900}, "ignore_https_errors": True, **options}
            )
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        return page

    return open_page


def entry_link(base: str, slug: str, *, pid: str, group: str) -> str:
    """Prolific's link for the participant the label ``pid`` names (``prolific_id_for(pid)`` is its
    PROLIFIC_PID): ids of Prolific's shape, which the entry link requires."""
    query = urlencode(
        {
            "PROLIFIC_PID": prolific_id_for(pid),
            "STUDY_ID": prolific_id_for("prolific-study"),
            "SESSION_ID": prolific_id_for(f"session-{pid}"),
            "group": group,
        }
    )
    return f"{base}/s/{slug}/?{query}"


def current_step(page) -> str | None:
    """The hidden step key of the page shown, or None when the page has no step form (Prolific, a message)."""
    step = page.locator(STEP_INPUT)
    if step.count() == 0:
        return None
    return step.first.get_attribute("value")


def _radio(page, name: str, value: str):
    return page.locator(f"form[data-step-form] input[type=radio][name={json.dumps(name)}][value={json.dumps(value)}]")


def radio_groups(page) -> dict[str, list[str]]:
    """Radio group name -> its values, in page order."""
    return page.eval_on_selector_all(
        "form[data-step-form] input[type=radio]",
        "els => els.reduce((groups, e) => { (groups[e.name] = groups[e.name] || []).push(e.value); return groups; }, {})",
    )


def choice_for(name: str, options: list[str], *, qc_wrong: bool) -> str:
    """The correct option of a question (from the database), or a wrong one for attention checks when asked."""
    question = Question.objects.select_related("artwork").get(pk=int(name[1:].split("-", 1)[0]))
    if qc_wrong and question.artwork.is_qc:
        return next(option for option in options if option != question.answer)
    return question.answer


def fill_page(page, *, qc_wrong: bool = False, names=None) -> dict[str, str]:
    """Answer the page shown the way a person would, by clicking: the first symbol, the correct answer
    (a wrong one on attention checks with ``qc_wrong``), the first option of every other radio group.
    Only the radio groups ``names`` when given; returns radio name -> value picked."""
    step = current_step(page)
    picked: dict[str, str] = {}
    if step.split(":")[-1] in ("symbols", "post_symbols"):
        page.locator("form[data-step-form] input[type=checkbox][name=symbols]").first.check()
        return picked
    groups = radio_groups(page)
    for name in groups if names is None else names:
        options = groups[name]
        value = choice_for(name, options, qc_wrong=qc_wrong) if name.endswith("-choice") else options[0]
        _radio(page, name, value).check()
        picked[name] = value
    return picked


def click_next(page) -> None:
    """Send the page with its own button and wait for whatever the server shows next."""
    form = page.locator("form[data-step-form]")
    if current_step(page) == "consent":
        button = form.locator("button[name=consent][value=yes]")
    else:
        button = form.locator("button[type=submit]").first
    send_and_wait(page, button.click)


# study.js writes the server's answer into the document instead of navigating, and the browser
# navigates only after a redirect (Prolific at the end, or the current page after a stale one);
# either way the <html> element marked before sending is gone once the next page is there.
_MARK_SENT = "document.documentElement.setAttribute('data-test-sent', '')"
_NEXT_PAGE_READY = """() => {
  const html = document.documentElement;
  if (!html || html.hasAttribute('data-test-sent') || document.readyState === 'loading') return false;
  return html.hasAttribute('data-study-ready') || !document.querySelector('script[src*="js/study"]');
}"""


# The retry button shows while study.js waits to send the page again (retrying or offline), and
# hides as an attempt starts: the timer for the next attempt is set by then.
_WAITING_TO_RETRY = "() => !!document.querySelector('form[data-step-form] [data-send-retry]:not([hidden])')"
# study.js's longest wait between attempts (8 s) with its jitter (x 1.2).
_LONGEST_RETRY_MS = 9_600


def send_and_wait(page, send, *, timeout: float = 15_000, fake_clock: bool = False) -> None:
    """Run ``send`` (a click that sends the page) and wait until the page that follows is shown,
    with study.js ready on it."""
    page.evaluate(_MARK_SENT)
    send()
    wait_for_next_page(page, timeout=timeout, fake_clock=fake_clock)


def wait_for_next_page(page, *, timeout: float = 15_000, fake_clock: bool = False) -> None:
    """With ``fake_clock`` (the test installed Playwright's clock on the page), each wait of study.js
    before it sends the page again is passed at once; a request in flight is left alone, so its
    45 s watchdog never fires early."""
    if not fake_clock:
        page.wait_for_function(_NEXT_PAGE_READY, timeout=timeout)
        return

    def shown_passing_retry_waits() -> bool:
        if page.evaluate(_NEXT_PAGE_READY):
            return True
        if page.evaluate(_WAITING_TO_RETRY):
            retry_now(page)
        return False

    wait_until(
        shown_passing_retry_waits,
        timeout=timeout / 1000,
        interval=0.02,
        explain=lambda: f"no next page; the page is at {current_step(page)}",
    )


def retry_now(page) -> None:
    """Pass study.js's wait before its next attempt on the page's fake clock: the attempt starts now."""
    page.clock.run_for(_LONGEST_RETRY_MS)


def take_session(page, *, qc_wrong: bool = False, on_page=None, max_pages: int = 200) -> list[str]:
    """Answer and send every page until Prolific's completion URL; returns the step keys in order.

    ``on_page(page, step)`` runs on each page before it is answered; it may answer and send the
    page itself by returning True.
    """
    steps: list[str] = []
    for _ in range(max_pages):
        if PROLIFIC_URL.match(page.url):
            return steps
        step = current_step(page)
        assert step is not None, f"no step form at {page.url}: {page.content()[:500]}"
        steps.append(step)
        if on_page is not None and on_page(page, step):
            continue
        fill_page(page, qc_wrong=qc_wrong)
        click_next(page)
    raise AssertionError(f"the session did not end after {max_pages} pages: {steps[-5:]}")
