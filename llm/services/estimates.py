"""Estimate and confirm: what a run of any kind will cost, kept on the run before it starts;
above EVAL_COST_CONFIRM_USD it starts only when the request confirms the cost."""

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _


class _Estimated(Exception):
    def __init__(self, estimate: dict):
        super().__init__("estimated")
        self.estimate = estimate


class CostNotConfirmed(ValidationError):
    """The estimate is above the threshold and the request did not confirm it; ``estimate`` says how much."""

    def __init__(self, estimate: dict):
        super().__init__({"confirm_cost": estimate_text(estimate) + " " + _("Confirm the cost to start the run.")})
        self.estimate = estimate


def estimate_text(estimate: dict) -> str:
    values = {
        "tokens_in": estimate["tokens_in"],
        "tokens_out": estimate["tokens_out"],
        "n": estimate["n_requests"],
        "cost": estimate["cost"],
        "threshold": estimate["threshold"],
    }
    if estimate["cost"] is None:
        return (
            _(
                "Estimated %(tokens_in)s input and at most %(tokens_out)s output tokens over %(n)s requests; "
                "price unknown, so the cost is unknown (set the model's price to know it)."
            )
            % values
        )
    if estimate["needs_confirmation"]:
        return (
            _(
                "Estimated %(tokens_in)s input and at most %(tokens_out)s output tokens over %(n)s requests: "
                "at most US$%(cost).4f, above the US$%(threshold).2f that needs a confirmation."
            )
            % values
        )
    return (
        _(
            "Estimated %(tokens_in)s input and at most %(tokens_out)s output tokens over %(n)s requests: "
            "at most US$%(cost).4f."
        )
        % values
    )


def estimate_totals(*, tokens_in: int, tokens_out: int, n_requests: int, cost: float | None, **details) -> dict:
    """An estimate as every run keeps it and ``estimate_text`` reads it, with the threshold it was held to."""
    threshold = float(settings.EVAL_COST_CONFIRM_USD)
    return {
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "n_requests": n_requests,
        **details,
        "cost": cost,
        "threshold": threshold,
        "needs_confirmation": cost is not None and cost > threshold,
    }


def estimate_confirmed(estimate: dict, *, confirm_cost: bool) -> dict:
    """The estimate to keep on a run about to start; CostNotConfirmed when it needs a confirmation it lacks."""
    if estimate["needs_confirmation"] and not confirm_cost:
        raise CostNotConfirmed(estimate)
    return {**estimate, "confirmed": bool(estimate["needs_confirmation"] and confirm_cost)}


def batch_run_estimate(*, build: Callable[[], dict]) -> dict:
    """The estimate ``build`` makes, with everything it stored rolled back: a run is built to render
    its exact prompts and count them, and nothing of it stays."""
    try:
        with transaction.atomic():
            raise _Estimated(build())
    except _Estimated as done:
        return done.estimate
