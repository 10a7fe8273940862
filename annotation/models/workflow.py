"""The two-annotator validation workflow (VIVID paper, section 3.3).

Suggestions (stage 1) are kept apart from human labels. A round hands every
item to annotators (two by default); their assignments are blind to each
other until adjudication. Unanimous items are accepted, the rest go to an
adjudicator, and a researcher freezes the accepted items into an immutable
dataset version.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from .corpus import Dataset, Expression, Theme, Trait


class SuggestionSet(models.Model):
    """LLM trait suggestions for a dataset, from one model and prompt version."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="suggestion_sets")
    name = models.CharField(max_length=200)
    model_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=300, blank=True, help_text=_("A file name or a model run."))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="suggestion_set_unique_name")]

    def __str__(self):
        return f"{self.name} ({self.model_name})"


class Suggestion(models.Model):
    suggestion_set = models.ForeignKey(SuggestionSet, on_delete=models.CASCADE, related_name="suggestions")
    expression = models.ForeignKey(Expression, on_delete=models.CASCADE, related_name="suggestions")
    traits = models.ManyToManyField(Trait, blank=True, related_name="+")
    raw_output = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["suggestion_set", "expression"], name="suggestion_unique_item")]

    def __str__(self):
        return f"{self.suggestion_set_id}:{self.expression_id}"


class RoundStatus(models.TextChoices):
    OPEN = "open", _("Open for review")
    LOCKED = "locked", _("Locked (adjudication)")
    FROZEN = "frozen", _("Frozen")


class AnnotationRound(models.Model):
    name = models.CharField(max_length=200, unique=True)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="rounds")
    suggestion_set = models.ForeignKey(
        SuggestionSet, null=True, blank=True, on_delete=models.PROTECT, related_name="rounds"
    )
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="annotation_rounds")
    annotators_per_item = models.PositiveSmallIntegerField(default=2)
    # What part of the dataset the round covers, as the researcher chose it (kept for the record).
    item_filter = models.JSONField(default=dict, blank=True)
    # Anchoring control: suggestions are hidden from this fraction of items, chosen with `seed`.
    hide_suggestions_fraction = models.FloatField(default=0.0)
    seed = models.BigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=RoundStatus.choices, default=RoundStatus.OPEN)
    # Annotator quality (README "Annotator quality"): the share of each queue given to control items,
    # the drift window, the figure below which a window warns, and the answer time flagged as too fast.
    control_rate = models.FloatField(default=0.05)
    quality_window = models.PositiveIntegerField(default=50)
    quality_threshold = models.FloatField(default=0.4)
    fast_seconds = models.FloatField(default=3.0)
    # The round's regular items (control items left out) and how many of them hide their suggestions:
    # counted when items are added (services.rounds.round_item_counts_refresh), so the pages that show
    # them every request never count the round's items.
    item_count = models.PositiveIntegerField(default=0)
    hidden_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class RoundQualitySummary(models.Model):
    """What the round page shows of the quality figures on every load (its drift warnings), stored by
    a Celery task after answers (services.changes) so that no page load recomputes the figures.

    ``stamp`` is the round's change stamp the figures were computed at (core.stamps): a summary
    whose stamp is not the round's current one is shown as being refreshed.
    """

    round = models.OneToOneField(
        AnnotationRound, primary_key=True, on_delete=models.CASCADE, related_name="quality_summary"
    )
    stamp = models.CharField(max_length=64)
    warnings = models.JSONField(default=list)
    computed_at = models.DateTimeField()

    def __str__(self):
        return f"quality summary {self.round_id}"


