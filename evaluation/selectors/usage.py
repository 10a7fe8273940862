"""The replies of evaluation runs that calibrate a model's token estimate (llm.selectors.usage):
each item sent one request and keeps its exact messages and the input tokens the provider reported."""

from ..models import ItemStatus, Run, RunItem


def run_calibration_samples(*, model, run_kind: str, limit: int, runs: int) -> list[tuple[list[dict], int]]:
    """(messages, reported input tokens) of the model's latest answered items (not from the cache),
    among its ``runs`` latest runs (of ``run_kind`` when given), latest first."""
    found = Run.objects.filter(model=model)
    if run_kind:
        found = found.filter(kind=run_kind)
    run_ids = list(found.order_by("-id").values_list("id", flat=True)[:runs])
    if not run_ids:
        return []
    return list(
        RunItem.objects.filter(run_id__in=run_ids, status=ItemStatus.DONE, cached=False, tokens_in__gt=0)
        .order_by("-id")
        .values_list("messages", "tokens_in")[:limit]
    )
