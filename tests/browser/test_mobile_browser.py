"""Participants on phones: a whole study walked by taps at 360 x 740 and 390 x 844, page weight, image copies.

A touch-screen Chromium context (``is_mobile``, ``has_touch``, a 2x or 3x screen) takes a session
from the Prolific link to Prolific's completion URL, tapping the labels of the answers and the
Next button. On every page: nothing scrolls sideways, every button, answer label and link is at
least 44 px high and wide, the artwork fits the screen and comes as one of its smaller copies,
the two descriptions stack, and the page transfers at most 150 KB before its artwork image with
the browser cache off (a first visit). A screenshot of each step is kept in
var/artifacts/mobile/<viewport>/<nn>-<step>.png, in CSS pixels: at the screen's 2x or 3x, encoding
the whole pages took Chromium about 1.5 s of a walk's 7.5 s.
"""

import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.base import ContentFile
from playwright.sync_api import expect

from study.models import Participant, ParticipantStatus
from study.services.images import study_image_variants_make
from study.services.participants import prolific_id_for
from tests.study.factories import make_study, package_dict
from tests.study.test_image_variants import photo

from .page_weight import PAGE_BUDGET_BYTES, TransferLog, cold_cache, weights_table
from .study_helpers import (
    PROLIFIC_URL,
    choice_for,
    current_step,
    entry_link,
    participant_pages,
    radio_groups,
    send_and_wait,
)

# In the PostgreSQL pass of `make test` (pg_pass), so that the two passes take about as long.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.pg_pass,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

ARTIFACTS = Path(django_settings.BASE_DIR) / "var" / "artifacts" / "mobile"
# An artwork as a museum photographs it: wider than the widest copy, so a phone must never get it.
ORIGINAL = (2000, 1400)
MIN_TARGET = 44
LONG_URL = (
    "https://commons.wikimedia.org/wiki/File:Red-crowned_cranes_in_the_snow_(Qing_dynasty_handscroll,_detail).jpg"
)
LONG_WORD = "Donaudampfschifffahrtsgesellschaftskapitänsmützenabzeichen"


def messy_package(slug: str) -> dict:
    """The factory study with what real packages carry: a long title, a URL and a very long word in a
    description, a long word in an answer's label."""
    package = package_dict(
        slug=slug, n_american=2, n_chinese=2, n_qc=1, artworks_per_participant=3, qc_per_participant=1
    )
    for artwork in package["artworks"]:
        artwork["title"] += ": Cranes over the river at dawn, a handscroll in ink and colour on silk"
        artwork["elements"][1]["name"] += f" ({LONG_WORD})"
        for description in artwork["descriptions"]:
            if description["speaker"] == "pragmatic":
                description["text"] += f" See {LONG_URL} and the {LONG_WORD}."
    return package