class ControlItem(models.Model):
    """An item whose traits and theme are known, slipped unannounced into annotators' queues.

    It reaches a queue as a RoundItem pointing here; it never counts in agreement statistics,
    the funnel or a version.
    """

    round = models.ForeignKey(AnnotationRound, on_delete=models.CASCADE, related_name="controls")
    expression = models.ForeignKey(Expression, on_delete=models.PROTECT, related_name="+")
    traits = models.JSONField(default=list)
    theme = models.ForeignKey(Theme, on_delete=models.PROTECT, related_name="+")
    source_version = models.ForeignKey(
        "DatasetVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["round_id", "id"]
        constraints = [models.UniqueConstraint(fields=["round", "expression"], name="control_unique_expression")]

    def __str__(self):
        return f"control {self.round_id}:{self.expression_id}"


class ItemStatus(models.TextChoices):
    PENDING = "pending", _("Awaiting reviews")
    UNANIMOUS = "unanimous", _("Unanimous")
    NEEDS_ADJUDICATION = "needs_adjudication", _("Needs adjudication")
    ADJUDICATED = "adjudicated", _("Adjudicated")
    REMOVED = "removed", _("Removed")


# Neither accepted nor removed: a version cannot be frozen while any item of its round is.
UNDECIDED_STATUSES = (ItemStatus.PENDING, ItemStatus.NEEDS_ADJUDICATION)


class RemovalReason(models.TextChoices):
    INACCURATE = "inaccurate", _("Inaccurate")
    CULTURALLY_INAPPROPRIATE = "culturally_inappropriate", _("Culturally inappropriate")
    OTHER = "other", _("Other")


class RoundItem(models.Model):
    round = models.ForeignKey(AnnotationRound, on_delete=models.CASCADE, related_name="items")
    expression = models.ForeignKey(Expression, on_delete=models.PROTECT, related_name="round_items")
    suggestions_hidden = models.BooleanField(default=False)
    status = models.CharField(max_length=20, choices=ItemStatus.choices, default=ItemStatus.PENDING)
    final_traits = models.ManyToManyField(Trait, blank=True, related_name="+")
    final_theme = models.ForeignKey(Theme, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution_note = models.TextField(blank=True)
    removal_reason = models.CharField(max_length=30, choices=RemovalReason.choices, blank=True)
    revision = models.PositiveIntegerField(default=0)
    # The trait codes the round's suggestion set gives this expression, copied when the item is made
    # (a suggestion set never changes): the review page reads them with the item, not from the set.
    # None where the set has no suggestion for it (or the round no set). Whether an annotator sees
    # them is ``suggestions_hidden``'s to say.
    suggested = models.JSONField(null=True, blank=True, default=None)
    # Set on a control item's stand-in: every read that counts items leaves these out.
    # RESTRICT: a control goes only with its round (which takes these items along).
    control = models.ForeignKey(ControlItem, null=True, blank=True, on_delete=models.RESTRICT, related_name="items")

    class Meta:
        ordering = ["round_id", "id"]
        constraints = [models.UniqueConstraint(fields=["round", "expression"], name="round_item_unique_expression")]
        indexes = [models.Index(fields=["round", "status"])]

    def __str__(self):
        return f"{self.round_id}:{self.expression_id}"


class TraitDecision(models.TextChoices):
    ACCEPT = "accept", _("Accept")
    REJECT = "reject", _("Reject")
    UNSURE = "unsure", _("Unsure")


class AssignmentStatus(models.TextChoices):
    PENDING = "pending", _("Not started")
    DRAFT = "draft", _("Draft")
    SKIPPED = "skipped", _("Skipped")
    SUBMITTED = "submitted", _("Submitted")


class Assignment(models.Model):
    """One annotator's review of one item. Only its annotator (and, after the round
    locks, adjudicators and researchers) may read it."""

    item = models.ForeignKey(RoundItem, on_delete=models.CASCADE, related_name="assignments")
    # The item's round, kept on the assignment too: an annotator's queue in a round is read from
    # their own rows by one index, never by way of the round's items (services set it with the item).
    round = models.ForeignKey(AnnotationRound, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments")
    position = models.PositiveIntegerField(help_text=_("Order in the annotator's queue."))
    status = models.CharField(max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.PENDING)
    # {trait code: accept|reject|unsure} for the suggested traits shown.
    trait_decisions = models.JSONField(default=dict, blank=True)
    # Trait codes the annotator added (all traits present when suggestions are hidden).
    added_traits = models.JSONField(default=list, blank=True)
    theme = models.ForeignKey(Theme, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # The traits marked present (accepted suggestions and added traits) as bits, bit number - 1 for
    # each, written with the answer: the statistics read a round's answers without decoding the JSON.
    present_traits = models.PositiveSmallIntegerField(default=0)
    flagged = models.BooleanField(default=False)
    note = models.TextField(blank=True)
    # Unsubmitted form state, saved as the annotator types, so a refresh or a
    # crash loses nothing; the fields above change only on submit.
    draft = models.JSONField(default=dict, blank=True)
    # Bumped on every submit: a second tab holding an older revision is told
    # instead of silently overwriting.
    revision = models.PositiveIntegerField(default=0)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Seconds the review page was on screen for the last submitted answer (its own timing).
    seconds = models.FloatField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["annotator_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="assignment_unique_annotator"),
        ]
        indexes = [
            models.Index(fields=["annotator", "status", "position"]),
            models.Index(fields=["round", "annotator", "position"], name="assignment_queue"),
            models.Index(fields=["round", "status"], name="assignment_round_status"),
        ]

    def __str__(self):
        return f"{self.item_id} by {self.annotator_id}"


class LabelChange(models.Model):
    """Every change to a label or decision: who, when, old value, new value."""

    item = models.ForeignKey(RoundItem, on_delete=models.CASCADE, related_name="changes")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="changes")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    field = models.CharField(max_length=40)
    old_value = models.JSONField(null=True, blank=True)
    new_value = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self):
        return f"{self.field} on {self.item_id}"


class AnnotatorPause(models.Model):
    """A researcher stopped one annotator's queue in a round (recalibration)."""

    round = models.ForeignKey(AnnotationRound, on_delete=models.CASCADE, related_name="pauses")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    paused_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    paused_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "annotator"], name="annotator_pause_unique")]

    def __str__(self):
        return f"pause {self.round_id}:{self.annotator_id}"


