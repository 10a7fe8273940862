"""The evaluation pages' charts as files for a paper (SVG, PDF): Tables 3-5 and Table 1 (judges and humans).

Drawn from ``results_table`` and ``human_report``, the selectors the pages read, so a file
shows the page's figures; the number of scored items behind each row comes from the run's
counts. Researchers only, as the pages (the views ask).
"""

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from core.figures import Bar, Chart, Group, Panel, UnknownFigure, chart_file
from core.localization import localized_name
from llm.models import ModelConfig

from ..models import Run
from .report import human_report
from .results import results_table, taxonomy_by_code
from .runs import run_counts

RESULTS_FIGURES = ("theme", "trait", "classification")
HUMAN_REPORT_FIGURES = ("table1",)
SCORE_MAX = 5.0


def results_figure(*, name: str, fmt: str, judge_model: ModelConfig | None = None, strategy: str = "aspect") -> bytes:
    """Table 3 (theme), 4 (trait) or 5 (classification) as a chart file, with the page's filters."""
    if name not in RESULTS_FIGURES:
        raise UnknownFigure(name)
    table = results_table(table=name, judge_model=judge_model, strategy=strategy)
    if name == "classification":
        chart = classification_chart(table)
    else:
        judges = Run.objects.filter(pk__in=[row["judge_run"] for row in table["rows"]])
        scored = {}
        for run in judges:
            counts = run_counts(run=run)
            scored[run.pk] = counts["n_done"] - counts["n_unscored"]
        traits, themes = taxonomy_by_code()
        chart = score_chart(
            table,
            entries=themes if table["table"] == "theme" else traits,
            judge_name=judge_model.name if judge_model is not None else None,
            strategy=strategy,
            scored=scored,
        )
    return chart_file(chart, fmt=fmt)


def score_chart(table: dict, *, entries: dict, judge_name: str | None, strategy: str, scored: dict) -> Chart:
    """Table 3 or 4 from ``results_table``'s table; ``scored``: the items each judge run scored, by its id."""
    series = []
    for row in table["rows"]:
        series.append(
            _("%(model)s · %(prompt)s (judge run #%(run)s, n = %(n)s)")
            % {"model": row["model"], "prompt": row["prompt"], "run": row["judge_run"], "n": scored[row["judge_run"]]}
        )
    groups = []
    for key in table["columns"]:
        label = _("Average") if key == "average" else (localized_name(entries.get(key)) or key)
        bars = [
            Bar(value=row.get("average") if key == "average" else row["values"].get(key), series=index)
            for index, row in enumerate(table["rows"])
        ]
        groups.append(Group(label=label, bars=bars))
    if table["table"] == "theme":
        title, category = _("Table 3 · Mean judge score by theme"), _("Theme")
    else:
        title, category = _("Table 4 · Mean judge score by trait"), _("Trait")
    judged_by = judge_name if judge_name is not None else _("any judge model")
    caption = _(
        "Mean judge score (0–5) of each generation run's explanations, from the latest finished judge run "
        "(strategy %(strategy)s, %(judge)s); n = items that judge run scored (legend). %(rows)s"
    ) % {"strategy": strategy, "judge": judged_by, "rows": _rows(len(table["rows"]))}
    if table["table"] == "trait":
        caption += " " + _("An expression with several traits counts for each.")
    panel = Panel(
        title="",
        value_label=_("Mean judge score (0–5)"),
        category_label=category,
        groups=groups,
        limits=(0.0, SCORE_MAX),
    )
    return Chart(title=title, caption=caption, panels=[panel], series=series)


def _rows(n: int) -> str:
    return ngettext("%(n)s row.", "%(n)s rows.", n) % {"n": n}


def classification_chart(table: dict) -> Chart:
    labels = {"topic": _("Topic"), "traits": _("Traits")}
    groups = [
        Group(
            label=labels.get(key, key),
            bars=[
                Bar(value=row["values"].get(key), series=index, n=row.get("n", {}).get(key))
                for index, row in enumerate(table["rows"])
            ],
        )
        for key in table["columns"]
    ]
    panel = Panel(
        title="",
        value_label=_("Exact-match accuracy (0–1)"),
        category_label=_("Task"),
        groups=groups,
        limits=(0.0, 1.0),
        value_format="{:.3f}",
    )
    caption = _(
        "Exact-match accuracy of the 3-shot topic and trait classification, from each model's latest finished "
        "run; n = items classified (beside each bar). %(models)s"
    ) % {"models": ngettext("%(n)s model.", "%(n)s models.", len(table["rows"])) % {"n": len(table["rows"])}}
    return Chart(
        title=_("Table 5 · Classification accuracy"),
        caption=caption,
        panels=[panel],
        series=[row["model"] for row in table["rows"]],
    )


def human_report_figure(*, run: Run, name: str, fmt: str) -> bytes:
    """Table 1 of the judge-versus-human report: mean score and Cohen's kappa per row, with intervals."""
    if name not in HUMAN_REPORT_FIGURES:
        raise UnknownFigure(name)
    report = human_report(run=run)
    return chart_file(table1_chart(run, report), fmt=fmt)


def table1_chart(run: Run, report: dict) -> Chart:
    rows = report["table1"]
    labels = [
        _("Human baseline")
        if row["row"] == "human"
        else _("%(strategy)s · %(model)s #%(run)s")
        % {"strategy": row["strategy"], "model": row["judge_model"], "run": row["run"]}
        for row in rows
    ]
    means = [
        Group(label=label, bars=[Bar(value=row["mean"], series=index, n=row["n"])])
        for index, (label, row) in enumerate(zip(labels, rows, strict=True))
    ]
    kappas = []
    lows = [0.0]
    for index, (label, row) in enumerate(zip(labels, rows, strict=True)):
        ci = row["cohen_kappa_ci"] or [None, None]
        if row["cohen_kappa"] is not None:
            lows.append(row["cohen_kappa"])
        if ci[0] is not None:
            lows.append(ci[0])
        kappas.append(
            Group(label=label, bars=[Bar(value=row["cohen_kappa"], series=index, low=ci[0], high=ci[1], n=row["n"])])
        )
    settings = report["settings"]
    caption = _(
        "n = score pairs per row: each human rating paired with the judge's score of the same item "
        "(the human baseline: pairs of raters on the items two or more scored). Whiskers: 95%% percentile "
        "bootstrap intervals over items (%(resamples)s resamples, seed %(seed)s). Generation run #%(run)s, "
        "%(model)s (%(strategy)s)."
    ) % {
        "resamples": settings["n_resamples"],
        "seed": settings["seed"],
        "run": run.pk,
        "model": run.model.name,
        "strategy": run.strategy,
    }
    return Chart(
        title=_("Table 1 · Judges and humans · run #%(run)s") % {"run": run.pk},
        caption=caption,
        panels=[
            Panel(
                title=_("Mean score"),
                value_label=_("Mean score (0–5)"),
                category_label=_("Row"),
                groups=means,
                limits=(0.0, SCORE_MAX),
            ),
            Panel(
                title=_("Agreement with the human scores"),
                value_label=_("Cohen's κ"),
                category_label=_("Row"),
                groups=kappas,
                limits=(min(lows), 1.0),
                value_format="{:.3f}",
            ),
        ],
    )


__all__ = [
    "HUMAN_REPORT_FIGURES",
    "RESULTS_FIGURES",
    "classification_chart",
    "human_report_figure",
    "results_figure",
    "score_chart",
    "table1_chart",
]
