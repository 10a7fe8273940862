"""The bias diagnostics of a judge run (its run page's Bias tab, the API and `judge_bias`): gathers
scores, explanations and human ratings and hands them to :mod:`evaluation.bias`.

Researchers only: it shows judge scores next to human means.
"""

from django.db.models import Avg

from llm.models import ModelConfig

from .. import bias
from ..models import HumanRating, ItemStatus, PromptKind, PromptTemplate, RatingStatus, Run, RunItem, RunKind, RunStatus
from ..prompts import PAIRWISE

# What `judge_bias --format json` keeps of each section (the CLI contract).
CLI_KEYS = {
    "verbosity": ("spearman", "partial_spearman", "n"),
    "paraphrase": ("alpha", "k", "n"),
    "pairwise": ("first_position_rate", "consistency", "n"),
}


def judge_runs_for_bias():
    return Run.objects.filter(kind=RunKind.JUDGE).select_related(
        "model", "prompt", "source_run__model", "source_run_b__model"
    )


def paraphrase_prompt_choices():
    """The judge prompts a run may be reworded with: every judge template but the pairwise one."""
    return PromptTemplate.objects.filter(kind=PromptKind.JUDGE).exclude(name=PAIRWISE).order_by("name", "-created_at")


def is_pairwise(run: Run) -> bool:
    return run.strategy == PAIRWISE and run.source_run_b_id is not None


def _human_means(item_ids) -> dict[int, float]:
    """Mean submitted human score per generation item."""
    rows = (
        HumanRating.objects.filter(item_id__in=list(item_ids), status=RatingStatus.SUBMITTED, score__isnull=False)
        .values("item_id")
        .annotate(mean=Avg("score"))
    )
    return {row["item_id"]: float(row["mean"]) for row in rows}


def _same_model(first: ModelConfig, second: ModelConfig) -> bool:
    """One model, whatever it is registered as: the same config, or the same model id at the same provider."""
    return first.pk == second.pk or (first.provider, first.model_id) == (second.provider, second.model_id)


def judge_bias(*, run: Run) -> dict:
    """Every bias figure of a judge run, JSON-ready (undefined figures are null with a reason)."""
    report = {
        "run": {
            "id": run.pk,
            "judge_model": run.model.name,
            "strategy": run.strategy,
            "prompt": run.prompt_id,
            "prompt_name": run.prompt.name,
            "generation_run": run.source_run_id,
            "status": run.status,
        },
        "length_unit": "words",
    }
    if is_pairwise(run):
        report["run"]["generation_run_b"] = run.source_run_b_id
        report.update(_pairwise_sections(run))
    else:
        report.update(_pointwise_sections(run))
    return report


def cli_report(report: dict) -> dict:
    """The CLI contract: `verbosity`, `paraphrase`, `self_preference`, and `pairwise` for a pairwise run."""
    out = {key: {name: report[key][name] for name in CLI_KEYS[key]} for key in ("verbosity", "paraphrase")}
    out["self_preference"] = report["self_preference"]
    if "pairwise" in report:
        out["pairwise"] = {name: report["pairwise"][name] for name in CLI_KEYS["pairwise"]}
    return out


# --- pointwise judge runs ------------------------------------------------------------------------


def _scored(run: Run) -> list[tuple[int, int, str]]:
    """(generation item, score, explanation judged) of the run's scored items."""
    return list(
        RunItem.objects.filter(run=run, status=ItemStatus.DONE, score__isnull=False, source_item__isnull=False)
        .order_by("id")
        .values_list("source_item_id", "score", "source_item__response")
    )


def _pointwise_sections(run: Run) -> dict:
    scored = _scored(run)
    humans = _human_means(item for item, _score, _text in scored)
    rows = [(score, bias.length_in_words(text), humans.get(item)) for item, score, text in scored]
    return {
        "verbosity": bias.verbosity(rows),
        "paraphrase": _paraphrase(run),
        "self_preference": _self_preference(run),
    }


def paraphrase_runs(*, run: Run) -> list[Run]:
    """The run and the runs like it under other wordings of the prompt (same generation run, judge,
    strategy and seed), the latest finished run per wording; the run itself first."""
    others = (
        judge_runs_for_bias()
        .filter(
            source_run_id=run.source_run_id,
            model_id=run.model_id,
            strategy=run.strategy,
            status=RunStatus.DONE,
            params__seed=run.params.get("seed"),
        )
        .exclude(prompt_id=run.prompt_id)
        .order_by("created_at", "pk")
    )
    latest = {}
    for other in others:
        latest[other.prompt_id] = other
    return [run, *sorted(latest.values(), key=lambda other: other.prompt.name)]


def _paraphrase(run: Run) -> dict:
    group = paraphrase_runs(run=run)
    variants, labels = [], {}
    for member in group:
        rows = RunItem.objects.filter(run=member, source_item__isnull=False).values_list(
            "source_item_id", "score", "expression__text"
        )
        scores = {}
        for item, score, text in rows:
            scores[item] = score
            labels[item] = text
        variants.append(scores)
    result = bias.paraphrase_stability(variants, labels=labels)
    result["runs"] = [
        {"id": member.pk, "prompt": member.prompt_id, "prompt_name": member.prompt.name, "ours": member.prompt.ours}
        for member in group
    ]
    return result


