"""Starting, executing, cancelling and resuming an artwork pipeline run."""

import logging

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Case, F, IntegerField, Value, When
from django.utils import timezone
from django.utils.translation import gettext as _

from core.services.idempotency import idempotent_create
from llm.guard import model_refusal
from llm.models import ItemStatus, ModelConfig
from llm.providers import ProviderError, RetryableError
from llm.services import (
    batch_run_claim,
    batch_run_estimate,
    batch_run_work,
    estimate_confirmed,
    model_capability_problem,
    package_versions,
    usage_metered,
)

from ... import prompts as artwork_prompts
from ...models import ArtworkCollection, ArtworkPipelineRun, ArtworkQuestionType, PipelineItem, PipelineStep
from .cost import artwork_run_cost_estimate
from .messages import sees_images
from .steps import CONSTRUCTION, ORDER, STEPS, StepError, unmet_need

logger = logging.getLogger(__name__)
DEFAULT_GROUPS = ("american", "chinese")
RUN_IDEMPOTENCY_SCOPE = "artworks.pipeline_run"


def _model_facts(model: ModelConfig) -> dict:
    return {"name": model.name, "provider": model.provider, "model_id": model.model_id, "base_url": model.base_url}


def artwork_run_start(
    *,
    collection: ArtworkCollection,
    speaker: ModelConfig,
    listener: ModelConfig,
    builder: ModelConfig | None = None,
    samples: int = 10,
    lam: float = 0.0,
    limit: int | None = None,
    groups=DEFAULT_GROUPS,
    temperature: float = 1.0,
    word_limit: int = 75,
    max_tokens: int | None = None,
    enqueue: bool = True,
    user=None,
    idempotency_key: str | None = None,
    confirm_cost: bool = False,
) -> ArtworkPipelineRun:
    """Create a run with an item for every step not done yet, and queue it.

    Construction steps are skipped for an artwork that already has what they build
    (elements, background, attuned or agnostic questions), e.g. reviewed by a researcher;
    the speaker and listener steps run for every artwork and listener group.
    ``max_tokens`` caps every request (a slow local model in a test or a demo). With
    ``enqueue=False`` the caller executes the run itself (the CLI's --wait).

    A second request with the same ``idempotency_key`` (a double submit, a retried API call)
    returns the run the first one created, with ``run.idempotent_repeat`` set, and queues nothing.

    Its tokens and cost are estimated from its items first (kept as ``run.estimate``); above
    EVAL_COST_CONFIRM_USD without ``confirm_cost`` it raises CostNotConfirmed and nothing is stored.
    """
    run = idempotent_create(
        scope=RUN_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=ArtworkPipelineRun,
        create=lambda: _artwork_run_create(
            collection=collection,
            speaker=speaker,
            listener=listener,
            builder=builder,
            samples=samples,
            lam=lam,
            limit=limit,
            groups=groups,
            temperature=temperature,
            word_limit=word_limit,
            max_tokens=max_tokens,
            enqueue=enqueue,
            user=user,
            confirm_cost=confirm_cost,
        ),
    )
    return run


def artwork_run_estimate(
    *,
    collection: ArtworkCollection,
    speaker: ModelConfig,
    listener: ModelConfig,
    builder: ModelConfig | None = None,
    samples: int = 10,
    lam: float = 0.0,
    limit: int | None = None,
    groups=DEFAULT_GROUPS,
    temperature: float = 1.0,
    word_limit: int = 75,
    max_tokens: int | None = None,
    user=None,
) -> dict:
    """The estimate of the run these arguments would start, starting nothing (it is built, then rolled back)."""

    def build() -> dict:
        run = _artwork_run_create(
            collection=collection,
            speaker=speaker,
            listener=listener,
            builder=builder,
            samples=samples,
            lam=lam,
            limit=limit,
            groups=groups,
            temperature=temperature,
            word_limit=word_limit,
            max_tokens=max_tokens,
            enqueue=False,
            user=user,
            confirm_cost=True,
        )
        return {key: value for key, value in run.estimate.items() if key != "confirmed"}

    return batch_run_estimate(build=build)


