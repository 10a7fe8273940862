"""Artwork collections and the artwork pipeline of *Pragmatics Meets Culture* (sections 3-4, 6.1).

A collection holds artworks (metadata, a short comment, an image). The pipeline builds, per
artwork, its culture symbols, a background text and multiple-choice questions (stored on the
artwork, where a researcher can review and edit them), then per listener group a base and a
pragmatic description, and finally the simulated listener's answers that Table 1 reports.
The exported study package is the only thing the study app sees of it.
"""

# These models were born in the evaluation app: each keeps its table there (``db_table``), so moving
# them to this app moved no row (artworks/migrations/0001_initial.py changes the state only).

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from llm.models import BatchItem, BatchRun, ModelConfig


class ArtworkCollection(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evaluation_artworkcollection"
        ordering = ["name"]

    def __str__(self):
        return self.name


class CollectionArtwork(models.Model):
    collection = models.ForeignKey(ArtworkCollection, on_delete=models.CASCADE, related_name="artworks")
    key = models.CharField(max_length=100, help_text=_("The artwork's id in the imported file."))
    title = models.CharField(max_length=300)
    artist = models.CharField(max_length=300, blank=True)
    date = models.CharField(max_length=100, blank=True)
    # The cultural group of the artist ("school" in the paper's prompts), e.g. american or chinese.
    culture = models.CharField(max_length=40)
    comment = models.TextField(blank=True)
    image = models.FileField(upload_to="collections/", max_length=300)
    image_sha256 = models.CharField(max_length=64, blank=True)
    # The background text of the paper's §3.1 (built by the pipeline, editable).
    background = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "evaluation_collectionartwork"
        ordering = ["collection", "position"]
        constraints = [models.UniqueConstraint(fields=["collection", "key"], name="collection_artwork_unique_key")]

    def __str__(self):
        return f"{self.collection.name}/{self.key}"


class ArtworkElement(models.Model):
    """A visible element of an artwork: a culture symbol (with its meaning) or not."""

    artwork = models.ForeignKey(CollectionArtwork, on_delete=models.CASCADE, related_name="elements")
    name = models.CharField(max_length=200)
    is_symbol = models.BooleanField(default=False)
    meaning = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "evaluation_artworkelement"
        ordering = ["artwork", "position"]
        constraints = [models.UniqueConstraint(fields=["artwork", "name"], name="artwork_element_unique_name")]

    def __str__(self):
        return self.name


class ArtworkQuestionType(models.TextChoices):
    ATTUNED = "attuned", _("Culturally attuned")
    AGNOSTIC = "agnostic", _("Culturally agnostic")


# Every question has one answer and this many distractors: the paper's six options.
DISTRACTORS = 5
# The share of quality-control answers a participant must get right (the paper's 75%). Here, with
# the models, and not in the services: a study's model reads it as a default, and a models module
# that imports the services loads them (and what they import) in every process that starts Django.
QC_THRESHOLD_DEFAULT = 0.75


class ArtworkQuestion(models.Model):
    artwork = models.ForeignKey(CollectionArtwork, on_delete=models.CASCADE, related_name="questions")
    key = models.CharField(max_length=120)
    symbol = models.CharField(max_length=200, blank=True)
    type = models.CharField(max_length=10, choices=ArtworkQuestionType.choices)
    question = models.TextField()
    answer = models.TextField()
    distractors = models.JSONField(default=list)
    position = models.PositiveIntegerField(default=0)
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "evaluation_artworkquestion"
        ordering = ["artwork", "type", "position"]
        constraints = [models.UniqueConstraint(fields=["artwork", "key"], name="artwork_question_unique_key")]

    def __str__(self):
        return self.key


class PipelineStep(models.TextChoices):
    SYMBOLS = "symbols", _("Culture symbols")
    BACKGROUND = "background", _("Background")
    ATTUNED_QUESTIONS = "attuned_questions", _("Culturally attuned questions")
    AGNOSTIC_QUESTIONS = "agnostic_questions", _("Culturally agnostic questions")
    BASE = "base", _("Base speaker")
    PRAGMATIC = "pragmatic", _("Pragmatic speaker")
    LISTENER = "listener", _("Simulated listener")


class ArtworkPipelineRun(BatchRun):
    collection = models.ForeignKey(ArtworkCollection, on_delete=models.PROTECT, related_name="pipeline_runs")
    speaker = models.ForeignKey(ModelConfig, on_delete=models.PROTECT, related_name="+")
    listener = models.ForeignKey(ModelConfig, on_delete=models.PROTECT, related_name="+")
    # Builds symbols, background and questions (the paper used GPT-5 for these); the speaker when unset.
    builder = models.ForeignKey(ModelConfig, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # Listener groups the descriptions are written for, e.g. ["american", "chinese"].
    groups = models.JSONField(default=list)
    samples = models.PositiveSmallIntegerField(default=10)
    temperature = models.FloatField(default=1.0)
    # Eq. 5: weight of the description's own likelihood against the listener score (0 = Eq. 4).
    lam = models.FloatField(default=0.0)
    word_limit = models.PositiveSmallIntegerField(default=75)
    limit = models.PositiveIntegerField(null=True, blank=True, help_text=_("Only the first N artworks."))

    class Meta:
        db_table = "evaluation_artworkpipelinerun"
        ordering = ["-created_at"]

    def __str__(self):
        return f"pipeline #{self.pk} {self.collection.name}"

    @property
    def construction_model(self) -> ModelConfig:
        return self.builder or self.speaker


class PipelineItem(BatchItem):
    """One step for one artwork (and one listener group for the speaker and listener steps)."""

    run = models.ForeignKey(ArtworkPipelineRun, on_delete=models.CASCADE, related_name="items")
    artwork = models.ForeignKey(CollectionArtwork, on_delete=models.CASCADE, related_name="+")
    step = models.CharField(max_length=20, choices=PipelineStep.choices)
    group = models.CharField(max_length=40, blank=True)
    image_seen = models.BooleanField(null=True)

    class Meta:
        db_table = "evaluation_pipelineitem"
        ordering = ["run", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "artwork", "step", "group"], name="pipeline_item_unique_step")
        ]
        indexes = [models.Index(fields=["run", "status"])]

    def __str__(self):
        return f"{self.run_id}:{self.artwork_id}:{self.step}:{self.group}"


