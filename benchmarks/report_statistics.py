"""The statistics behind the three agreement/results reports, timed on synthetic data of realistic size.

No database: only the computations each report runs on every request (the queries are timed by
the other benchmarks). Each report is timed ``--repeat`` times; the best and median are printed.

- annotation: a round of ``--items`` items, theme (7 categories) and five binary traits, two
  annotators and again four (two per item, Fleiss' kappa), plus the anchoring control
  (``labels_agreement`` and ``rate_differences``, 1,000 resamples as the page);
- evaluation: one judge run against two raters on ``--items`` items (``coefficients``, 1,000
  resamples), kappa and Kendall's tau intervals resampling items;
- study: ``--participants`` participants (two groups) with ``--artworks`` artworks each, Kendall's tau
  for the three questions and the QA gain (``study.analysis.kendall``, 2,000 resamples), and the
  page's 31 rates and accuracies (``study.analysis.shares``, 2,000 resamples over participants;
  Wilson intervals where the study has no ``shares``).

    .venv/bin/python benchmarks/report_statistics.py [--items 1000] [--participants 200] [--artworks 8]
"""

import argparse
import inspect
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(function, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def annotation_inputs(n_items: int, rng: np.random.Generator):
    theme = rng.integers(0, 7, n_items)
    traits = rng.integers(0, 2, (5, n_items))

    def rater(truth, k):
        return np.where(rng.random(truth.shape) < 0.8, truth, rng.integers(0, k, truth.shape))

    two = {"theme": (np.array([rater(theme, 7), rater(theme, 7)], dtype=float), 7, False)}
    for index, trait in enumerate(traits):
        two[f"trait{index}"] = (np.array([rater(trait, 2), rater(trait, 2)], dtype=float), 2, True)
    four = {}
    for name, (ratings, k, binary) in two.items():
        spread = np.full((4, n_items), np.nan)
        for item in range(n_items):
            first, second = (item % 4, (item + 1) % 4)
            spread[first, item], spread[second, item] = ratings[0, item], ratings[1, item]
        four[name] = (spread, k, binary)
    shown = rng.random((6, n_items * 3 // 4)).round()
    hidden = rng.random((6, n_items // 4)).round()
    return two, four, shown, hidden


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--artworks", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(1)

    from annotation import agreement as annotation_agreement
    from evaluation import agreement as evaluation_agreement
    from study import analysis

    two, four, shown, hidden = annotation_inputs(args.items, rng)

    def annotation_report():
        annotation_agreement.labels_agreement(two)
        annotation_agreement.labels_agreement(four, annotators=list("abcd"))
        annotation_agreement.rate_differences(shown, hidden)

    truth = rng.integers(0, 6, args.items)
    pairs = []
    for item, value in enumerate(truth):
        judge = int(np.clip(value + rng.integers(-1, 2), 0, 5))
        for _rater in range(2):
            pairs.append((judge, int(np.clip(value + rng.integers(-1, 2), 0, 5)), item))

    def evaluation_report():
        evaluation_agreement.coefficients(pairs)

    n_rows = args.participants * args.artworks
    participant = np.repeat(np.arange(args.participants), args.artworks)
    leaning = rng.normal(0, 1, args.participants)[participant]
    difference = rng.choice(np.linspace(-0.5, 0.5, 21), n_rows)
    chosen = (difference + 0.3 * leaning + rng.normal(0, 0.5, n_rows) > 0).astype(int)
    gain = np.round(rng.normal(0.2, 0.3, n_rows) * 2) / 2
    clustered = "clusters" in inspect.signature(analysis.kendall).parameters

    # The page's shares: three questions (all, per group), the left side, and four QA cells (all,
    # per speaker, per group), two answers per artwork, and quality control.
    group = participant % 2
    answers = np.repeat(np.arange(n_rows), 2)
    correct = rng.random(answers.size) < 0.6
    slices = [np.ones(n_rows, bool)] * 4 + [group == 0] * 3 + [group == 1] * 3
    figures = [(chosen[rows].tolist(), participant[rows].tolist()) for rows in slices]
    for rows in [np.ones(answers.size, bool)] * 4 + [answers % 2 == s for s in (0, 1) for _cell in range(4)]:
        figures.append((correct[rows].tolist(), participant[answers][rows].tolist()))
    for rows in [group[answers] == g for g in (0, 1) for _cell in range(4)] + [answers % 3 == 0]:
        figures.append((correct[rows].tolist(), participant[answers][rows].tolist()))

    def study_report():
        options = {"clusters": participant.tolist()} if clustered else {}
        for _question in range(3):
            analysis.kendall(difference.tolist(), chosen.tolist(), **options)
        analysis.kendall(difference.tolist(), gain.tolist(), **options)
        if hasattr(analysis, "shares"):
            analysis.shares(figures)
        else:
            for successes, _participants in figures:
                analysis.proportion(sum(successes), len(successes))

    for name, function in (
        ("annotation", annotation_report),
        ("evaluation", evaluation_report),
        ("study", study_report),
    ):
        best, median = timed(function, args.repeat)
        print(f"{name:<11} best {best * 1000:8.1f} ms  median {median * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
