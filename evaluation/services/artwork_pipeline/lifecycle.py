"""Starting, executing, cancelling and resuming an artwork pipeline run."""

import logging

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from ... import artwork_prompts
from ...models import (
    ArtworkCollection,
    ArtworkPipelineRun,
    ArtworkQuestionType,
    ItemStatus,
    ModelConfig,
    PipelineItem,
    PipelineStep,
    RunStatus,
)
from ...providers import ProviderError, RetryableError
from ..runs import _package_versions
from .messages import sees_images
from .steps import CONSTRUCTION, ORDER, STEPS, StepError, unmet_need

logger = logging.getLogger(__name__)
DEFAULT_GROUPS = ("american", "chinese")


class PipelineError(Exception):
    pass


def _model_facts(model: ModelConfig) -> dict:
    return {"name": model.name, "provider": model.provider, "model_id": model.model_id, "base_url": model.base_url}


@transaction.atomic
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
) -> ArtworkPipelineRun:
    """Create a run with an item for every step not done yet, and queue it.

    Construction steps are skipped for an artwork that already has what they build
    (elements, background, attuned or agnostic questions), e.g. reviewed by a researcher;
    the speaker and listener steps run for every artwork and listener group.
    ``max_tokens`` caps every request (a slow local model in a test or a demo). With
    ``enqueue=False`` the caller executes the run itself (the CLI's --wait).
    """
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
    if errors:
        raise ValidationError(errors)
    artworks = list(collection.artworks.order_by("position", "id"))
    if limit:
        artworks = artworks[:limit]
    if not artworks:
        raise ValidationError({"collection": _("the collection has no artworks")})
    run = ArtworkPipelineRun.objects.create(
        collection=collection, speaker=speaker, listener=listener, builder=builder, groups=groups, samples=samples,
        temperature=temperature, lam=lam, word_limit=word_limit, limit=limit, created_by=user,
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
            "packages": _package_versions(),
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
            items += [PipelineItem(run=run, artwork=artwork, step=step, group=group)
                      for step in (PipelineStep.BASE, PipelineStep.PRAGMATIC, PipelineStep.LISTENER)]
    PipelineItem.objects.bulk_create(items)
    if enqueue:
        transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _enqueue(run_id: int) -> None:
    from ...tasks import artwork_pipeline_task

    artwork_pipeline_task.delay(run_id)


def _pending_in_order(run_id: int) -> list[PipelineItem]:
    items = list(PipelineItem.objects.filter(run_id=run_id, status=ItemStatus.PENDING)
                 .select_related("artwork").order_by("artwork__position", "artwork_id", "id"))
    return sorted(items, key=lambda item: ORDER.index(item.step))  # stable: artworks stay in order


def artwork_run_execute(*, run_id: int, progress=None) -> ArtworkPipelineRun:
    """Claim a queued run and process its pending items in step order.

    ``progress`` (optional) is called with each finished item, for a command's progress bar.
    """
    claimed = ArtworkPipelineRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=timezone.now())
    run = ArtworkPipelineRun.objects.select_related("speaker", "listener", "collection").get(pk=run_id)
    if not claimed:
        return run
    for item in _pending_in_order(run_id):
        if ArtworkPipelineRun.objects.filter(pk=run_id, status=RunStatus.CANCELLED).exists():
            return ArtworkPipelineRun.objects.get(pk=run_id)
        _process(run, item)
        if progress is not None:
            progress(item)
    return _finish(run_id)


