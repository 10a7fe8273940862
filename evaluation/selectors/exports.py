"""Every file the evaluation app hands out (CSV; JSON is the report itself through core.http.json_text),
built in one place so a page, the API and the CLI give the same bytes."""

import json

from core.csv_writer import csv_text

RUN_COUNT_KEYS = ("n_items", "n_done", "n_failed", "n_unscored", "n_cached", "n_cut_off")

HUMAN_REPORT_COLUMNS = [
    "id",
    "strategy",
    "judge_model",
    "seed",
    "n",
    "n_items",
    "mean",
    "human_mean",
    "cohen_kappa",
    "cohen_kappa_ci_low",
    "cohen_kappa_ci_high",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "kendall_tau",
    "kendall_tau_ci_low",
    "kendall_tau_ci_high",
    "spearman_rho",
    "n_unscored_pairs",
    "self_agreement_alpha",
    "expected_n",
    "expected_spearman_rho",
    "expected_kendall_tau",
]


def report_csv(report: dict) -> str:
    """One row per figure: section, code, value (a tidy table, readable by pandas)."""
    rows = [
        ["run", key, report["run"].get(key)]
        for key in ("id", "kind", "model", "strategy", "status", *RUN_COUNT_KEYS, "tokens_in", "tokens_out", "cost")
    ]
    if "average" in report:
        rows.append(["average", "", report["average"]])
        rows.append(["expected_average", "", report.get("expected_average")])
        rows += [["theme", code, value] for code, value in report["by_theme"].items()]
        rows += [["trait", code, value] for code, value in report["by_trait"].items()]
    if "accuracy" in report:
        rows.append(["accuracy", report.get("task", ""), report["accuracy"]])
    return csv_text(["section", "code", "value"], rows)


def run_report_key_value_csv(report: dict) -> str:
    """The CLI's flat form of a run report (`run_report --format csv`): one "a.b.c,value" row per leaf."""
    return csv_text(["key", "value"], _flatten(report))


def _flatten(data: dict, prefix: str = "") -> list[tuple[str, object]]:
    rows = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            rows.extend(_flatten(value, f"{name}."))
        else:
            rows.append((name, json.dumps(value, ensure_ascii=False) if isinstance(value, list) else value))
    return rows


def results_row_value(table: dict, row: dict, key: str):
    return row.get("average") if key == "average" else row["values"].get(key)


def results_csv(table: dict) -> str:
    keys = table["columns"]
    usage_keys = ("tokens_in", "tokens_out", "cost")

    def used(row) -> list:
        return [(row.get("usage") or {}).get(k) for k in usage_keys]

    if table["table"] == "classification":
        return csv_text(
            ["model", *keys, *usage_keys],
            [[row["model"], *(row["values"].get(k) for k in keys), *used(row)] for row in table["rows"]],
        )
    return csv_text(
        ["model", "prompt", "judge_run", *keys, *usage_keys],
        [
            [
                row["model"],
                row["prompt"],
                row["judge_run"],
                *(results_row_value(table, row, k) for k in keys),
                *used(row),
            ]
            for row in table["rows"]
        ],
    )


def _ci(value, side: int):
    return value[side] if value else None


def human_report_rows(report: dict) -> list[list]:
    """The CSV rows: one per judge run, then "human" (inter-rater figures, human mean) with the same columns."""
    rows = []
    for judge in report["judges"].values():
        rows.append(
            _csv_row(
                judge["id"], judge, strategy=judge["strategy"], judge_model=judge["judge_model"], seed=judge["seed"]
            )
        )
    human = report["human"]
    inter = {**human["inter_rater"], "mean": human["mean"], "human_mean": human["mean"]}
    rows.append(_csv_row("human", inter, strategy="", judge_model="", seed=None))
    return rows


def _csv_row(row_id, figures: dict, *, strategy, judge_model, seed) -> list:
    return [
        row_id,
        strategy,
        judge_model,
        seed,
        figures["n"],
        figures["n_items"],
        figures["mean"],
        figures["human_mean"],
        figures["cohen_kappa"],
        _ci(figures["cohen_kappa_ci"], 0),
        _ci(figures["cohen_kappa_ci"], 1),
        figures["cohen_kappa_linear"],
        figures["cohen_kappa_quadratic"],
        figures["kendall_tau"],
        _ci(figures["kendall_tau_ci"], 0),
        _ci(figures["kendall_tau_ci"], 1),
        figures["spearman_rho"],
        figures.get("n_unscored_pairs"),
        figures.get("self_agreement_alpha"),
        (figures.get("expected") or {}).get("n"),
        (figures.get("expected") or {}).get("spearman_rho"),
        (figures.get("expected") or {}).get("kendall_tau"),
    ]


def human_report_csv(report: dict) -> str:
    """One row per judge run, then "human"; the columns are HUMAN_REPORT_COLUMNS."""
    return csv_text(HUMAN_REPORT_COLUMNS, human_report_rows(report))
