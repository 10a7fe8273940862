"""Drift warnings only where the data can bear them (issue 21): a window warns when it holds at least
QUALITY_MIN_WINDOW_ITEMS shared items and the upper end of its theme kappa's bootstrap interval (over
its items) is below the threshold. A window of one shared item, where one disagreement is a kappa of
0.000, once raised a red warning.

The intervals come from one bootstrap over every window (core.statistics, a stratum per window);
here they are held to scikit-learn's cohen_kappa_score on the same resampled items."""

import datetime
import re

import numpy as np
import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotation.models import RoundQualitySummary
from annotation.selectors.quality import quality_figures, round_quality
from annotation.services import round_summary_refresh

from .factories import (
    client_for,
    make_annotator,
    make_dataset,
    make_researcher,
    make_round,
    numbered_csv,
    submit_disagreeing,
    text_of,
)

THEMES = ["love", "criticism", "other", "virtues", "life_lessons"]
START = datetime.datetime(2025, 3, 1, 9, tzinfo=datetime.UTC)


def _answers(pairs_of_themes, *, a="ann_a", b="ann_b", first_item=0, at=0) -> list[dict]:
    """``a`` then ``b`` answer each item in turn, one second apart: the shared items come in item order."""
    answers = []
    for n, (theme_a, theme_b) in enumerate(pairs_of_themes):
        for offset, (who, theme) in enumerate(((a, theme_a), (b, theme_b))):
            answers.append(
                {
                    "assignment": 1000 * first_item + len(answers),
                    "item": first_item + n,
                    "annotator": who,
                    "theme": theme,
                    "traits": {"literal"} if n % 3 == 0 else set(),
                    "submitted_at": START + datetime.timedelta(seconds=at + 2 * n + offset),
                    "seconds": 12.0,
                    "control": None,
                    "text": None,
                }
            )
    return answers


def _figures(answers, **options):
    arguments = {
        "answers": answers,
        "final": {},
        "controls": {},
        "round_annotators": sorted({a["annotator"] for a in answers}),
        "theme_codes": THEMES,
        "trait_codes": ["literal", "pragmatic"],
        "name": "R",
        "window": 20,
        "threshold": 0.4,
        "fast_seconds": 3,
        "control_rate": 0,
        "n_resamples": 400,
        **options,
    }
    return quality_figures(**arguments)


# Window 1: every item differs (kappa below 0, surely). Window 2: half of them differ (kappa below 0.4,
# but 20 items cannot tell it from 0.4). Window 3: five items that all differ.
DISAGREE = [(THEMES[i % 4], THEMES[(i + 1) % 4]) for i in range(20)]
UNSURE = [(THEMES[i % 4], THEMES[(i + 1) % 4] if i % 10 in (1, 3, 4, 6, 8) else THEMES[i % 4]) for i in range(20)]
FEW = [(THEMES[i % 4], THEMES[(i + 2) % 4]) for i in range(5)]


def test_it_warns_only_about_large_windows_whose_whole_interval_is_below_the_threshold():
    report = _figures(_answers(DISAGREE + UNSURE + FEW))
    sure, unsure, few = report["pairs"][0]["windows"]
    assert (sure["n"], unsure["n"], few["n"]) == (20, 20, 5)
    assert sure["theme_kappa"] < 0 and sure["theme_kappa_ci"][1] < 0.4
    # Below the threshold, but its interval reaches it: shown, not warned about.
    assert unsure["theme_kappa"] < 0.4 <= unsure["theme_kappa_ci"][1]
    # Low and sure enough, but five items: too few.
    assert few["theme_kappa"] < 0 and few["theme_kappa_ci"][1] < 0.4
    assert [(w["kind"], w["start"], w["end"], w["n"]) for w in report["warnings"]] == [("pair", 1, 20, 20)]
    assert report["warnings"][0]["theme_kappa_ci"] == sure["theme_kappa_ci"]
    assert report["settings"]["min_window_items"] == 20
    details = report["pair_details"][0]["windows"]
    assert [w["warns"] for w in details] == [True, False, False]
    # The five items warn once the smallest window that may warn is five.
    lowered = _figures(_answers(DISAGREE + UNSURE + FEW), min_window_items=5)
    assert [(w["start"], w["end"]) for w in lowered["warnings"]] == [(1, 20), (41, 45)]


def test_it_never_warns_about_a_window_of_one_shared_item():
    # One item the two gave different themes: Cohen's kappa is exactly 0.000.
    report = _figures(_answers([("love", "criticism")]), window=50)
    (window,) = report["pairs"][0]["windows"]
    assert window["theme_kappa"] == 0.0 and window["n"] == 1
    assert report["warnings"] == []
    # Drawn greyed on the tab and hollow in the figures: it is below the smallest window that warns.
    assert window["n"] < report["settings"]["min_window_items"]


