"""Reads of the artwork pipeline runs: the list, progress per step, one artwork's candidates."""

from django.db.models import Count, Max, Q, Sum

from llm.costs import cost_of
from llm.models import ItemStatus
from llm.selectors import batch_run_is_stalled

from ..models import ArtworkPipelineRun, ListenerAnswer, PipelineItem, PipelineStep, SpeakerCandidate


def artwork_run_get(*, pk: int) -> ArtworkPipelineRun | None:
    """One pipeline run with the collection and models its pages name."""
    return (
        ArtworkPipelineRun.objects.select_related("collection", "speaker", "listener", "builder").filter(pk=pk).first()
    )


def artwork_run_list():
    return ArtworkPipelineRun.objects.select_related("collection", "speaker", "listener", "builder").order_by(
        "-created_at"
    )


def artwork_run_progress(*, run: ArtworkPipelineRun) -> dict:
    """Counts per step in pipeline order, and the totals."""
    return artwork_runs_progress(runs=[run])[run.pk]


def artwork_runs_progress(*, runs) -> dict[int, dict]:
    """The progress of several runs in one query (the run list)."""
    runs = list(runs)
    by_run: dict[int, dict] = {run.pk: {} for run in runs}
    counts = (
        PipelineItem.objects.filter(run__in=list(by_run))
        .values("run_id", "step")
        .annotate(
            total=Count("id"),
            done=Count("id", filter=Q(status=ItemStatus.DONE)),
            failed=Count("id", filter=Q(status=ItemStatus.FAILED)),
            last_finished=Max("finished_at"),
        )
    )
    for row in counts:
        by_run[row["run_id"]][row["step"]] = row
    progress = {pk: _progress(rows) for pk, rows in by_run.items()}
    for run in runs:
        progress[run.pk]["stalled"] = _stalled(run, by_run[run.pk], progress[run.pk])
    return progress


def _stalled(run: ArtworkPipelineRun, rows: dict, progress: dict) -> bool:
    finished = [row["last_finished"] for row in rows.values() if row["last_finished"]]
    return batch_run_is_stalled(
        run=run,
        last_finished=max(finished) if finished else None,
        has_pending=progress["n_finished"] < progress["n_items"],
    )


def _progress(rows: dict) -> dict:
    steps = []
    for value, label in PipelineStep.choices:
        row = rows.get(value)
        if row:
            steps.append(
                {
                    "step": value,
                    "label": label,
                    "total": row["total"],
                    "done": row["done"],
                    "failed": row["failed"],
                    "pending": row["total"] - row["done"] - row["failed"],
                }
            )
    total = sum(s["total"] for s in steps)
    finished = sum(s["done"] + s["failed"] for s in steps)
    return {
        "steps": steps,
        "n_items": total,
        "n_finished": finished,
        "n_failed": sum(s["failed"] for s in steps),
        "percent": int(100 * finished / total) if total else 0,
    }


def artwork_run_failed_items(*, run: ArtworkPipelineRun):
    return run.items.filter(status=ItemStatus.FAILED).select_related("artwork").order_by("id")


def artwork_run_artworks(*, run: ArtworkPipelineRun):
    ids = PipelineItem.objects.filter(run=run).values("artwork_id")
    return run.collection.artworks.filter(pk__in=ids).order_by("position", "id")


def artwork_run_artwork_detail(*, run: ArtworkPipelineRun, artwork) -> dict:
    """Per listener group: the base description, every pragmatic sample with its scores,
    and the listener's option scores per question and condition."""
    candidates = list(SpeakerCandidate.objects.filter(run=run, artwork=artwork).order_by("group", "speaker", "index"))
    answers = list(
        ListenerAnswer.objects.filter(run=run, question__artwork=artwork)
        .select_related("question")
        .order_by("group", "question__type", "question__position", "condition")
    )
    items = list(PipelineItem.objects.filter(run=run, artwork=artwork).order_by("id"))
    groups = []
    for group in run.groups:
        questions: dict = {}
        for answer in (a for a in answers if a.group == group):
            questions.setdefault(answer.question_id, {"question": answer.question, "answers": []})["answers"].append(
                answer
            )
        groups.append(
            {
                "group": group,
                "base": next((c for c in candidates if c.group == group and c.speaker == "base"), None),
                "pragmatic": [c for c in candidates if c.group == group and c.speaker == "pragmatic"],
                "questions": list(questions.values()),
            }
        )
    return {
        "groups": groups,
        "items": items,
        "elements": list(artwork.elements.order_by("position")),
        "questions": list(artwork.questions.order_by("type", "position")),
    }


# Which of the run's models a step's requests go to (the self-evaluation of a description is the speaker's).
STEP_ROLE = {
    PipelineStep.SYMBOLS: "builder",
    PipelineStep.BACKGROUND: "builder",
    PipelineStep.ATTUNED_QUESTIONS: "builder",
    PipelineStep.AGNOSTIC_QUESTIONS: "builder",
    PipelineStep.BASE: "speaker",
    PipelineStep.PRAGMATIC: "speaker",
    PipelineStep.LISTENER: "listener",
}
ROLES = ("builder", "speaker", "listener")


def artwork_run_role_model(run: ArtworkPipelineRun, role: str):
    return run.construction_model if role == "builder" else getattr(run, role)


def artwork_run_usage(*, run: ArtworkPipelineRun) -> dict:
    """The tokens the run's requests used, per model role and in all, and their cost at the prices
    its estimate used (the models' current prices for a run started before estimates): None when
    a model the run has items for has no price, never 0; a role with no items costs 0."""
    return artwork_runs_usage(runs=[run])[run.pk]


def artwork_runs_usage(*, runs) -> dict[int, dict]:
    """``artwork_run_usage`` of several runs in one query (the API's list)."""
    runs = list(runs)
    by_run = {run.pk: {role: {"tokens_in": 0, "tokens_out": 0} for role in ROLES} for run in runs}
    sums = (
        PipelineItem.objects.filter(run__in=list(by_run))
        .values("run_id", "step")
        .annotate(tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
        .order_by()
    )
    asked = set()
    for row in sums:
        role = by_run[row["run_id"]][STEP_ROLE[row["step"]]]
        role["tokens_in"] += row["tokens_in"] or 0
        role["tokens_out"] += row["tokens_out"] or 0
        asked.add((row["run_id"], STEP_ROLE[row["step"]]))
    found = {}
    for run in runs:
        by_role = by_run[run.pk]
        estimated = (run.estimate or {}).get("by_role") or {}
        total: float | None = 0.0
        for role, used in by_role.items():
            model = artwork_run_role_model(run, role)
            prices = estimated.get(role) or {"price_input": model.price_input, "price_output": model.price_output}
            used["model"] = model.name
            # A model the run has items for costs what its price says, and without a price its cost
            # is unknown even at 0 tokens reported (a local model, cached replies): never US$0.
            used["cost"] = (
                cost_of(
                    used["tokens_in"],
                    used["tokens_out"],
                    price_input=prices["price_input"],
                    price_output=prices["price_output"],
                )
                if (run.pk, role) in asked
                else 0.0
            )
            total = None if total is None or used["cost"] is None else total + used["cost"]
        found[run.pk] = {"tokens_in": run.tokens_in, "tokens_out": run.tokens_out, "cost": total, "by_role": by_role}
    return found