class SpeakerKind(models.TextChoices):
    BASE = "base", _("Base")
    PRAGMATIC = "pragmatic", _("Pragmatic")


class SpeakerCandidate(models.Model):
    """A description written for one listener group: the base one, or one of the pragmatic samples."""

    run = models.ForeignKey(ArtworkPipelineRun, on_delete=models.CASCADE, related_name="candidates")
    artwork = models.ForeignKey(CollectionArtwork, on_delete=models.CASCADE, related_name="+")
    group = models.CharField(max_length=40)
    speaker = models.CharField(max_length=10, choices=SpeakerKind.choices)
    index = models.PositiveSmallIntegerField(default=0)
    text = models.TextField()
    raw_text = models.TextField(blank=True)
    # Mean token log-probability of the description under the speaker (Eq. 5's M(D | V, P(I, L))).
    likelihood = models.FloatField(null=True, blank=True)
    # Eq. 4: the speaker's own P(Correct) for the ground-truth answers, averaged over attuned questions.
    listener_score = models.FloatField(null=True, blank=True)
    # Eq. 5 with the run's lambda (equal to listener_score when lambda is 0).
    combined = models.FloatField(null=True, blank=True)
    chosen = models.BooleanField(default=False)

    class Meta:
        db_table = "evaluation_speakercandidate"
        ordering = ["run", "artwork", "group", "speaker", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "artwork", "group", "speaker", "index"], name="candidate_unique")
        ]

    def __str__(self):
        return f"{self.run_id}:{self.artwork_id}:{self.group}:{self.speaker}:{self.index}"


class ListenerCondition(models.TextChoices):
    NO_DESCRIPTION = "no_description", _("No description")
    BASE = "base", _("Base speaker")
    PRAGMATIC = "pragmatic", _("Pragmatic speaker")


class ListenerAnswer(models.Model):
    """The simulated listener's answer to one question (Eq. 1, or Eq. 3 without a description)."""

    run = models.ForeignKey(ArtworkPipelineRun, on_delete=models.CASCADE, related_name="listener_answers")
    question = models.ForeignKey(ArtworkQuestion, on_delete=models.CASCADE, related_name="+")
    group = models.CharField(max_length=40)
    familiar = models.BooleanField()
    condition = models.CharField(max_length=20, choices=ListenerCondition.choices)
    # [{"option": str, "p_correct": float}, ...] in the order asked.
    option_scores = models.JSONField(default=list)
    chosen = models.TextField()
    correct = models.BooleanField()

    class Meta:
        db_table = "evaluation_listeneranswer"
        ordering = ["run", "question", "group", "condition"]
        constraints = [
            models.UniqueConstraint(fields=["run", "question", "group", "condition"], name="listener_answer_unique")
        ]

    def __str__(self):
        return f"{self.run_id}:{self.question_id}:{self.group}:{self.condition}"
