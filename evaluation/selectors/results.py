"""The paper's results tables (Tables 3-5) across runs."""

from django.db.models import Count, Q

from annotation.models import Theme, Trait
from llm.costs import usage
from llm.models import ModelConfig

from ..models import ItemStatus, Run, RunKind, RunStatus
from .runs import run_report


def taxonomy_by_code() -> tuple[dict[str, Trait], dict[str, Theme]]:
    """Traits and themes by code (in annotation's ``taxonomy_rows`` order: traits first), for the names of
    the codes a report keeps."""
    return {t.code: t for t in Trait.objects.all()}, {t.code: t for t in Theme.objects.all()}


def runs_usage(runs) -> dict:
    """The tokens and cost of the runs behind a row of a results table (the cost is unknown if any run's is)."""
    used = [usage(run) for run in runs]
    costs = [u["cost"] for u in used]
    return {
        "tokens_in": sum(u["tokens_in"] for u in used),
        "tokens_out": sum(u["tokens_out"] for u in used),
        "cost": None if not costs or None in costs else sum(costs),
    }


def results_table(*, table: str, judge_model: ModelConfig | None = None, strategy: str = "aspect") -> dict:
    """The paper's Tables 3-5 across runs.

    theme / trait: one row per generation run's model x prompt, scored by the latest
    finished judge run (optionally of one judge model and strategy); the best value
    of each column is flagged for bold. classification: accuracy per model for topic
    and traits (Table 5).
    """
    if table in ("theme", "trait"):
        # The strategy's own wording: a paraphrase run is a bias diagnostic, not a row of Table 3.
        judges = Run.objects.filter(
            kind=RunKind.JUDGE, status=RunStatus.DONE, strategy=strategy, prompt__paraphrase_of=""
        ).select_related("model", "source_run__model", "source_run__prompt")
        if judge_model is not None:
            judges = judges.filter(model=judge_model)
        latest = {}
        for judge in judges.order_by("created_at"):
            latest[(judge.source_run.model.name, judge.source_run.strategy)] = judge
        columns = list((Theme if table == "theme" else Trait).objects.order_by("number").values_list("code", flat=True))
        rows = []
        for (model_name, prompt_name), judge in sorted(latest.items()):
            report = run_report(run=judge)
            values = report["by_theme"] if table == "theme" else report["by_trait"]
            row = {"model": model_name, "prompt": prompt_name, "judge_run": judge.pk, "values": values}
            # What the row cost: its generation run and the judge run that scored it.
            row["usage"] = runs_usage([judge.source_run, judge])
            if table == "theme":
                row["average"] = report["average"]
            rows.append(row)
        keys = columns + (["average"] if table == "theme" else [])
        best = {}
        for key in keys:
            candidates = [(r["values"].get(key) if key != "average" else r["average"]) for r in rows]
            candidates = [c for c in candidates if c is not None]
            best[key] = max(candidates) if candidates else None
        return {"table": table, "columns": keys, "rows": rows, "best": best}
    if table == "classification":
        runs = Run.objects.filter(kind=RunKind.CLASSIFICATION, status=RunStatus.DONE).select_related("model")
        latest = {}
        for run in runs.order_by("created_at"):
            latest[(run.model.name, run.strategy)] = run
        models = sorted({name for name, _ in latest})
        rows = []
        for name in models:
            values, counts = {}, {}
            for task in ("topic", "traits"):
                run = latest.get((name, task))
                if run is not None:
                    done = run.items.filter(status=ItemStatus.DONE).aggregate(
                        n=Count("id"), ok=Count("id", filter=Q(correct=True))
                    )
                    values[task] = done["ok"] / done["n"] if done["n"] else None
                    counts[task] = done["n"]
                else:
                    values[task], counts[task] = None, 0
            used = runs_usage([run for run in (latest.get((name, task)) for task in ("topic", "traits")) if run])
            # n: the items each accuracy is over (the figures for the paper print it).
            rows.append({"model": name, "values": values, "n": counts, "usage": used})
        best = {
            task: max((r["values"][task] for r in rows if r["values"][task] is not None), default=None)
            for task in ("topic", "traits")
        }
        return {"table": table, "columns": ["topic", "traits"], "rows": rows, "best": best}
    raise ValueError(f"unknown table {table}")