@pytest.fixture
def study(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    study = make_study(messy_package("phone-artworks"))
    for artwork in study.artworks.all():
        artwork.image.save(f"phone-{artwork.key}.jpg", ContentFile(photo(ORIGINAL, quality=88)))
    study_image_variants_make(study=study)
    return study


@pytest.fixture
def phone(browser, prolific):
    """``open_phone(width, height, scale)``: a page in a fresh touch-screen context of that size."""

    open_page = participant_pages(browser)

    def open_phone(width: int, height: int, scale: float):
        page = open_page(
            viewport={"width": width, "height": height}, device_scale_factor=scale, is_mobile=True, has_touch=True
        )
        page.set_default_timeout(20_000)
        return page

    return open_phone


# Measured in the page: sideways scroll, controls under 44 px, the artwork image, the stacked descriptions.
LAYOUT = """() => {
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const box = (el) => { const r = el.getBoundingClientRect();
    return {top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right, width: r.width, height: r.height}; };
  const targets = [...document.querySelectorAll(
    "main button, main [role=button], main form label, main summary, main a[href], dialog[open] button")]
    .filter(visible)
    .map((el) => ({what: el.tagName + " " + el.textContent.trim().slice(0, 40), ...box(el)}));
  const image = document.querySelector(".artwork img");
  const panels = [...document.querySelectorAll(".compare .description-panel")].map((panel) => ({
    ...box(panel), heading: box(panel.querySelector("h2")), label: panel.querySelector("h2").textContent.trim()}));
  const glosses = [...document.querySelectorAll(".gloss")].map((el) => ({...box(el),
    size: parseFloat(getComputedStyle(el).fontSize)}));
  return {
    scrollWidth: document.scrollingElement.scrollWidth, innerWidth: innerWidth,
    targets, panels, glosses,
    image: image && {...box(image), src: image.currentSrc, natural: image.naturalWidth, srcset: image.srcset},
  };
}"""


def check_layout(page, step: str, *, original_seen: bool = False) -> dict:
    layout = page.evaluate(LAYOUT)
    width = layout["innerWidth"]
    assert layout["scrollWidth"] <= width, f"{step}: the page scrolls sideways ({layout['scrollWidth']} > {width})"
    small = [t for t in layout["targets"] if t["height"] < MIN_TARGET - 0.5 or t["width"] < MIN_TARGET - 0.5]
    assert not small, f"{step}: targets under {MIN_TARGET} px: {small}"
    for target in layout["targets"]:
        assert target["right"] <= width + 0.5, f"{step}: {target['what']} runs off the screen"
    image = layout["image"]
    if image:
        assert 0 < image["width"] <= width and image["right"] <= width, f"{step}: the artwork is wider than the screen"
        assert image["natural"] > 0, f"{step}: the artwork did not load"
        # One of the copies, never the 2,000 px original; but once the full-size image was opened,
        # study.js writes each next page into the same document, whose memory cache Chromium
        # prefers to a smaller srcset candidate, at no transfer.
        copy = re.search(r"\?w=(480|960|1600)$", image["src"])
        assert copy or (original_seen and image["src"].endswith("/")), f"{step}: the image came as {image['src']}"
        assert "480w" in image["srcset"]
    if layout["panels"]:
        first, second = layout["panels"]
        # Stacked, each whole on the screen, each with its own label clear of the other panel.
        assert second["top"] >= first["bottom"], f"{step}: the descriptions are not stacked"
        for panel in (first, second):
            assert panel["left"] >= 0 and panel["right"] <= width
            assert panel["top"] <= panel["heading"]["top"] and panel["heading"]["bottom"] <= panel["bottom"]
        assert " A" in first["label"] and " B" in second["label"]
    for gloss in layout["glosses"]:
        # Shown inline in the text (no hover needed), inside the screen, at a readable size.
        assert gloss["right"] <= width + 0.5 and gloss["size"] >= 14
    return layout


def tap_answers(page, step: str) -> None:
    """Answer the page by tapping the answers' labels, as a thumb would: the first symbol, the
    correct option of each question, the first option of every other group."""
    form = page.locator("form[data-step-form]")
    if step.split(":")[-1] in ("symbols", "post_symbols"):
        form.locator("label", has=page.locator("input[name=symbols]")).first.tap()
        expect(form.locator("input[name=symbols]:checked")).to_have_count(1)
        return
    for name, options in radio_groups(page).items():
        value = choice_for(name, options, qc_wrong=False) if name.endswith("-choice") else options[0]
        radio = f'input[type=radio][name="{name}"][value="{value}"]'
        form.locator("label", has=page.locator(radio)).tap()
        expect(form.locator(radio)).to_be_checked()


def tap_next(page, step: str) -> None:
    form = page.locator("form[data-step-form]")
    button = form.locator("button[name=consent][value=yes]") if step == "consent" else form.locator("button").first
    send_and_wait(page, button.tap)
    # The next page is written into the document (study.js), not loaded: its load event is not
    # waited for, so wait for its images before measuring the layout.
    page.wait_for_function("() => Array.from(document.images).every(image => image.complete)")


def check_enlarge(page, shots: Path, n: int) -> None:
    """The artwork opens at full size over the page and closes again, by taps."""
    page.locator(".artwork-enlarge").tap()
    dialog = page.locator("dialog.artwork-dialog")
    expect(dialog).to_be_visible()
    full = dialog.locator("img")
    expect(full).to_have_js_property("complete", True)
    assert full.evaluate("img => img.naturalWidth") == ORIGINAL[0]
    box = full.bounding_box()
    assert box["width"] <= page.viewport_size["width"]
    check_layout(page, "enlarged")
    page.screenshot(path=shots / f"{n:02d}-enlarged.png", scale="css")
    dialog.locator("button").tap()
    expect(dialog).to_be_hidden()


VIEWPORTS = [
    pytest.param(360, 740, 3, "chinese", id="360x740"),
    pytest.param(390, 844, 2, "american", id="390x844"),
]


@pytest.mark.parametrize(("width", "height", "scale", "group"), VIEWPORTS)
def test_it_walks_a_whole_study_by_taps_on_a_phone(phone, prolific, live_server, study, width, height, scale, group):
    shots = ARTIFACTS / f"{width}x{height}"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    page = phone(width, height, scale)
    cold_cache(page)
    transfers = TransferLog(page)
    pid = f"PHONE{width}"
    page.goto(entry_link(live_server.url, study.slug, pid=pid, group=group), wait_until="load")

    steps, weights, enlarged = [], [], False
    for n in range(1, 60):
        if PROLIFIC_URL.match(page.url):
            page.screenshot(path=shots / f"{n:02d}-prolific.png", scale="css")
            break
        step = current_step(page)
        assert step is not None, f"no step form at {page.url}"
        steps.append(step)
        weights.append(transfers.take(step))
        assert weights[-1].page_bytes <= PAGE_BUDGET_BYTES, (
            f"{step}: {weights[-1].page_bytes:,} bytes before the image: {weights[-1].files}"
        )
        check_layout(page, step, original_seen=enlarged)
        page.screenshot(path=shots / f"{n:02d}-{step.replace(':', '-')}.png", full_page=True, scale="css")
        if not enlarged and step.endswith(":symbols"):
            check_enlarge(page, shots, n)
            transfers.take("enlarged")  # the full-size image is no part of the next page
            enlarged = True
        if step not in ("consent",) and not step.endswith("instructions"):
            tap_answers(page, step)
        tap_next(page, step)
    else:
        raise AssertionError(f"the session did not end: {steps[-5:]}")

    participant = Participant.objects.get(study=study, prolific_pid=prolific_id_for(pid))
    assert participant.status == ParticipantStatus.COMPLETED
    assert steps == ["consent", *participant.plan]
    assert enlarged
    kinds = {step.split(":")[-1] for step in steps}
    assert kinds >= {"consent", "instructions", "symbols", "qa", "post_symbols", "post_qa", "compare"}
    shots_taken = sorted(path.name for path in shots.glob("*.png"))
    assert len(shots_taken) == len(steps) + 2  # and the enlarged image, and Prolific's page
    print(f"\n{width}x{height} at {scale}x, first visit of each page:", *weights_table(weights), sep="\n")


def test_it_sends_a_360_px_screen_the_480_px_copy(phone, live_server, study):
    page = phone(360, 740, 1)
    cold_cache(page)
    transfers = TransferLog(page)
    page.goto(entry_link(live_server.url, study.slug, pid="PHONE-SMALL", group="american"), wait_until="load")
    tap_next(page, "consent")
    tap_next(page, "instructions")
    transfers.take("instructions")
    page.reload(wait_until="load")
    weight = transfers.take(current_step(page))

    image = page.locator(".artwork img")
    assert image.evaluate("img => img.currentSrc").endswith("?w=480")
    artwork = study.artworks.get(key=weight.image_url.split("/images/")[1].split("/")[0])
    (small,) = [v for v in artwork.image_variants if v["width"] == 480]
    stored = Path(django_settings.MEDIA_ROOT, small["name"]).stat().st_size
    # The copy's own bytes and its headers, a fraction of the original's.
    assert stored < weight.image_bytes < stored + 2048
    assert weight.image_bytes < Path(django_settings.MEDIA_ROOT, artwork.image.name).stat().st_size / 4
    assert weight.page_bytes <= PAGE_BUDGET_BYTES


def test_the_other_participant_pages_fit_a_360_px_screen(phone, live_server, study, settings):
    """The group question (a link without group=), a refused link's message and the local end page."""
    settings.PROLIFIC_COMPLETE_LOCAL = True
    shots = ARTIFACTS / "360x740-other"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    page = phone(360, 740, 3)

    link = entry_link(live_server.url, study.slug, pid="PHONE-GROUP", group="american").replace("&group=american", "")
    page.goto(link, wait_until="load")
    if current_step(page) == "consent":
        tap_next(page, "consent")
    assert current_step(page) == "group"
    check_layout(page, "group")
    page.screenshot(path=shots / "01-group.png", full_page=True, scale="css")

    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=not-a-prolific-id", wait_until="load")
    expect(page.locator("article[data-reason]")).to_be_visible()
    check_layout(page, "message")
    page.screenshot(path=shots / "02-message.png", full_page=True, scale="css")

    page.goto(f"{live_server.url}/s/{study.slug}/done/?cc={study.completion_code}", wait_until="load")
    expect(page.get_by_test_id("prolific-url")).to_be_visible()
    check_layout(page, "local done")
    page.screenshot(path=shots / "03-local-done.png", full_page=True, scale="css")
