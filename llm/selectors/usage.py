"""What a model's past replies say about counting its tokens: the calibration of the byte estimate.

A kind of work whose items each keep the exact messages of one request and the input tokens the
provider reported for them (llm.kinds) lends them here, so the ratio of reported to estimated tokens is read from stored data, nothing else.
"""

from ..costs import bytes_estimate, has_image
from ..kinds import work_kinds

# The replies a calibration reads: the latest, so a change at the endpoint shows soon.
CALIBRATION_REPLIES = 200
# Fewer than this and the ratio says more about the items than about the model.
CALIBRATION_MIN_REPLIES = 3
# The model's latest runs among which those replies are looked for.
CALIBRATION_RUNS = 50


def _samples(*, model, run_kind: str) -> list[tuple[list[dict], int]]:
    """The latest replies of every kind of work that records one request per item."""
    samples = []
    for kind in work_kinds():
        if kind.calibration_samples is not None:
            samples += kind.calibration_samples(
                model=model, run_kind=run_kind, limit=CALIBRATION_REPLIES, runs=CALIBRATION_RUNS
            )
    # An image's tokens are in the report and not in the estimate: such a reply would skew the ratio.
    return [(messages, tokens) for messages, tokens in samples if messages and not has_image(messages)][
        :CALIBRATION_REPLIES
    ]


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
