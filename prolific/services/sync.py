"""The periodic sync while a study is live on Prolific: one chain of tasks per study, never two."""

import logging

from django.core.cache import cache

from study.models import Study, StudyStatus

from ..client import ProlificError, api_token
from ..models import ProlificStudy, ProlificStudyStatus
from .submissions import prolific_submissions_sync

logger = logging.getLogger(__name__)

LIVE_ON_PROLIFIC = (ProlificStudyStatus.PUBLISHING, ProlificStudyStatus.ACTIVE, ProlificStudyStatus.PAUSED)


def sync_chain_key(study_id: int) -> str:
    return f"prolific:sync-chain:{study_id}"


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


def sync_chain_claim(*, study_id: int, seconds: int) -> bool:
    """Whether this caller starts the study's chain (no chain has run within the last ``seconds``)."""
    return cache.add(sync_chain_key(study_id), 1, timeout=seconds)


def sync_chain_extend(*, study_id: int, seconds: int) -> None:
    cache.set(sync_chain_key(study_id), 1, timeout=seconds)


def sync_chain_end(*, study_id: int) -> None:
    cache.delete(sync_chain_key(study_id))
