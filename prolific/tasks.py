"""Celery tasks of the Prolific integration: each takes ids and calls a service.

``prolific.sync`` re-enqueues itself every PROLIFIC_SYNC_SECONDS while the study is live and has
a Prolific study; a hold in the database (ProlificSyncChain) keeps one chain per study however
often, and from however many processes, publish starts it.
``prolific.bonus_pay`` pays a batch the page queued; it may be delivered twice (acks_late): it pays only a
batch still QUEUED, which it moves to SENDING before the request leaves, so never twice.
"""

from celery import shared_task
from django.conf import settings

from .services import bonus_batch_pay_queued, prolific_sync_scheduled
from .services.sync import sync_chain_claim, sync_chain_end, sync_chain_extend


@shared_task(name="prolific.sync")
def prolific_sync_task(study_id: int, holder: str | None = None) -> None:
    period = settings.PROLIFIC_SYNC_SECONDS
    # A task queued before chains carried their holder token claims the hold as a start would.
    holder = holder or sync_chain_claim(study_id=study_id, seconds=period * 2)
    # The hold lasts through this sync; a chain whose hold expired and was taken over stops here.
    if holder is None or not sync_chain_extend(study_id=study_id, holder=holder, seconds=period * 2):
        return
    again = prolific_sync_scheduled(study_id=study_id)
    if again and prolific_sync_task.app.conf.task_always_eager:
        # Run inline (tests, a worker-less set-up): the countdown would not wait, the chain would never end.
        sync_chain_end(study_id=study_id, holder=holder)
    elif again and sync_chain_extend(study_id=study_id, holder=holder, seconds=period * 2):
        # The hold outlives the countdown a little, so a start meanwhile does not begin a second chain.
        prolific_sync_task.apply_async(args=[study_id, holder], countdown=period)
    else:
        sync_chain_end(study_id=study_id, holder=holder)


def prolific_sync_start(study_id: int) -> bool:
    """Start the study's periodic sync unless a chain already holds it; call it on commit."""
    holder = sync_chain_claim(study_id=study_id, seconds=settings.PROLIFIC_SYNC_SECONDS * 2)
    if holder is None:
        return False
    prolific_sync_task.apply_async(args=[study_id, holder], countdown=settings.PROLIFIC_SYNC_SECONDS)
    return True


@shared_task(name="prolific.bonus_pay")
def prolific_bonus_pay_task(batch_id: int) -> None:
    bonus_batch_pay_queued(batch_id=batch_id)
