"""Model providers, prompt templates, runs and their items (VIVID paper, sections 4-5, Appendices A-C).

Every score is traceable: a RunItem keeps the exact messages sent and the raw
reply received, and a Run keeps the facts needed to reproduce it.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models import Dataset, DatasetVersion, Expression
from llm.models import BatchItem, BatchRun, ItemStatus, ModelConfig, RunStatus

__all__ = ["ItemStatus", "RunStatus"]  # a run's statuses are the engine's; evaluation code names them here too


class PromptKind(models.TextChoices):
    GENERATION = "generation", _("Explanation generation")
    JUDGE = "judge", _("Judge")
    CLASSIFICATION = "classification", _("Classification")


class PromptTemplate(models.Model):
    """A versioned prompt. Editing makes a new version: the content hash identifies it."""

    name = models.CharField(max_length=100, help_text=_("e.g. zero-shot, few-shot, aspect, topic, traits"))
    kind = models.CharField(max_length=20, choices=PromptKind.choices)
    # Chat messages with {placeholders}: [{"role": "system"|"user"|"assistant", "content": "..."}].
    messages = models.JSONField()
    content_hash = models.CharField(max_length=64, unique=True)
    reference = models.CharField(
        max_length=300, blank=True, help_text=_("Where the text comes from, e.g. 'VIVID Fig. 7'.")
    )
    ours = models.BooleanField(default=False, help_text=_("Written by us, not quoted from the paper."))
    # A judge template that rewords a strategy's prompt (prompt-paraphrase stability): the strategy's name.
    paraphrase_of = models.CharField(max_length=20, blank=True)
    builtin = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "name", "-created_at"]

    def __str__(self):
        return f"{self.name} ({self.content_hash[:8]})"


class RunKind(models.TextChoices):
    GENERATION = "generation", _("Generation")
    JUDGE = "judge", _("Judge")
    CLASSIFICATION = "classification", _("Classification")


class RunPhase(models.TextChoices):
    """What a worker does before an item can finish, so the run page can say why it waits."""

    NONE = "", _("None")
    LOADING_MODEL = "loading_model", _("Loading the model")


class Run(BatchRun):
    kind = models.CharField(max_length=20, choices=RunKind.choices)
    model = models.ForeignKey(ModelConfig, on_delete=models.PROTECT, related_name="runs")
    prompt = models.ForeignKey(PromptTemplate, on_delete=models.PROTECT, related_name="runs")
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="runs")
    version = models.ForeignKey(DatasetVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="runs")
    # The generation run a judge run scores.
    source_run = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="judge_runs")
    # The second generation run a pairwise judge run compares with source_run.
    source_run_b = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="pairwise_runs_b"
    )
    strategy = models.CharField(max_length=20, blank=True, help_text=_("Judge strategy or classification task."))
    # temperature, max_tokens, seed, top_logprobs ...
    params = models.JSONField(default=dict)
    limit = models.PositiveIntegerField(null=True, blank=True)
    # Written by the worker (the web process cannot see a worker's memory or local cache).
    phase = models.CharField(max_length=20, choices=RunPhase.choices, default=RunPhase.NONE, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"#{self.pk} {self.kind} {self.model_id}"


class RunItem(BatchItem):
    """One expression of a run (two for a pairwise run, one per order): written once, whatever the workers do."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="items")
    # 1..n within its run, in the order the items were created: what pages show as the item's number
    # (the id counts over every run, so a 5-item judge run read #6-#10).
    number = models.PositiveIntegerField(null=True, blank=True)
    expression = models.ForeignKey(Expression, on_delete=models.PROTECT, related_name="+")
    # The generation item a judge item scores.
    source_item = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # Pairwise judging: the second explanation, and whether it was shown first (each idiom is asked in both orders).
    source_item_b = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    swapped = models.BooleanField(default=False)
    # Judge: the 0-5 score read from the reply, None when unreadable (never turned into 0).
    # Pairwise: the position preferred, 1 or 2 (prediction then names the run, "a" or "b").
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    # Judge: why a reply is unscored (a code of evaluation.scoring.UNSCORED_REASONS), and the version
    # of the parser that read it (1 for the scores stored before versions were recorded);
    # `reparse_scores` reads stored replies again with the current one.
    score_reason = models.CharField(max_length=32, blank=True)
    parser_version = models.PositiveSmallIntegerField(null=True, blank=True)
    # Judge with log-probabilities: the probability-weighted score at the score's token (G-Eval),
    # and the probabilities of 0..5 it was computed from.
    expected_score = models.FloatField(null=True, blank=True)
    score_probabilities = models.JSONField(null=True, blank=True)
    # Why the reply ended, as the provider said ("stop", "length": cut off by max_tokens ...), and
    # the provider's refusal message where it gives one apart from the reply.
    finish_reason = models.CharField(max_length=32, blank=True)
    refusal = models.TextField(blank=True)
    # Classification: the normalised prediction, the gold answer and the exact-match result.
    prediction = models.CharField(max_length=100, blank=True)
    gold = models.CharField(max_length=100, blank=True)
    correct = models.BooleanField(null=True)
    cached = models.BooleanField(default=False)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # The chunk working on a pending item, and since when: a redelivered fan-out or chunk
    # leaves a live claim alone; a claim older than EVAL_STALL_SECONDS belongs to a dead chunk.
    claim_token = models.CharField(max_length=32, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "expression", "swapped"], name="run_item_unique_expression_order")
        ]
        indexes = [models.Index(fields=["run", "status"])]

    def __str__(self):
        return f"{self.run_id}:{self.expression_id}"


class ScoringTask(models.Model):
    """Human scoring of a generation run's explanations (VIVID §4.1.1): a seeded random
    sample of items, split between raters with a shared overlap."""

    name = models.CharField(max_length=200, unique=True)
    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="scoring_tasks")
    raters = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="scoring_tasks")
    n_items = models.PositiveIntegerField()
    n_shared = models.PositiveIntegerField(help_text=_("Items every rater scores (inter-rater reliability)."))
    seed = models.BigIntegerField()
    # The sampled generation items, in sample order, kept for the record.
    sample = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class RatingStatus(models.TextChoices):
    PENDING = "pending", _("Not started")
    DRAFT = "draft", _("Draft")
    SUBMITTED = "submitted", _("Submitted")


class HumanRating(models.Model):
    """One rater's 0-5 scores of one generated explanation. Raters never see each other's
    scores or any judge score."""

    task = models.ForeignKey(ScoringTask, null=True, blank=True, on_delete=models.CASCADE, related_name="ratings")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="human_ratings")
    item = models.ForeignKey(RunItem, on_delete=models.CASCADE, related_name="human_ratings")
    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="human_ratings")
    position = models.PositiveIntegerField(default=0, help_text=_("Order in the rater's queue (random per rater)."))
    status = models.CharField(max_length=10, choices=RatingStatus.choices, default=RatingStatus.PENDING)
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    accuracy = models.PositiveSmallIntegerField(null=True, blank=True)
    completeness = models.PositiveSmallIntegerField(null=True, blank=True)
    native_alignment = models.PositiveSmallIntegerField(null=True, blank=True)
    note = models.TextField(blank=True)
    draft = models.JSONField(default=dict, blank=True)
    revision = models.PositiveIntegerField(default=0)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["rater_id", "position"]
        constraints = [models.UniqueConstraint(fields=["item", "rater"], name="human_rating_unique_rater")]

    def __str__(self):
        return f"{self.item_id} by {self.rater_id}"