def test_it_computes_each_window_interval_from_its_own_items_as_scikit_learn_does():
    """The windows are the strata of one bootstrap: the draws of window after window in order, from
    one generator seeded as the page's; each resample's kappa is scikit-learn's on the items drawn."""
    pairs = DISAGREE + UNSURE + FEW
    resamples, seed = 300, 11
    report = _figures(_answers(pairs), n_resamples=resamples, seed=seed)
    rng = np.random.default_rng(seed)
    first = np.array([THEMES.index(a) for a, _b in pairs])
    second = np.array([THEMES.index(b) for _a, b in pairs])
    for window, (start, end) in zip(report["pairs"][0]["windows"], ((0, 20), (20, 40), (40, 45)), strict=True):
        size = end - start
        draws = start + rng.integers(0, size, (resamples, size))
        kappas = np.array(
            [
                cohen_kappa_score(first[d], second[d], labels=range(len(THEMES)), replace_undefined_by=np.nan)
                for d in draws
            ]
        )
        defined = kappas[np.isfinite(kappas)]
        assert defined.size >= 0.9 * resamples
        assert window["theme_kappa_ci"] == pytest.approx(list(np.quantile(defined, [0.025, 0.975])), abs=1e-12)


def test_it_gives_every_window_of_every_annotator_and_pair_an_interval_in_one_bootstrap():
    # Three annotators: three pairs; each annotator also against the final labels of the items.
    answers = _answers(DISAGREE + UNSURE, a="ann_a", b="ann_b")
    answers += _answers(UNSURE + DISAGREE, a="ann_a", b="ann_c", first_item=100, at=1000)
    answers.sort(key=lambda a: a["submitted_at"])
    final = {n: {"theme": UNSURE[n % 20][1], "traits": set()} for n in range(40)}
    report = _figures(answers, final=final)
    windows = [w for p in report["pair_details"] for w in p["windows"]]
    windows += [w for d in report["annotator_details"].values() for w in d["windows"]]
    assert len(windows) >= 6
    for window in windows:
        if window["theme_kappa"] is not None and window["n"] >= 2:
            low, high = window["theme_kappa_ci"]
            assert -1 <= low <= high <= 1
    # The CLI's windows carry their n and interval beside the documented keys.
    for entry in [*report["annotators"].values(), *report["pairs"]]:
        assert all(set(w) == {"start", "end", "theme_kappa", "n", "theme_kappa_ci"} for w in entry["windows"])


@pytest.fixture
def small_round(db):
    """Two annotators who disagree on all of 20 shared items, in windows of 5."""
    researcher = make_researcher()
    a, b = make_annotator("ann_a"), make_annotator("ann_b")
    round_ = make_round(make_dataset(name="Small windows", csv=numbered_csv(20)), [a, b], name="R-small", seed=5)
    round_.quality_window, round_.quality_threshold = 5, 0.4
    round_.save(update_fields=["quality_window", "quality_threshold"])
    submit_disagreeing(round_, a, b)
    return round_, researcher


def test_it_shows_small_windows_greyed_with_their_n_and_warns_about_none(small_round):
    round_, researcher = small_round
    round_summary_refresh(round_id=round_.pk)
    assert RoundQualitySummary.objects.get(round=round_).warnings == []
    client = client_for(researcher)
    page = client.get(reverse("annotation:round_detail", args=[round_.pk]))
    assert "below the quality threshold" not in text_of(page)
    tab = client.get(reverse("annotation:round_quality", args=[round_.pk]))
    html = tab.content.decode()
    assert 'data-testid="quality-warnings"' not in html
    assert "at least 20 items" in text_of(tab)
    # Four windows of five shared items, each greyed and said to be too small, with its n and interval
    # (and each annotator's four windows, with no final label yet: n = 0).
    assert len(re.findall(r'<tr class="quality-small"[^>]*data-kind="pair"', html)) == 4
    assert len(re.findall(r'<tr class="quality-small"[^>]*data-kind="final"', html)) == 8
    assert "Fewer than 20 items: never warns" in html
    assert "quality-dot-small" in html and "Hollow: a window of fewer than 20 items" in text_of(tab)
    report = round_quality(round=round_)
    for window in report["pair_details"][0]["windows"]:
        assert window["n"] == 5 and window["theme_kappa"] <= 0 and not window["warns"]
        row = re.search(
            rf'<tr class="quality-small"[^>]*data-window="{window["start"]}-{window["end"]}" data-kind="pair">(.*?)</tr>',
            html,
            re.S,
        )
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
        # n, kappa, interval: the interval's two ends, as the page rounds them.
        assert cells[0] == "5"
        assert cells[2] == " – ".join(floatformat(v, 3) for v in window["theme_kappa_ci"])


def test_it_warns_once_the_setting_allows_windows_that_small(small_round, settings):
    round_, researcher = small_round
    before = round_quality(round=round_)
    assert before["warnings"] == []
    settings.QUALITY_MIN_WINDOW_ITEMS = 5
    # The setting is part of the figures' cache key: the next read recomputes them.
    after = round_quality(round=round_)
    assert after["settings"]["min_window_items"] == 5
    assert [(w["start"], w["end"]) for w in after["warnings"]] == [(1, 5), (6, 10), (11, 15), (16, 20)]
    round_summary_refresh(round_id=round_.pk)
    page = client_for(researcher).get(reverse("annotation:round_detail", args=[round_.pk]))
    assert "4 drift windows are below the quality threshold" in text_of(page)
    tab = client_for(researcher).get(reverse("annotation:round_quality", args=[round_.pk]))
    assert "95% interval" in text_of(tab) and "n = 5" in text_of(tab)
    assert not re.findall(r'<tr class="quality-small"[^>]*data-kind="pair"', tab.content.decode())
