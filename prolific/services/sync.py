"""The periodic sync while a study is live on Prolific: one chain of tasks per study, never two.

The chain's hold is a row (ProlificSyncChain) in the database every web and worker process shares,
whatever CACHE_URL says: a per-process cache would let each process start a chain of its own.
"""

import logging
import uuid
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from study.models import Study, StudyStatus

from ..client import ProlificError, api_token
from ..models import ProlificStudy, ProlificStudyStatus, ProlificSyncChain
from .submissions import prolific_submissions_sync

logger = logging.getLogger(__name__)

LIVE_ON_PROLIFIC = (ProlificStudyStatus.PUBLISHING, ProlificStudyStatus.ACTIVE, ProlificStudyStatus.PAUSED)


def prolific_sync_wanted(*, study_id: int) -> bool:
    """The study is live here, has a published Prolific study, and a token is configured."""
    return (
        bool(api_token())
        and Study.objects.filter(pk=study_id, status=StudyStatus.LIVE).exists()
        and ProlificStudy.objects.filter(study_id=study_id, status__in=LIVE_ON_PROLIFIC)
        .exclude(prolific_id="")
        .exists()
    )


def prolific_sync_scheduled(*, study_id: int) -> bool:
    """One periodic sync of a study; True when the chain should go on (the study is still live)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return False
    try:
        counts = prolific_submissions_sync(study=study)
    except ProlificError as exc:
        # Logged in ApiCall already; the next run tries again (a token fixed meanwhile, Prolific back).
        logger.warning("Prolific sync of %s failed: %s", study.slug, exc)
    else:
        logger.info("Prolific sync of %s: %s", study.slug, counts)
    return prolific_sync_wanted(study_id=study_id)


def sync_chain_claim(*, study_id: int, seconds: int) -> str | None:
    """The new chain's holder token when this caller starts the study's chain; None while another chain
    holds it (its hold has not expired). Call it outside a transaction, so the hold is seen at once."""
    now = timezone.now()
    holder = uuid.uuid4().hex
    expires = now + timedelta(seconds=seconds)
    # An expired hold: of two callers at once, the guarded UPDATE changes the row for one only.
    if ProlificSyncChain.objects.filter(study_id=study_id, expires_at__lte=now).update(
        holder=holder, expires_at=expires
    ):
        return holder
    try:
        with transaction.atomic():
            ProlificSyncChain.objects.create(study_id=study_id, holder=holder, expires_at=expires)
    except IntegrityError:
        return None  # held by a live chain, or claimed by another caller this instant
    return holder


def sync_chain_extend(*, study_id: int, holder: str, seconds: int) -> bool:
    """Keep the hold ``seconds`` longer; False when this chain no longer holds the study (it must stop)."""
    expires = timezone.now() + timedelta(seconds=seconds)
    return bool(ProlificSyncChain.objects.filter(study_id=study_id, holder=holder).update(expires_at=expires))


def sync_chain_end(*, study_id: int, holder: str) -> None:
    ProlificSyncChain.objects.filter(study_id=study_id, holder=holder).delete()
