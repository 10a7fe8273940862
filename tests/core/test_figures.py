"""core.figures: the shared drawing of the figures for the paper (fonts, intervals, files)."""

import warnings

import pytest

from core import figures
from core.figures import Bar, Chart, FigureFontWarning, Group, Line, LinePanel, Panel, UnknownFigure, chart_file
from tests.figures import MISSING_GLYPH, assert_pdf_has, assert_svg_has, pdf_info


def chart() -> Chart:
    return Chart(
        title="Tỷ lệ ưu tiên · 成语",
        caption="n = 42 người tham gia; 95% intervals",
        panels=[
            Panel(
                title="Hiểu biết",
                value_label="Tỷ lệ (0–1)",
                category_label="Nhóm",
                groups=[
                    Group("Tất cả", [Bar(0.62, low=0.5, high=0.72, n=42)]),
                    Group("中国参与者", [Bar(0.4, series=1, low=0.2, high=0.6, n=20)]),
                    Group("Trống", [Bar(None)]),
                ],
                reference=0.5,
            ),
            Panel(
                title="κ",
                value_label="Cohen's κ",
                category_label="Row",
                groups=[Group("a", [Bar(-0.2, low=-0.4, high=0.1, n=5), Bar(0.5, series=1, n=9)])],
                limits=(-0.4, 1.0),
            ),
        ],
        series=["ăn quả", "吃果子"],
    )


def draw(fmt: str) -> tuple[bytes, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        body = chart_file(chart(), fmt=fmt)
    return body, [str(w.message) for w in caught]


@pytest.fixture
def no_cjk_font(monkeypatch):
    monkeypatch.setattr(figures, "CJK_FAMILIES", ("No Such CJK Font",))
    figures.font_families.cache_clear()
    yield
    figures.font_families.cache_clear()


def test_it_draws_vietnamese_and_chinese_as_glyph_outlines_without_missing_glyphs():
    body, caught = draw("svg")
    assert [m for m in caught if MISSING_GLYPH in m] == []
    assert_svg_has(body, "Tỷ lệ ưu tiên · 成语", "Tỷ lệ (0–1)", "Nhóm", "中国参与者", "吃果子", "n = 42 người tham gia")
    # Chinese glyphs come from the CJK font, the rest from DejaVu Sans, drawn as paths.
    assert b'id="NotoSansCJK' in body and b'id="DejaVuSans-' in body
    # The value and its n beside each bar; a dash for a bar without a value.
    assert_svg_has(body, "0.62 (n=42)", "−0.20 (n=5)", "—")


def test_it_draws_an_error_bar_for_every_interval():
    body, _caught = draw("svg")
    # Two intervals in the first panel, one in the second (the bar of n=9 has none).
    assert body.count(b'id="LineCollection_') == 3


def test_it_embeds_the_fonts_of_a_pdf_as_truetype_with_title_and_caption():
    body, caught = draw("pdf")
    assert [m for m in caught if MISSING_GLYPH in m] == []
    assert body.startswith(b"%PDF-")
    # Type 42 (CID TrueType), never Type 3 bitmaps-of-paths that journals refuse.
    assert b"/CIDFontType2" in body and b"/Type3" not in body
    assert b"+DejaVuSans" in body and b"+NotoSansCJK" in body
    assert pdf_info(body, "Title") == "Tỷ lệ ưu tiên · 成语"
    assert_pdf_has(body, "n = 42 người tham gia")


def test_it_gives_the_same_bytes_for_the_same_figures():
    assert draw("svg")[0] == draw("svg")[0]
    assert draw("pdf")[0] == draw("pdf")[0]


def test_it_warns_clearly_and_still_draws_without_a_cjk_font(no_cjk_font):
    with pytest.warns(FigureFontWarning, match="fonts-noto-cjk"):
        families = figures.font_families()
    assert families == (figures.BASE_FAMILY,)
    body, caught = draw("svg")
    # Vietnamese still has every glyph; only the Chinese ones are missing, and said so.
    assert body.startswith(b"<?xml")
    missing = [m for m in caught if MISSING_GLYPH in m]
    assert missing and all("CJK UNIFIED IDEOGRAPH" in m for m in missing)


def test_it_refuses_an_unknown_format():
    with pytest.raises(UnknownFigure):
        chart_file(chart(), fmt="png")


def test_it_draws_line_panels_with_gaps_and_a_reference_line():
    line_chart = Chart(
        title="Drift · Vòng 一",
        caption="n = 120 câu",
        panels=[
            LinePanel(
                title="",
                x_label="Window of 50 answers",
                y_label="Cohen's κ",
                lines=[Line([0.8, None, 0.6]), Line([0.4, 0.5, 0.2], series=1)],
                reference=0.4,
            )
        ],
        series=["anh · 李", "bình"],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        body = chart_file(line_chart, fmt="svg")
    assert [str(w.message) for w in caught if MISSING_GLYPH in str(w.message)] == []
    assert_svg_has(body, "Drift · Vòng 一", "Window of 50 answers", "Cohen's κ", "anh · 李", "n = 120 câu")
    # Two lines and the dashed reference.
    assert body.count(b'id="line2d_') >= 3