@transaction.atomic
def _artwork_run_create(
    *,
    collection,
    speaker,
    listener,
    builder,
    samples,
    lam,
    limit,
    groups,
    temperature,
    word_limit,
    max_tokens,
    enqueue,
    user,
    confirm_cost=False,
) -> ArtworkPipelineRun:
    groups = [g.strip().lower() for g in groups if g and g.strip()]
    errors = {}
    if not groups:
        errors["groups"] = _("at least one listener group")
    if samples < 1:
        errors["samples"] = _("at least 1")
    if not 0 <= lam <= 1:
        errors["lam"] = _("between 0 and 1")
    if limit is not None and limit < 1:
        errors["limit"] = _("at least 1")
    if word_limit < 1:
        errors["word_limit"] = _("at least 1")
    for field, model in (("speaker", speaker), ("listener", listener), ("builder", builder)):
        refusal = model_refusal(model) if model is not None else None
        # The speaker scores its own descriptions (Eq. 4) and the listener answers by P(Correct):
        # both read token log-probabilities; the builder only writes text.
        refusal = refusal or (model_capability_problem(model, logprobs=True) if field != "builder" else None)
        if refusal:
            errors[field] = refusal
    if errors:
        raise ValidationError(errors)
    artworks = list(collection.artworks.order_by("position", "id"))
    if limit:
        artworks = artworks[:limit]
    if not artworks:
        raise ValidationError({"collection": _("the collection has no artworks")})
    run = ArtworkPipelineRun.objects.create(
        collection=collection,
        speaker=speaker,
        listener=listener,
        builder=builder,
        groups=groups,
        samples=samples,
        temperature=temperature,
        lam=lam,
        word_limit=word_limit,
        limit=limit,
        created_by=user,
        queued_at=timezone.now(),
        reproducibility={
            "speaker": _model_facts(speaker),
            "listener": _model_facts(listener),
            "builder": _model_facts(builder or speaker),
            "image_seen": {
                "builder": sees_images(builder or speaker),
                "speaker": sees_images(speaker),
                "listener": sees_images(listener),
            },
            "prompts_hash": artwork_prompts.prompts_hash(),
            "max_tokens": max_tokens,
            "packages": package_versions(),
        },
    )
    items = []
    for artwork in artworks:
        kinds = set(artwork.questions.values_list("type", flat=True))
        todo = {
            PipelineStep.SYMBOLS: not artwork.elements.exists(),
            PipelineStep.BACKGROUND: not artwork.background.strip(),
            PipelineStep.ATTUNED_QUESTIONS: ArtworkQuestionType.ATTUNED not in kinds,
            PipelineStep.AGNOSTIC_QUESTIONS: ArtworkQuestionType.AGNOSTIC not in kinds,
        }
        items += [PipelineItem(run=run, artwork=artwork, step=step) for step, needed in todo.items() if needed]
        for group in groups:
            items += [
                PipelineItem(run=run, artwork=artwork, step=step, group=group)
                for step in (PipelineStep.BASE, PipelineStep.PRAGMATIC, PipelineStep.LISTENER)
            ]
    PipelineItem.objects.bulk_create(items)
    # Raises before anything is queued; the transaction rolls the run and its items back.
    run.estimate = estimate_confirmed(artwork_run_cost_estimate(run=run), confirm_cost=confirm_cost)
    ArtworkPipelineRun.objects.filter(pk=run.pk).update(estimate=run.estimate)
    if enqueue:
        transaction.on_commit(lambda: artwork_run_enqueue(run.pk))
    return run


def artwork_run_enqueue(run_id: int) -> None:
    """Queue the task that claims the run and starts its chain (after the commit that queued it)."""
    from ...tasks import artwork_pipeline_task

    artwork_pipeline_task.delay(run_id)


def _next_pending(run_id: int) -> PipelineItem | None:
    """The first pending item in step order, artworks in collection order within a step."""
    rank = Case(*[When(step=step, then=Value(n)) for n, step in enumerate(ORDER)], output_field=IntegerField())
    return (
        PipelineItem.objects.filter(run_id=run_id, status=ItemStatus.PENDING)
        .select_related("artwork")
        .annotate(rank=rank)
        .order_by("rank", "artwork__position", "artwork_id", "id")
        .first()
    )


def artwork_run_dispatch(*, run_id: int) -> None:
    """Claim a queued run and start its chain of short step tasks (the Celery path)."""
    token = batch_run_claim(run_model=ArtworkPipelineRun, run_id=run_id)
    if token is not None:
        _enqueue_step(run_id, token)


def _enqueue_step(run_id: int, token: str) -> None:
    from ...tasks import artwork_pipeline_step_task

    artwork_pipeline_step_task.delay(run_id, token)


def artwork_run_step(*, run_id: int, token: str) -> None:
    """One short task of a run: items in order until ARTWORK_TASK_BUDGET_SECONDS is spent
    (never past a quarter of the Celery soft time limit), then a fresh task takes over."""
    budget = min(settings.ARTWORK_TASK_BUDGET_SECONDS, settings.CELERY_TASK_SOFT_TIME_LIMIT / 4)
    if _work(run_id, token, budget=budget):
        _enqueue_step(run_id, token)


