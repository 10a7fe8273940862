"""Writes of the Prolific integration, shared by the pages, the webhook, the commands and the tasks."""

from .bonuses import (
    BonusFileError,
    bonus_batch_create,
    bonus_batch_pay,
    bonus_batch_pay_queued,
    bonus_batch_pay_request,
    bonus_rows_validate,
)
from .studies import prolific_study_create, prolific_study_publish, prolific_study_refresh
from .submissions import (
    BULK_APPROVE_BATCH,
    REJECTION_CATEGORIES,
    prolific_submission_reject,
    prolific_submission_request_return,
    prolific_submission_status_apply,
    prolific_submissions_approve_valid,
    prolific_submissions_sync,
)
from .sync import prolific_sync_scheduled
from .webhooks import (
    WebhookSignatureError,
    prolific_hooks_register,
    prolific_hooks_secret_create,
    prolific_webhook_receive,
)

__all__ = [
    "BULK_APPROVE_BATCH",
    "REJECTION_CATEGORIES",
    "BonusFileError",
    "WebhookSignatureError",
    "bonus_batch_create",
    "bonus_batch_pay",
    "bonus_batch_pay_queued",
    "bonus_batch_pay_request",
    "bonus_rows_validate",
    "prolific_hooks_register",
    "prolific_hooks_secret_create",
    "prolific_study_create",
    "prolific_study_publish",
    "prolific_study_refresh",
    "prolific_submission_reject",
    "prolific_submission_request_return",
    "prolific_submission_status_apply",
    "prolific_submissions_approve_valid",
    "prolific_submissions_sync",
    "prolific_sync_scheduled",
    "prolific_webhook_receive",
]