class RecalibrationNote(models.Model):
    """A researcher's note to one annotator, with example items, shown on their next item."""

    round = models.ForeignKey(AnnotationRound, on_delete=models.CASCADE, related_name="recalibration_notes")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    note = models.TextField()
    # Copies of the examples ({text, explanation, traits, theme}): the note reads the same later.
    examples = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["round_id", "annotator_id", "created_at", "id"]

    def __str__(self):
        return f"note {self.round_id}:{self.annotator_id}"


class DatasetVersion(models.Model):
    """A named, immutable snapshot of the accepted items of a round."""

    name = models.CharField(max_length=200, unique=True)
    round = models.ForeignKey(AnnotationRound, on_delete=models.PROTECT, related_name="versions")
    funnel = models.JSONField(default=dict)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class Provenance(models.TextChoices):
    UNANIMOUS = "unanimous", _("Unanimous")
    ADJUDICATED = "adjudicated", _("Adjudicated")


class DatasetVersionItem(models.Model):
    """Copied values, not references: later edits to the corpus never change a frozen version."""

    version = models.ForeignKey(DatasetVersion, on_delete=models.CASCADE, related_name="items")
    expression = models.ForeignKey(Expression, null=True, on_delete=models.SET_NULL, related_name="+")
    external_id = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    explanation = models.TextField()
    kind = models.CharField(max_length=10, blank=True)
    source = models.CharField(max_length=300, blank=True)
    traits = models.JSONField(default=list)
    theme = models.CharField(max_length=40)
    metadata = models.JSONField(default=dict, blank=True)
    provenance = models.CharField(max_length=12, choices=Provenance.choices)

    class Meta:
        ordering = ["version_id", "id"]

    def __str__(self):
        return self.text
