"""Every figure the app draws, on fixed and awkward data, as a person would paste it into a paper:
no text outside the canvas, window numbers as whole numbers, no series hidden under another, the
colour-blind-safe palette (issue 21).

Each figure comes from its app's chart builder (the function the download's selector calls) with
data shaped as its page's selector gives it: long Vietnamese and Chinese names, a dozen pairs of
annotators with the same kappas, one window, negative kappas and empty cells. The drawing is then
measured at the two resolutions it is laid out at: 72 dpi (the points of SVG and PDF) and 100.
"""

import itertools
import math
from types import SimpleNamespace

import pytest
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from annotation.selectors import figures as round_figures
from artworks.selectors import figures as artwork_figures
from artworks.selectors.report import CONDITIONS, FAMILIARITY, QUESTION_TYPES
from core import figures
from evaluation.selectors import figures as evaluation_figures
from evaluation.selectors.results import taxonomy_by_code
from study.selectors import figures as study_figures
from study.selectors.results import CRITERIA

# The database gives these tests only the taxonomy's names, which the migrations write alike on every
# engine; the drawing is the same on both: `make test` runs them once.
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.once,
    pytest.mark.filterwarnings("ignore::core.figures.FigureFontWarning"),
]

ROUND = "Vòng chú thích thành ngữ tiếng Việt số một, đợt thử nghiệm mở rộng 第一轮 (nhóm Hà Nội và Sài Gòn)"
MODEL = "Qwen2.5-72B-Instruct-GPTQ-Int4 · bản tinh chỉnh tiếng Việt 越南语 (chi nhánh thử nghiệm dài)"
PAIRS = [(f"người_chú_thích_{a:02d}", f"người_chú_thích_{b:02d}") for a, b in itertools.combinations(range(6), 2)]
# Okabe and Ito's eight colours: what a reader with any common colour blindness tells apart.
OKABE_ITO = {"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#000000", "#f0e442"}


def _windows(values, n=50):
    return [{"start": 1 + 50 * i, "end": 50 * (i + 1), "theme_kappa": v, "n": n} for i, v in enumerate(values)]


def quality_report() -> dict:
    """15 pairs whose kappas coincide window by window, and annotators with one window, a gap, negatives."""
    same = [0.8, 0.8, 0.35, None, 0.35, -0.2]
    return {
        "settings": {"window": 50, "threshold": 0.4, "fast_seconds": 3.0, "control_rate": 0.05, "min_window_items": 20},
        "pairs": [{"a": a, "b": b, "n": 1234, "theme_kappa": 0.5, "windows": _windows(same)} for a, b in PAIRS],
        "annotators": {
            "người_chú_thích_00": {"n": 1, "windows": _windows([0.0], n=1)},
            "người_chú_thích_01": {"n": 300, "windows": _windows([0.6, None, -0.45, 0.6, 0.6, 0.9])},
            "người_chú_thích_02": {"n": 300, "windows": _windows([0.6, 0.1, -0.45, 0.6, 0.6, 0.9])},
        },
    }