def _group(judge_runs: list[Run]) -> dict:
    scores, human_scores, rated_scores = [], [], []
    for judge in judge_runs:
        scored = _scored(judge)
        humans = _human_means(item for item, _score, _text in scored)
        scores += [score for _item, score, _text in scored]
        for item, score, _text in scored:
            if item in humans:
                human_scores.append(humans[item])
                rated_scores.append(score)
    return {
        "runs": [judge.pk for judge in judge_runs],
        "generation_runs": [judge.source_run_id for judge in judge_runs],
        "n": len(scores),
        "judge_mean": bias.mean(scores),
        "n_human": len(human_scores),
        "judge_mean_rated": bias.mean(rated_scores),
        "human_mean": bias.mean(human_scores),
    }


def _difference(first, second):
    return None if first is None or second is None else first - second


def _self_preference(run: Run) -> dict:
    """The judge on its own model's explanations against other models', next to the human means of
    the same items: the same judge model, strategy and prompt over the generation runs of the dataset."""
    compared = (
        judge_runs_for_bias()
        .filter(
            model_id=run.model_id,
            strategy=run.strategy,
            prompt_id=run.prompt_id,
            status=RunStatus.DONE,
            source_run__dataset_id=run.dataset_id,
        )
        .order_by("created_at", "pk")
    )
    latest = {}
    for judge in compared:
        latest[judge.source_run_id] = judge
    latest[run.source_run_id] = run
    judges = sorted(latest.values(), key=lambda judge: judge.source_run_id)
    own = [judge for judge in judges if _same_model(judge.source_run.model, run.model)]
    others = [judge for judge in judges if not _same_model(judge.source_run.model, run.model)]
    out = {
        "judge_model": run.model.name,
        "applicable": bool(own and others),
        "own": _group(own) if own else None,
        "others": _group(others) if others else None,
        "reason": None,
    }
    if not own:
        out["reason"] = "the judge model generated none of the judged explanations"
    elif not others:
        out["reason"] = "every judged explanation is the judge model's own: judge another model's run too"
    if out["applicable"]:
        out["judge_difference"] = _difference(out["own"]["judge_mean"], out["others"]["judge_mean"])
        out["human_difference"] = _difference(out["own"]["human_mean"], out["others"]["human_mean"])
        # How much more the judge favours its own than people do, on the items people scored.
        out["excess"] = _difference(
            _difference(out["own"]["judge_mean_rated"], out["others"]["judge_mean_rated"]), out["human_difference"]
        )
    return out


# --- pairwise judge runs -------------------------------------------------------------------------


def _pairwise_sections(run: Run) -> dict:
    items = list(
        RunItem.objects.filter(run=run, status=ItemStatus.DONE)
        .order_by("id")
        .values_list(
            "expression_id",
            "swapped",
            "score",
            "prediction",
            "source_item_id",
            "source_item_b_id",
            "source_item__response",
            "source_item_b__response",
        )
    )
    generation_items = {a for row in items for a in (row[4], row[5])}
    humans = _human_means(generation_items)
    preference = {}
    for expression, _swapped, _score, _prediction, a, b, _text_a, _text_b in items:
        if a in humans and b in humans and humans[a] != humans[b]:
            preference[expression] = "a" if humans[a] > humans[b] else "b"
    verdicts = [(row[0], row[1], row[2] if row[2] in (1, 2) else None) for row in items]
    rows = []
    for _expression, _swapped, _score, prediction, a, b, text_a, text_b in items:
        if prediction not in ("a", "b"):
            continue
        human = _difference(humans.get(a), humans.get(b))
        rows.append(
            (1.0 if prediction == "a" else 0.0, bias.length_in_words(text_a) - bias.length_in_words(text_b), human)
        )
    verbosity = bias.verbosity(rows)
    verbosity["measure"] = "run A preferred (1/0) against A's length minus B's; partial on the human score difference"
    return {
        "verbosity": verbosity,
        "paraphrase": {
            "alpha": None,
            "k": 1,
            "n": 0,
            "widest": [],
            "runs": [],
            "reasons": {"alpha": "paraphrase stability is measured on pointwise judge runs"},
        },
        "self_preference": _pairwise_self_preference(run, items, humans),
        "pairwise": bias.pairwise(verdicts, preference),
    }


def _pairwise_self_preference(run: Run, items, humans) -> dict:
    sides = [
        side
        for side, source in (("a", run.source_run), ("b", run.source_run_b))
        if _same_model(source.model, run.model)
    ]
    out = {"judge_model": run.model.name, "applicable": len(sides) == 1, "own": sides[0] if len(sides) == 1 else None}
    if len(sides) != 1:
        out["reason"] = "the judge model generated neither run" if not sides else "the judge model generated both runs"
        return out
    own = sides[0]
    readable = [row[3] for row in items if row[3] in ("a", "b")]
    out["n"] = len(readable)
    out["judge_own_rate"] = sum(1 for winner in readable if winner == own) / len(readable) if readable else None
    human = []
    seen = set()
    for expression, _swapped, _score, _prediction, a, b, _text_a, _text_b in items:
        if expression in seen or a not in humans or b not in humans or humans[a] == humans[b]:
            continue
        seen.add(expression)
        human.append(("a" if humans[a] > humans[b] else "b") == own)
    out["n_human"] = len(human)
    out["human_own_rate"] = sum(human) / len(human) if human else None
    out["reason"] = None
    return out
