"""What a write that changes a round's answers, decisions or items calls, once per change.

It retires the round's cached figures everywhere (the round's change stamp, core.stamps: the
statistics, the quality figures, the funnel and progress are keyed by it) and, once the change
commits, schedules the refresh of the round page's stored quality summary. Drafts do not call it:
a draft changes nothing a figure counts.
"""

import logging

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from kombu.exceptions import OperationalError

from core.stamps import stamp_bump

from ..models import AnnotationRound, Dataset, Expression, RoundQualitySummary
from ..selectors.quality import round_quality
from ..selectors.stats import round_agreement_stats
from ..selectors.workflow import dataset_scope, round_scope, round_stamp

logger = logging.getLogger(__name__)


def _queued_key(round_id: int) -> str:
    return f"vivid:round-summary-queued:{round_id}"


def round_changed(*, round_id: int) -> None:
    stamp_bump(scope=round_scope(round_id), then=lambda: round_summary_schedule(round_id=round_id))


def dataset_changed(*, dataset_id: int) -> None:
    """Expressions came or went: the dataset's stored count is recounted, and the funnels of its
    rounds, which show it, are retired."""
    Dataset.objects.filter(pk=dataset_id).update(
        expression_count=Expression.objects.filter(dataset_id=dataset_id).count()
    )
    stamp_bump(scope=dataset_scope(dataset_id))


def round_summary_schedule(*, round_id: int) -> bool:
    """Queue one refresh of the round's figures and summary, unless one is already queued.

    A team answering together makes many changes a second: the flag in the shared cache lets one
    task through per round, and the task clears it before it reads, so a change made while it
    computes queues the next one. Returns whether a task was queued.
    """
    key = _queued_key(round_id)
    # The flag outlives a lost task (a broker restart) by a little, never for good.
    if not cache.add(key, 1, timeout=settings.ROUND_SUMMARY_DELAY_SECONDS + 300):
        return False
    from ..tasks import round_summary_refresh_task

    try:
        round_summary_refresh_task.apply_async((round_id,), countdown=settings.ROUND_SUMMARY_DELAY_SECONDS)
    except (OperationalError, OSError):  # the broker is down: the next change tries again
        cache.delete(key)
        logger.warning("Could not queue the quality summary of round %s", round_id, exc_info=True)
        return False
    return True


def round_summary_refresh(*, round_id: int) -> RoundQualitySummary | None:
    """Compute the round's figures under its current stamp, where every page and API call then reads
    them (the quality figures and the agreement statistics), and store what the round page shows of
    the quality figures on every load (its drift warnings)."""
    cache.delete(_queued_key(round_id))
    round_ = AnnotationRound.objects.filter(pk=round_id).first()
    if round_ is None:
        return None
    # Read before the figures: a change made meanwhile leaves the summary marked as stale.
    stamp = round_stamp(round_id=round_id)
    report = round_quality(round=round_)
    round_agreement_stats(round=round_)
    summary, _created = RoundQualitySummary.objects.update_or_create(
        round=round_, defaults={"stamp": stamp, "warnings": report["warnings"], "computed_at": timezone.now()}
    )
    return summary