def _process(run: ArtworkPipelineRun, item: PipelineItem) -> None:
    unmet = unmet_need(item)
    if unmet:
        _item_write(item, status=ItemStatus.FAILED, error=unmet, attempts=0)
        return
    try:
        result = STEPS[item.step](run, item)
    except StepError as exc:
        _item_write(item, status=ItemStatus.FAILED, error=str(exc), response=exc.response, messages=exc.messages,
                    attempts=exc.attempts)
    except RetryableError as exc:
        _item_write(item, status=ItemStatus.FAILED, error=_("gave up: %(error)s") % {"error": exc})
    except ProviderError as exc:
        _item_write(item, status=ItemStatus.FAILED, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - one broken item must not stop the others
        logger.exception("artwork pipeline item %s failed", item.pk)
        _item_write(item, status=ItemStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
    else:
        _item_write(item, status=ItemStatus.DONE, response=result.response, messages=result.messages,
                    attempts=result.attempts, image_seen=result.image_seen)


def _item_write(item: PipelineItem, *, status: str, error: str = "", response: str = "", messages=None,
                attempts: int = 1, image_seen: bool | None = None) -> None:
    PipelineItem.objects.filter(pk=item.pk, status=ItemStatus.PENDING).update(
        status=status, error=error[:4000], response=response, messages=messages or [], attempts=attempts,
        image_seen=image_seen, finished_at=timezone.now())


def _finish(run_id: int) -> ArtworkPipelineRun:
    """Done when nothing is pending; failed when a construction step failed for every artwork."""
    items = PipelineItem.objects.filter(run_id=run_id)
    if items.filter(status=ItemStatus.PENDING).exists():
        return ArtworkPipelineRun.objects.get(pk=run_id)
    error = ""
    for step in CONSTRUCTION:
        of_step = items.filter(step=step)
        if of_step.exists() and not of_step.exclude(status=ItemStatus.FAILED).exists():
            error = _("the step “%(step)s” failed for every artwork") % {"step": PipelineStep(step).label}
            break
    ArtworkPipelineRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.FAILED if error else RunStatus.DONE, error=error, finished_at=timezone.now())
    return ArtworkPipelineRun.objects.get(pk=run_id)


def artwork_run_cancel(*, run: ArtworkPipelineRun, user=None) -> ArtworkPipelineRun:
    """Stop a queued or running run after the item in progress; finished items stay."""
    changed = ArtworkPipelineRun.objects.filter(pk=run.pk, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).update(
        status=RunStatus.CANCELLED, finished_at=timezone.now())
    run.refresh_from_db()
    if not changed:
        raise PipelineError(_("the run is %(status)s and cannot be cancelled")
                            % {"status": run.get_status_display().lower()})
    return run


def _stalled(run: ArtworkPipelineRun) -> bool:
    """Running with pending items and nothing finished for EVAL_STALL_SECONDS."""
    if run.status != RunStatus.RUNNING or not run.items.filter(status=ItemStatus.PENDING).exists():
        return False
    last = run.items.exclude(finished_at=None).order_by("-finished_at").values_list("finished_at", flat=True).first()
    since = last or run.started_at or run.created_at
    return (timezone.now() - since).total_seconds() > settings.EVAL_STALL_SECONDS


def artwork_run_resume(*, run: ArtworkPipelineRun, user=None, retry_failed: bool = False) -> ArtworkPipelineRun:
    """Queue a cancelled or failed run again: its pending items (and with ``retry_failed`` its
    failed ones) are processed; every request answered before comes from the cache."""
    with transaction.atomic():
        changed = ArtworkPipelineRun.objects.filter(
            pk=run.pk, status__in=[RunStatus.CANCELLED, RunStatus.FAILED]).update(
            status=RunStatus.QUEUED, finished_at=None, error="")
        if not changed and _stalled(run):
            # A worker killed mid-run leaves it running; a live run is never executed twice.
            changed = ArtworkPipelineRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
                status=RunStatus.QUEUED)
        if not changed and retry_failed:
            changed = ArtworkPipelineRun.objects.filter(pk=run.pk, status=RunStatus.DONE).update(
                status=RunStatus.QUEUED, finished_at=None, error="")
        run.refresh_from_db()
        if not changed:
            raise PipelineError(_("the run is %(status)s and cannot be resumed")
                                % {"status": run.get_status_display().lower()})
        if retry_failed:
            run.items.filter(status=ItemStatus.FAILED).update(status=ItemStatus.PENDING, error="")
        transaction.on_commit(lambda: _enqueue(run.pk))
    return run
