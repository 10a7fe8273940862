"""Reads of the Prolific integration: what would be sent, what Prolific reported, what the log holds."""

from .bodies import (
    completion_codes,
    external_study_url,
    prolific_study_bodies,
    reward_minor_units,
    site_unreachable,
    site_url,
)
from .studies import (
    bonus_batch_of,
    bonus_batches_of,
    prolific_calls_of,
    prolific_configured,
    prolific_discrepancies,
    prolific_review_rows,
    prolific_studies_of,
    prolific_study_find,
    prolific_submission_of,
    prolific_submissions_of,
    prolific_webhook_secret_configured,
    webhook_refusals_recent,
    worker_hint,
)

__all__ = [
    "bonus_batch_of",
    "bonus_batches_of",
    "completion_codes",
    "external_study_url",
    "prolific_calls_of",
    "prolific_configured",
    "prolific_discrepancies",
    "prolific_review_rows",
    "prolific_studies_of",
    "prolific_study_bodies",
    "prolific_study_find",
    "prolific_submission_of",
    "prolific_submissions_of",
    "prolific_webhook_secret_configured",
    "reward_minor_units",
    "site_unreachable",
    "site_url",
    "webhook_refusals_recent",
    "worker_hint",
]
