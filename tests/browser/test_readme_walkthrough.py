"""The README's "Ten minutes with the demo" (#23 item 13), walked in Chromium as it is written.

The demo is seeded by the commands `make demo` runs (seed_demo, seed_demo_study with the bundled
embedding model, seed_demo_artworks); then each role does what the walkthrough says, clicking the
links and buttons it names: an annotator answers an item, a Chinese participant reaches the two
descriptions side by side, a researcher runs the built-in model on one item and opens the round's
statistics. The screenshots in the README are this test's: VIVID_WRITE_SCREENSHOTS=1 writes them to
docs/screenshots/.
"""

import io
import os
import re
import shutil

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from evaluation.models import Run, RunStatus
from study.models import Study
from study.services.participants import prolific_id_for
from tests.conftest import ROOT, skip_or_fail

from .conftest import CHROMIUM, sign_in, watch_csp
from .study_helpers import click_next, current_step, fill_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.model,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

DEMO_PASSWORD = "vivid-demo"
README = (ROOT / "README.md").read_text()
SCREENSHOTS = ROOT / "docs" / "screenshots"
SHOTS = ("annotator.png", "participant.png", "researcher.png")


def _walkthrough() -> str:
    text = README.split("## Ten minutes with the demo", 1)[1].split("\n## ", 1)[0]
    return " ".join(text.split())


def _shoot(page, name: str) -> None:
    if os.environ.get("VIVID_WRITE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=False)


@pytest.fixture
def demo(settings, tmp_path, monkeypatch):
    """The demo as `make demo` leaves it: accounts, dataset, round, a live study, artworks."""
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        skip_or_fail(f"{CHROMIUM} is missing (apt-get install chromium)")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.VAR_DIR = tmp_path / "var"
    for command, *args in (("seed_demo", "--no-summary"), ("seed_demo_study", "--no-links"), ("seed_demo_artworks",)):
        call_command(command, *args, stdout=io.StringIO(), stderr=io.StringIO())
    return Study.objects.get(slug="demo-artworks")


def test_it_starts_the_readme_with_the_walkthrough_its_screenshots_and_a_table_of_contents():
    head = README.split("\n## ", 2)
    # Title and one paragraph, then the contents, then the walkthrough.
    assert head[1].startswith("Contents") and head[2].startswith("Ten minutes with the demo"), head[1][:80]
    headings = re.findall(r"^## (.+)$", README, re.M)
    anchors = re.findall(r"^- \[(.+?)\]\(#([a-z0-9-]+)\)$", head[1], re.M)
    assert [title for title, _ in anchors] == [h for h in headings if h != "Contents"]
    for title, anchor in anchors:
        assert anchor == re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-"), title
    walkthrough = _walkthrough()
    for shot in SHOTS:
        assert f"(docs/screenshots/{shot})" in walkthrough, shot
        assert (SCREENSHOTS / shot).stat().st_size > 10_000, shot
    assert all(f" {n}. **" in walkthrough for n in (1, 2, 3))


def test_it_walks_the_readme_walkthrough_as_each_role(demo, live_server, eager, browser, open_page):
    walkthrough = _walkthrough()

    def page_for(locale="en-US"):
        context = watch_csp(browser.new_context(locale=locale, viewport={"width": 1280, "height": 860}))
        page = context.new_page()
        page.set_default_timeout(60_000)
        return page

    # 1. Annotator: Review on the home page, one answer, the next item comes.
    assert "annotator_a" in walkthrough and "**Review**" in walkthrough and "**Submit and go on**" in walkthrough
    page = page_for()
    sign_in(page, live_server.url, "annotator_a", DEMO_PASSWORD)
    page.get_by_role("link", name="Review", exact=True).first.click()
    first_text = page.locator("#review-expression").inner_text()
    page.locator("input[name=theme]").first.check()
    for group in page.locator("[data-trait-row]").all():
        group.locator("input").first.check()
    _shoot(page, SHOTS[0])
    page.get_by_role("button", name=re.compile("Submit and go on")).click()
    expect(page.locator("#review-expression")).not_to_have_text(first_text)
    page.context.close()

    # 2. Participant: the Chinese link, to the two descriptions side by side.
    assert "group=chinese" in walkthrough and "side by side" in walkthrough
    page = open_page("en-US")
    link = (
        f"{live_server.url}/s/demo-artworks/?PROLIFIC_PID={prolific_id_for('walkthrough-chinese')}"
        f"&STUDY_ID={prolific_id_for('demo')}&SESSION_ID={prolific_id_for('walkthrough-chinese-session')}"
        "&group=chinese"
    )
    page.goto(link)
    for _ in range(60):
        step = current_step(page)
        assert step is not None, page.url
        # The screenshot's comparison: matched sentences and a term glossed in Chinese.
        if step.endswith(":compare") and page.locator(".description .gloss").count():
            break
        fill_page(page)
        click_next(page)
    else:
        raise AssertionError("the comparison page never came")
    expect(page.locator(".description .match").first).to_be_visible()
    expect(page.locator(".description .gloss").first).to_be_visible()
    _shoot(page, SHOTS[1])

    # 3. Researcher: the built-in model on one item, then the round's statistics.
    assert "**New generation run**" in walkthrough and "**Agreement statistics**" in walkthrough
    page = page_for()
    sign_in(page, live_server.url, "researcher", DEMO_PASSWORD)
    page.get_by_role("link", name="runs", exact=True).click()
    page.get_by_role("button", name="New generation run").first.click()
    page.get_by_label("Limit").fill("1")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/runs/\d+/"))
    run = Run.objects.get()
    expect(page.get_by_text(str(RunStatus.DONE.label), exact=True).first).to_be_visible(timeout=180_000)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.items.filter(response__gt="").count() == 1
    page.reload()
    _shoot(page, SHOTS[2])
    page.goto(live_server.url + "/")
    page.locator("li", has_text="Agreement statistics:").get_by_role("link", name="Demo round").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Demo round")
    expect(page.get_by_role("button", name="Download CSV")).to_be_visible()
    page.context.close()
