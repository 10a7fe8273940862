"""What the app knows of Prolific: the studies it created there, their submissions, bonus batches and every API call.

The API token is never stored: it is read from the environment at each request (settings.PROLIFIC_API_TOKEN_ENV).
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from study.models import Participant, Study


class CompletionAction(models.TextChoices):
    AUTOMATICALLY_APPROVE = "AUTOMATICALLY_APPROVE", _("Approve automatically")
    MANUALLY_REVIEW = "MANUALLY_REVIEW", _("Review manually")


class ProlificStudyStatus(models.TextChoices):
    # Local steps first; the rest mirror Prolific's own study statuses.
    CREATING = "CREATING", _("Being created")
    UNPUBLISHED = "UNPUBLISHED", _("Draft on Prolific")
    PUBLISHING = "PUBLISHING", _("Being published")
    ACTIVE = "ACTIVE", _("Live")
    PAUSED = "PAUSED", _("Paused")
    AWAITING_REVIEW = "AWAITING REVIEW", _("Awaiting review")
    COMPLETED = "COMPLETED", _("Completed")


class ProlificStudy(models.Model):
    """One Prolific study per local study and group ('' when the study has one link for all groups).

    The row is written (status CREATING) before the create request is sent, so a retried or
    repeated publish finds it and never creates a second Prolific study.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prolific_studies")
    group = models.CharField(max_length=20, blank=True)
    prolific_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=20, choices=ProlificStudyStatus.choices, default=ProlificStudyStatus.CREATING)
    completion_action = models.CharField(
        max_length=24, choices=CompletionAction.choices, default=CompletionAction.MANUALLY_REVIEW
    )
    filters = models.JSONField(default=list, blank=True)
    # The create request's body as sent, so the page and --dry-run show exactly what Prolific got.
    request_body = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    # When a create request was last sent for this row; null when none is under way. A create
    # without an answer after a while is taken over (the study is looked up on Prolific first).
    attempt_at = models.DateTimeField(null=True, blank=True)
    # Prolific's message when it refused the create or the publish, or the create got no answer.
    last_error = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "group"], name="prolific_study_once_per_group")]
        verbose_name_plural = "Prolific studies"

    def __str__(self):
        return f"{self.study.slug}/{self.group or '*'} → {self.prolific_id or '-'}"


class ProlificSyncChain(models.Model):
    """Which chain of periodic sync tasks holds the study, until when: one row per study, seen by every process.

    Claimed by a unique insert (or, once expired, by an UPDATE guarded on ``expires_at``), so two
    processes starting the chain at once start one; a chain whose ``holder`` no longer matches
    (its hold expired and another took over) stops.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, primary_key=True, related_name="+")
    holder = models.CharField(max_length=32)
    expires_at = models.DateTimeField()

    def __str__(self):
        return f"sync chain of {self.study_id} until {self.expires_at:%Y-%m-%d %H:%M:%S}"


class SubmissionStatus(models.TextChoices):
    RESERVED = "RESERVED", _("Reserved")
    ACTIVE = "ACTIVE", _("Active")
    AWAITING_REVIEW = "AWAITING REVIEW", _("Awaiting review")
    APPROVED = "APPROVED", _("Approved")
    REJECTED = "REJECTED", _("Rejected")
    RETURNED = "RETURNED", _("Returned")
    TIMED_OUT = "TIMED-OUT", _("Timed out")
    SCREENED_OUT = "SCREENED OUT", _("Screened out")
    PARTIALLY_APPROVED = "PARTIALLY APPROVED", _("Partially approved")


# Prolific gives these places back to the study.
PLACE_FREEING_STATUSES = (SubmissionStatus.RETURNED, SubmissionStatus.TIMED_OUT, SubmissionStatus.REJECTED)


class ProlificSubmission(models.Model):
    """A submission as Prolific last reported it, beside the local session it belongs to (if any)."""

    prolific_study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="submissions")
    submission_id = models.CharField(max_length=64, unique=True)
    # PROLIFIC_PID (Prolific's participant_id).
    prolific_pid = models.CharField(max_length=64)
    participant = models.ForeignKey(
        Participant, null=True, blank=True, on_delete=models.SET_NULL, related_name="prolific_submissions"
    )
    status = models.CharField(max_length=20, choices=SubmissionStatus.choices)
    study_code = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    status_changed_at = models.DateTimeField(auto_now_add=True)
    # Prolific's message when it refused an approval, rejection or return.
    last_error = models.TextField(blank=True)
    # Claimed (and committed) before the approval is sent, so no submission is sent for approval twice.
    approval_requested_at = models.DateTimeField(null=True, blank=True)
    return_requested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["prolific_study", "status"])]

    def __str__(self):
        return f"{self.submission_id} {self.status}"


class BonusBatchStatus(models.TextChoices):
    CREATED = "CREATED", _("Created, not paid")
    # Pay was pressed on the page: a worker's task sends it (nothing has left yet).
    QUEUED = "QUEUED", _("Waiting for the worker to pay")
    # Recorded before the pay request leaves: a batch in SENDING or SENT is never sent again.
    SENDING = "SENDING", _("Pay request sent, answer unknown")
    SENT = "SENT", _("Paid")
    FAILED = "FAILED", _("Refused by Prolific")


class BonusBatch(models.Model):
    prolific_study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="bonus_batches")
    prolific_id = models.CharField(max_length=64, blank=True)
    # [{"participant_id": ..., "amount": "1.50"}, ...] in the study currency's major unit.
    rows = models.JSONField(default=list)
    # sha256 of the normalised rows: the same file uploaded twice finds its batch.
    fingerprint = models.CharField(max_length=64)
    amount = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    fees = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    vat = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    total_amount = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    status = models.CharField(max_length=10, choices=BonusBatchStatus.choices, default=BonusBatchStatus.CREATED)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    # When Pay was pressed on the page (the worker has not claimed it yet while QUEUED).
    queued_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["prolific_study", "fingerprint"], name="prolific_bonus_batch_once")
        ]

    def __str__(self):
        return f"bonus batch {self.pk} {self.status}"


class ApiCall(models.Model):
    """Every request to Prolific and its answer, without the token, for researchers to read."""

    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.SET_NULL, related_name="prolific_calls")
    method = models.CharField(max_length=8)
    url = models.CharField(max_length=500)
    request_body = models.JSONField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True)
    error = models.TextField(blank=True)
    attempt = models.PositiveSmallIntegerField(default=1)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self):
        return f"{self.method} {self.url} → {self.status_code}"


class WebhookDelivery(models.Model):
    """Each webhook request received: every valid one; of the refused ones, the first
    PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE of each minute, to show who is knocking (the rest are only counted)."""

    received_at = models.DateTimeField(auto_now_add=True, db_index=True)
    signature_valid = models.BooleanField()
    event_type = models.CharField(max_length=100, blank=True)
    submission_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=20, blank=True)
    remote_addr = models.CharField(max_length=64, blank=True)
    body = models.TextField(blank=True)
    # What the delivery changed: "updated", "unchanged", "unknown submission", "invalid signature".
    outcome = models.CharField(max_length=40, blank=True)

    def __str__(self):
        return f"{self.received_at:%Y-%m-%d %H:%M:%S} {self.outcome}"


class WebhookRefusalCount(models.Model):
    """How many webhook deliveries were refused in one minute, every one counted (anyone can post them)."""

    minute = models.DateTimeField(unique=True)
    count = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"{self.minute:%Y-%m-%d %H:%M} {self.count} refused"
