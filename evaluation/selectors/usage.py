"""What a model's past replies say about counting its tokens: the calibration of the byte estimate.

Every run item keeps the exact messages it sent and the input tokens the provider reported for
them, so the ratio of reported to estimated tokens is read from stored data, nothing else.
"""

from ..costs import bytes_estimate, has_image
from ..models import ItemStatus, Run, RunItem

# The replies a calibration reads: the latest, so a change at the endpoint shows soon.
CALIBRATION_REPLIES = 200
# Fewer than this and the ratio says more about the items than about the model.
CALIBRATION_MIN_REPLIES = 3
# The model's latest runs among which those replies are looked for.
CALIBRATION_RUNS = 50


def _samples(*, model, run_kind: str) -> list[tuple[list[dict], int]]:
    runs = Run.objects.filter(model=model)
    if run_kind:
        runs = runs.filter(kind=run_kind)
    run_ids = list(runs.order_by("-id").values_list("id", flat=True)[:CALIBRATION_RUNS])
    if not run_ids:
        return []
    rows = (
        RunItem.objects.filter(run_id__in=run_ids, status=ItemStatus.DONE, cached=False, tokens_in__gt=0)
        .order_by("-id")
        .values_list("messages", "tokens_in")[:CALIBRATION_REPLIES]
    )
    # An image's tokens are in the report and not in the estimate: such a reply would skew the ratio.
    return [(messages, tokens) for messages, tokens in rows if messages and not has_image(messages)]


def model_token_calibration(*, model, run_kind: str = "") -> dict | None:
    """{"ratio", "replies", "run_kind"}: reported input tokens over the byte estimate of the same
    messages, summed over the model's latest replies (those of ``run_kind`` when it has enough), or
    None before it has CALIBRATION_MIN_REPLIES of them."""
    for kind in dict.fromkeys((run_kind, "")):
        samples = _samples(model=model, run_kind=kind)
        if len(samples) >= CALIBRATION_MIN_REPLIES:
            estimated = sum(bytes_estimate(messages) for messages, _ in samples)
            reported = sum(tokens for _, tokens in samples)
            return {"ratio": round(reported / estimated, 4), "replies": len(samples), "run_kind": kind}
    return None
