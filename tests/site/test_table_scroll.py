"""Every table of every template sits in a scroll box of its own (#23 item 5): a table wider than
its card scrolls inside the box (static/css/vivid.css, .table-scroll) instead of running off the
page, and the box is a labelled region a keyboard can focus. The browser test
(tests/browser/test_newcomer_tables.py) measures the pages; this reads every template, including
the pages no demo reaches."""

import re
from pathlib import Path

from django.conf import settings

TEMPLATES = Path(settings.BASE_DIR) / "templates"
WRAPPER = re.compile(
    # The label: text or template tags (a translated label may quote an apostrophe: "Cohen's kappa").
    r'<div class="table-scroll" tabindex="0" role="region" aria-label="(?:\{%[^%]*%\}|\{\{[^}]*\}\}|[^"{])+">\s*'
    r"(?:\{#.*?#\}\s*)?$",
    re.DOTALL,
)


def test_it_puts_every_table_of_every_template_in_a_labelled_scroll_box():
    bare, tables = [], 0
    for path in sorted(TEMPLATES.rglob("*.html")):
        text = path.read_text()
        for match in re.finditer(r"<table\b", text):
            tables += 1
            before = text[: match.start()]
            opening = before[before.rfind("<div") :]
            if not WRAPPER.match(opening):
                bare.append(f"{path.relative_to(TEMPLATES)}:{before.count(chr(10)) + 1}")
    assert tables > 40
    assert bare == []


def test_it_styles_the_scroll_box_so_its_scrollbar_shows():
    css = (Path(settings.BASE_DIR) / "static" / "css" / "vivid.css").read_text()
    assert re.search(r"\.table-scroll\s*\{[^}]*overflow-x:\s*auto", css)
    assert re.search(r"\.table-scroll::-webkit-scrollbar\s*\{[^}]*height:", css)