def artwork_run_execute(*, run_id: int, progress=None) -> ArtworkPipelineRun:
    """Claim a queued run and process all its pending items in this process (the CLI's --wait).

    ``progress`` (optional) is called with each finished item, for a command's progress bar.
    """
    token = batch_run_claim(run_model=ArtworkPipelineRun, run_id=run_id)
    if token is not None:
        _work(run_id, token, budget=None, progress=progress)
    return ArtworkPipelineRun.objects.get(pk=run_id)


def _work(run_id: int, token: str, *, budget: float | None, progress=None) -> bool:
    """Process pending items in step order on the engine until none is left or the budget is spent;
    True when more remain."""
    run = ArtworkPipelineRun.objects.select_related("speaker", "listener", "builder", "collection").get(pk=run_id)
    return batch_run_work(
        run_model=ArtworkPipelineRun,
        run_id=run_id,
        token=token,
        next_item=_next_pending,
        process=lambda item: _process(run, item),
        budget=budget,
        time_limit_error=lambda item: (
            _("The step “%(step)s” of artwork %(key)s ran past the task time limit; resume to try it again.")
            % {"step": PipelineStep(item.step).label, "key": item.artwork.key}
        ),
        progress=progress,
    )


def _process(run: ArtworkPipelineRun, item: PipelineItem) -> None:
    unmet = unmet_need(item)
    if unmet:
        _item_write(item, status=ItemStatus.FAILED, error=unmet, attempts=0)
        return
    # A failed item's requests were paid for too: its usage is kept whatever the outcome.
    with usage_metered() as used:
        outcome = _outcome(run, item)
    _item_write(item, **outcome, tokens_in=used["tokens_in"], tokens_out=used["tokens_out"])


def _outcome(run: ArtworkPipelineRun, item: PipelineItem) -> dict:
    try:
        result = STEPS[item.step](run, item)
    except StepError as exc:
        return {
            "status": ItemStatus.FAILED,
            "error": str(exc),
            "response": exc.response,
            "messages": exc.messages,
            "attempts": exc.attempts,
        }
    except RetryableError as exc:
        return {"status": ItemStatus.FAILED, "error": _("gave up: %(error)s") % {"error": exc}}
    except ProviderError as exc:
        return {"status": ItemStatus.FAILED, "error": str(exc)}
    except SoftTimeLimitExceeded:
        raise  # the task must end now; the item stays pending for a resume
    except Exception as exc:  # noqa: BLE001 - one broken item must not stop the others
        logger.exception("artwork pipeline item %s failed", item.pk)
        return {"status": ItemStatus.FAILED, "error": f"{type(exc).__name__}: {exc}"}
    return {
        "status": ItemStatus.DONE,
        "response": result.response,
        "messages": result.messages,
        "attempts": result.attempts,
        "image_seen": result.image_seen,
    }


def _item_write(
    item: PipelineItem,
    *,
    status: str,
    error: str = "",
    response: str = "",
    messages=None,
    attempts: int = 1,
    image_seen: bool | None = None,
    tokens_in: int = 0,
    tokens_out: int = 0,
) -> None:
    with transaction.atomic():
        written = PipelineItem.objects.filter(pk=item.pk, status=ItemStatus.PENDING).update(
            status=status,
            error=error[:4000],
            response=response,
            messages=messages or [],
            attempts=attempts,
            image_seen=image_seen,
            finished_at=timezone.now(),
            # Added, not set: a failed item tried again keeps what its first try used.
            tokens_in=F("tokens_in") + tokens_in,
            tokens_out=F("tokens_out") + tokens_out,
        )
        if written and (tokens_in or tokens_out):
            ArtworkPipelineRun.objects.filter(pk=item.run_id).update(
                tokens_in=F("tokens_in") + tokens_in, tokens_out=F("tokens_out") + tokens_out
            )


def artwork_run_failed_construction(run_id: int) -> str:
    """Why a run whose items all finished failed: a construction step failed for every artwork
    (nothing after it had anything to work on); "" when it is done."""
    items = PipelineItem.objects.filter(run_id=run_id)
    for step in CONSTRUCTION:
        of_step = items.filter(step=step)
        if of_step.exists() and not of_step.exclude(status=ItemStatus.FAILED).exists():
            return _("the step “%(step)s” failed for every artwork") % {"step": PipelineStep(step).label}
    return ""
