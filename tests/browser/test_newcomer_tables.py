"""Wide tables at laptop widths (#23 item 5): every table of every page a role reaches in the walked
demo either fits its card or scrolls inside it with a scrollbar that shows, at 1280 and 1024 px; its
scroll box is a labelled region a keyboard can focus and scroll.

Chromium draws overlay scrollbars on macOS and Windows 11 (and none in a headless run): they show
only while scrolling, so a newcomer sees a table cut at the card's edge. A scrollbar styled with
::-webkit-scrollbar is always drawn; the test starts Chromium with scrollbars drawn and asks for
both: room taken by the scrollbar, and the style that keeps it drawn under overlay scrollbars.
"""

import pytest
from django.urls import reverse

from artworks.models import ArtworkPipelineRun
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, sign_in, watch_csp
from tests.conftest import PASSWORD
from tests.site.demo_world import ROLES, build_demo_world, crawl, signed_in

# In the PostgreSQL pass of `make test` (pg_pass), so that the two passes take about as long.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.pg_pass,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning"),
]

WIDTHS = (1280, 1024)

# Each table of the page (closed <details> opened first): its box, whether it fits, whether the
# box scrolls, how tall its scrollbar is and whether it is styled (so drawn even as an overlay
# scrollbar), and whether the box stays inside the window.
TABLES = """() => {
  document.querySelectorAll("main details").forEach((details) => { details.open = true; });
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll("main table")].map((table) => {
    const box = table.parentElement;
    const style = getComputedStyle(box);
    const rect = box.getBoundingClientRect();
    return {
      table: (table.querySelector("caption, th") || table).textContent.trim().slice(0, 60),
      fits: table.getBoundingClientRect().width <= box.clientWidth + 1,
      scrolls: ["auto", "scroll"].includes(style.overflowX),
      scrollbar: box.offsetHeight - box.clientHeight - parseFloat(style.borderTopWidth) - parseFloat(style.borderBottomWidth),
      styled: getComputedStyle(box, "::-webkit-scrollbar").height !== "auto" &&
        getComputedStyle(box, "::-webkit-scrollbar-thumb").backgroundColor !== "rgba(0, 0, 0, 0)",
      inside: rect.left >= -1 && rect.right <= width + 1,
      wrapper: box.classList.contains("table-scroll") && box.tabIndex === 0 &&
        box.getAttribute("role") === "region" && !!(box.getAttribute("aria-label") || "").trim(),
    };
  });
}"""


@pytest.fixture(scope="module")
def drawn_scrollbars_browser(chromium):
    """Chromium as a person runs it: scrollbars drawn (Playwright's headless default hides them, and
    the flag is the browser's, not a context's: a second Chromium, on the package's driver)."""
    browser = chromium.playwright.chromium.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS, ignore_default_args=["--hide-scrollbars"]
    )
    yield browser
    browser.close()


def test_it_fits_or_scrolls_every_table_inside_its_card_for_every_role(
    drawn_scrollbars_browser, live_server, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    world = build_demo_world()
    for user in world.users.values():
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
    reports = tuple(reverse("artworks:report", args=[run.pk]) for run in ArtworkPipelineRun.objects.all())

    problems, checked = [], 0
    for role in ROLES:
        pages = crawl(signed_in(world.users[role]), also=reports if role == "researcher" else ())
        with_tables = [path for path, html in pages.items() if "<table" in html]
        assert with_tables, role
        # One sign-in and one load per page: the window is resized to the next width, and the layout
        # (CSS only) is measured again, rather than a second browser loading every page again.
        context = watch_csp(
            drawn_scrollbars_browser.new_context(locale="en-US", viewport={"width": WIDTHS[0], "height": 900})
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        sign_in(page, live_server.url, role, PASSWORD)
        for path in with_tables:
            page.set_viewport_size({"width": WIDTHS[0], "height": 900})
            page.goto(live_server.url + path)
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                # The page is laid out again at this width (less a drawn vertical scrollbar).
                assert width - 30 <= page.evaluate("document.documentElement.clientWidth") <= width, path
                for table in page.evaluate(TABLES):
                    checked += 1
                    visible = table["fits"] or (table["scrolls"] and table["scrollbar"] > 0 and table["styled"])
                    if not (visible and table["inside"] and table["wrapper"]):
                        problems.append({"role": role, "width": width, "path": path, **table})
        context.close()
    assert checked > 50
    assert problems == []


def test_it_scrolls_a_wide_table_with_the_keyboard(drawn_scrollbars_browser, live_server, researcher):
    """The models table is wider than a 1024 px window: Tab reaches its box, and the arrow keys scroll it."""
    context = watch_csp(drawn_scrollbars_browser.new_context(locale="en-US", viewport={"width": 1024, "height": 900}))
    page = context.new_page()
    page.set_default_timeout(15_000)
    sign_in(page, live_server.url, researcher.username, PASSWORD)
    page.goto(live_server.url + reverse("llm:model_list"))
    box = page.get_by_role("region", name="Models")
    assert box.evaluate("(box) => box.scrollWidth > box.clientWidth")
    box.focus()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    # Chromium scrolls smoothly: the keys start an animation, and scrollLeft moves a frame or more later.
    page.wait_for_function("(box) => box.scrollLeft > 0", arg=box.element_handle(), timeout=5_000)
    context.close()