def round_charts() -> dict:
    round_ = SimpleNamespace(name=ROUND)
    traits, themes = taxonomy_by_code()
    distributions = {
        "n": 4821,
        "source": "final",
        "traits": {
            code: {"percent": 100.0 * (i % 3) / 2, "count": 4821 * (i % 3) // 2} for i, code in enumerate(traits)
        },
        "themes": {code: {"percent": 100.0 / len(themes), "count": 4821 // len(themes)} for code in themes},
    }
    funnel = {
        "imported": 5000,
        "in_round": 4821,
        "reviewed_by_all": 4800,
        "unanimous": 3100,
        "needs_adjudication": 1700,
        "adjudicated": 1650,
        "removed": 50,
        "undecided": 50,
        "final": 4750,
    }
    report = quality_report()
    return {
        "round:traits": round_figures.distribution_chart(round_, distributions, "traits"),
        "round:themes": round_figures.distribution_chart(round_, distributions, "themes"),
        "round:funnel": round_figures.funnel_chart(round_, funnel),
        "quality:drift-pairs": round_figures.drift_chart(round_name=ROUND, report=report, name="drift-pairs"),
        "quality:drift-final": round_figures.drift_chart(round_name=ROUND, report=report, name="drift-final"),
    }


def evaluation_charts() -> dict:
    traits, themes = taxonomy_by_code()
    rows = [
        {
            "model": f"{MODEL} #{n}",
            "prompt": "zero-shot, hướng dẫn chi tiết 详细",
            "judge_run": 9000 + n,
            "values": {code: (n + i) % 6 * 0.99 for i, code in enumerate([*themes, *traits])},
            "average": 2.5 + n / 10,
        }
        for n in range(4)
    ]
    scored = {9000 + n: 1234 + n for n in range(4)}
    charts = {}
    for name, entries in (("theme", themes), ("trait", traits)):
        table = {"table": name, "columns": [*entries, "average"], "rows": rows}
        charts[f"results:{name}"] = evaluation_figures.score_chart(
            table, entries=entries, judge_name=MODEL, strategy="aspect", scored=scored
        )
    classification = {
        "columns": ["topic", "traits"],
        "rows": [
            {
                "model": f"{MODEL} #{n}",
                "values": {"topic": 0.123 * n, "traits": None if n == 2 else 0.987},
                "n": {"topic": 4821, "traits": 4821},
            }
            for n in range(5)
        ],
    }
    charts["results:classification"] = evaluation_figures.classification_chart(classification)
    run = SimpleNamespace(pk=31337, strategy="zero-shot", model=SimpleNamespace(name=MODEL))
    human = {
        "settings": {"n_resamples": 1000, "seed": 20240601},
        "table1": [
            {"row": "human", "mean": 3.125, "n": 50, "cohen_kappa": 1.0, "cohen_kappa_ci": [1.0, 1.0]},
            *(
                {
                    "row": "judge",
                    "strategy": strategy,
                    "judge_model": MODEL,
                    "run": 777 + i,
                    "mean": 4.999 if i else None,
                    "n": 123456,
                    "cohen_kappa": -0.25 + 0.3 * i,
                    "cohen_kappa_ci": [-0.9, 0.2 + 0.2 * i],
                }
                for i, strategy in enumerate(("aspect", "cot", "score-only", "pairwise"))
            ),
        ],
    }
    charts["human-report:table1"] = evaluation_figures.table1_chart(run, human)
    return charts


def artwork_charts() -> dict:
    accuracy = {
        condition: {
            familiarity: {
                qtype: {"accuracy": 1.0 if c == 2 else 0.5, "ci": [0.0, 1.0] if c else None, "n": 99999}
                for qtype in QUESTION_TYPES
            }
            for familiarity in FAMILIARITY
        }
        for c, condition in enumerate(CONDITIONS)
    }
    report = {
        "qa_accuracy": accuracy,
        "run": {"id": 4242, "listener": MODEL, "n_answers": 1_200_000, "speaker": MODEL, "collection": ROUND},
    }
    return {"artwork-report:table1": artwork_figures.table1_chart(report)}


def study_charts() -> dict:
    share = {"pragmatic_rate": 0.5, "ci": [0.0, 1.0], "n": 123456}
    results = {
        "preferences": {
            **{criterion: share for criterion in CRITERIA},
            "by_group": {group: {c: share for c in CRITERIA} for group in ("american", "chinese", "người Việt 越南")},
        },
        "participants": {"valid": 1000, "by_group": {"american": {"valid": 500}, "chinese": {"valid": 500}}},
        "interval_method": {"resamples": 1000},
        "include_test": True,
    }
    study = SimpleNamespace(title=f"Nghiên cứu ưu tiên mô tả tranh 绘画描述偏好研究 · {ROUND}")
    return {"study:preferences": study_figures.preferences_chart(study, results)}


def every_chart() -> dict:
    return {**round_charts(), **evaluation_charts(), **artwork_charts(), **study_charts()}


def served_figures() -> set[str]:
    """The name of every figure the app serves, from the selectors' lists (no database needed)."""
    return {
        *(f"round:{name}" for name in round_figures.ROUND_FIGURES),
        *(f"quality:{name}" for name in round_figures.QUALITY_FIGURES),
        *(f"results:{name}" for name in evaluation_figures.RESULTS_FIGURES),
        *(f"human-report:{name}" for name in evaluation_figures.HUMAN_REPORT_FIGURES),
        *(f"artwork-report:{name}" for name in artwork_figures.ARTWORK_REPORT_FIGURES),
        *(f"study:{name}" for name in study_figures.STUDY_FIGURES),
    }


def test_it_covers_every_figure_the_app_serves():
    assert set(every_chart()) == served_figures()


def _markers(figure) -> dict:
    """Display coordinates of every marker, by what tells a series apart (its colour and shape)."""
    by_look = {}
    for ax in figure.axes:
        for line in ax.get_lines():
            if line.get_marker() in (None, "", "None", " "):
                continue
            points = ax.transData.transform(list(zip(line.get_xdata(), line.get_ydata(), strict=True)))
            look = (line.get_markeredgecolor(), line.get_marker())
            by_look.setdefault(look, []).extend(p for p in points if not any(math.isnan(v) for v in p))
    return by_look


# Drawing a chart is most of these checks' time: each chart is drawn once and every check runs on it.
@pytest.mark.parametrize("name", sorted(served_figures()))
def test_it_draws_each_chart_inside_its_canvas_with_bars_apart_in_the_safe_palette(name):
    with figures.drawn(every_chart()[name]) as figure:
        assert_safe_palette(name, figure)
        # 100 dpi (matplotlib's default, the figure's own) first, then 72 (the points of SVG and PDF).
        for dpi in (100, 72):
            figure.set_dpi(dpi)
            figure.draw_without_rendering()
            assert_texts_inside_canvas(name, figure)
            if dpi == 100:
                assert_bars_apart(name, figure)


def assert_texts_inside_canvas(name: str, figure) -> None:
    renderer = figure.canvas.get_renderer()
    canvas = figure.bbox
    texts = figures.drawn_texts(figure)
    assert any(t.get_text() == figure.get_suptitle() for t in texts), name
    for text in texts:
        box = text.get_window_extent(renderer)
        inside = (
            box.x0 >= canvas.x0 - 0.5
            and box.y0 >= canvas.y0 - 0.5
            and box.x1 <= canvas.x1 + 0.5
            and box.y1 <= canvas.y1 + 0.5
        )
        assert inside, f"{name} at {figure.dpi:.0f} dpi: {text.get_text()!r} at {box} is outside the canvas {canvas}"


def assert_bars_apart(name: str, figure) -> None:
    for ax in figure.axes:
        bars = [p.get_window_extent() for p in ax.patches if isinstance(p, Rectangle)]
        for a, b in itertools.combinations(bars, 2):
            overlap_x = min(a.x1, b.x1) - max(a.x0, b.x0)
            overlap_y = min(a.y1, b.y1) - max(a.y0, b.y0)
            assert overlap_x <= 0.5 or overlap_y <= 0.5, f"{name}: two bars overlap"


def assert_safe_palette(name: str, figure) -> None:
    colours = set()
    for ax in figure.axes:
        colours.update(_hex(p.get_facecolor()) for p in ax.patches if isinstance(p, Rectangle))
        colours.update(
            _hex(line.get_markeredgecolor()) for line in ax.get_lines() if line.get_marker() not in ("", "None", None)
        )
    # The whiskers' caps are the intervals' near-black, not a series.
    colours.discard(figures.INTERVAL_COLOUR)
    assert colours and colours <= OKABE_ITO, (name, colours - OKABE_ITO)


def test_it_sets_the_title_on_several_lines_rather_than_cutting_it():
    chart = round_charts()["quality:drift-pairs"]
    with figures.drawn(chart) as figure:
        title = figure.get_suptitle()
    assert title.count("\n") >= 1
    assert title.replace("\n", " ").split() == chart.title.split()


def test_it_numbers_the_windows_with_whole_numbers():
    for name in ("quality:drift-pairs", "quality:drift-final"):
        with figures.drawn(round_charts()[name]) as figure:
            figure.draw_without_rendering()
            ax = figure.axes[0]
            low, high = ax.get_xlim()
            labels = [t.get_text() for t in ax.get_xticklabels() if low <= t.get_position()[0] <= high]
        assert labels and all(label.isdigit() for label in labels), (name, labels)
        assert {int(label) for label in labels} <= set(range(1, 7))
    # A single window is window 1, not 0.5, 1.0 and 1.5.
    one = figures.Chart(
        title="One window",
        caption="n = 1",
        panels=[figures.LinePanel(title="", x_label="Window", y_label="κ", lines=[figures.Line([0.3])])],
    )
    with figures.drawn(one) as figure:
        figure.draw_without_rendering()
        ax = figure.axes[0]
        assert [t.get_text() for t in ax.get_xticklabels() if 0.5 <= t.get_position()[0] <= 1.5] == ["1"]


def test_it_never_draws_a_series_marker_on_top_of_another():
    for name in ("quality:drift-pairs", "quality:drift-final"):
        chart = round_charts()[name]
        with figures.drawn(chart) as figure:
            figure.set_dpi(72)
            figure.draw_without_rendering()
            by_look = _markers(figure)
        # One look (colour and shape) per series drawn, and each with its points.
        assert len(by_look) == len(chart.series), name
        # Two series' markers are at least half a marker (2.5 points) apart, even where their kappas are equal.
        for (look_a, points_a), (look_b, points_b) in itertools.combinations(by_look.items(), 2):
            for (xa, ya), (xb, yb) in itertools.product(points_a, points_b):
                assert math.hypot(xa - xb, ya - yb) >= 2.5, (
                    f"{name}: {look_a} and {look_b} coincide at {xa:.1f},{ya:.1f}"
                )


def test_it_draws_an_open_marker_for_a_window_too_small_to_warn():
    # The annotator with one answer has one window, too small to warn.
    with figures.drawn(round_charts()["quality:drift-final"]) as figure:
        faces = [
            _hex(line.get_markerfacecolor())
            for line in figure.axes[0].get_lines()
            if line.get_marker() == figures.marker(0) and _hex(line.get_markeredgecolor()) == figures.colour(0)
        ]
    assert faces == ["#ffffff"]


def _hex(colour) -> str:
    from matplotlib.colors import to_hex

    return to_hex(colour)


def test_it_tells_the_series_apart_by_colour_and_shape_for_many_series():
    looks = {(figures.colour(i), figures.marker(i)) for i in range(64)}
    assert len(looks) == 64
    assert isinstance(figures.MARKERS, tuple) and all(Line2D.markers.get(m) for m in figures.MARKERS)
