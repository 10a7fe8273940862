"""The artwork preference study: a package of artworks, its participants and their answers.

A study is imported whole from a study package (study.json plus images); participants
arrive from Prolific, each is assigned artworks, and every answer is one row.
"""

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from artworks.models import QC_THRESHOLD_DEFAULT, ArtworkQuestionType, SpeakerKind

# The package's one translation, for the Chinese group: the key of every ``translations`` field.
TRANSLATION = "zh-hans"
# Languages of a study's own consent text.
CONSENT_LANGUAGES = ("en", TRANSLATION)


class StudyStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    LIVE = "live", _("Live")
    PAUSED = "paused", _("Paused")
    CLOSED = "closed", _("Closed")


class PrepStatus(models.TextChoices):
    """Background preparation of a study: sentence pairs and term glosses."""

    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    READY = "ready", _("Ready")
    FAILED = "failed", _("Failed")


class Culture(models.TextChoices):
    AMERICAN = "american", _("American")
    CHINESE = "chinese", _("Chinese")


class Device(models.TextChoices):
    """The devices a study allows, as Prolific names them (its ``device_compatibility``)."""

    DESKTOP = "desktop", _("Desktop")
    TABLET = "tablet", _("Tablet")
    MOBILE = "mobile", _("Mobile phone")


# What a package without ``devices`` allows: what the Prolific drafts always said before packages could choose.
DEVICES_DEFAULT = (Device.DESKTOP.value, Device.TABLET.value)


def devices_default() -> list[str]:
    return list(DEVICES_DEFAULT)


class Study(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=300)
    groups = models.JSONField(default=list, help_text=_("Participant groups, e.g. american and chinese."))
    artworks_per_participant = models.PositiveSmallIntegerField(default=12)
    qc_per_participant = models.PositiveSmallIntegerField(default=2)
    qc_threshold = models.FloatField(default=QC_THRESHOLD_DEFAULT)
    quota_per_group = models.PositiveIntegerField(default=10)
    completion_code = models.CharField(max_length=64)
    screenout_code = models.CharField(max_length=64)
    no_consent_code = models.CharField(max_length=64)
    similarity_threshold = models.FloatField(default=0.8)
    # Prolific's device_compatibility, from the package's ``devices``.
    devices = models.JSONField(default=devices_default)
    status = models.CharField(max_length=10, choices=StudyStatus.choices, default=StudyStatus.DRAFT)
    # study.json as imported, for provenance and re-export.
    package = models.JSONField(default=dict)
    package_sha256 = models.CharField(max_length=64, blank=True)
    highlight_status = models.CharField(max_length=10, choices=PrepStatus.choices, default=PrepStatus.PENDING)
    highlight_model = models.CharField(max_length=300, blank=True)
    highlight_error = models.TextField(blank=True)
    terms_status = models.CharField(max_length=10, choices=PrepStatus.choices, default=PrepStatus.PENDING)
    terms_error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    launched_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"

    def __str__(self):
        return self.slug


class Artwork(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="artworks")
    key = models.CharField(max_length=100, help_text=_("The artwork's id in study.json."))
    title = models.CharField(max_length=300)
    artist = models.CharField(max_length=300, blank=True)
    date = models.CharField(max_length=100, blank=True)
    culture = models.CharField(max_length=20, choices=Culture.choices)
    image = models.FileField(upload_to="study/", max_length=300)
    # The stored image's size and its smaller copies made at import ([{"width", "height", "name"}],
    # narrowest first), so a phone downloads the copy its screen needs. Empty for artworks imported
    # before variants existed: they are served the original.
    image_width = models.PositiveIntegerField(null=True, blank=True)
    image_height = models.PositiveIntegerField(null=True, blank=True)
    image_variants = models.JSONField(default=list, blank=True)
    # The image's text alternative for screen readers (the package's "alt"); "" when the package
    # gives none: the pages then say only the title and the launch checklist warns.
    alt = models.TextField(blank=True)
    is_qc = models.BooleanField(default=False)
    # [{"name": str, "is_symbol": bool}, ...] in package order.
    elements = models.JSONField(default=list)
    # Per participant language: {"zh-hans": {"title": str, "elements": {English name: translated name}}}.
    translations = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["study", "position"]
        constraints = [models.UniqueConstraint(fields=["study", "key"], name="artwork_unique_key")]

    def __str__(self):
        return f"{self.study.slug}/{self.key}"


# The study package is the interface with the artwork pipeline: both speak the same vocabulary.
QuestionType = ArtworkQuestionType


class Question(models.Model):
    artwork = models.ForeignKey(Artwork, on_delete=models.CASCADE, related_name="questions")
    key = models.CharField(max_length=100)
    symbol = models.CharField(max_length=200, blank=True)
    type = models.CharField(max_length=10, choices=QuestionType.choices)
    question = models.TextField()
    answer = models.TextField()
    distractors = models.JSONField(default=list)
    # Per participant language: {"zh-hans": {"question": str, "answer": str, "distractors": [str, ...]}};
    # only labels: answers are stored and scored by the English option.
    translations = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["artwork", "position"]
        constraints = [models.UniqueConstraint(fields=["artwork", "key"], name="question_unique_key")]

    def __str__(self):
        return self.key


Speaker = SpeakerKind


class Description(models.Model):
    artwork = models.ForeignKey(Artwork, on_delete=models.CASCADE, related_name="descriptions")
    key = models.CharField(max_length=100)
    speaker = models.CharField(max_length=10, choices=Speaker.choices)
    listener = models.CharField(max_length=20, choices=Culture.choices)
    model = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    self_eval_score = models.FloatField(null=True, blank=True)
    # The text split into sentences once, so highlighting indices stay stable.
    sentences = models.JSONField(default=list)

    class Meta:
        ordering = ["artwork", "listener", "speaker", "key"]
        constraints = [models.UniqueConstraint(fields=["artwork", "key"], name="description_unique_key")]

    def __str__(self):
        return self.key


class DescriptionPair(models.Model):
    """The base and pragmatic description one listener group compares, with their similar sentences."""

    artwork = models.ForeignKey(Artwork, on_delete=models.CASCADE, related_name="pairs")
    listener = models.CharField(max_length=20, choices=Culture.choices)
    base = models.ForeignKey(Description, on_delete=models.CASCADE, related_name="+")
    pragmatic = models.ForeignKey(Description, on_delete=models.CASCADE, related_name="+")
    # [[base sentence index, pragmatic sentence index, cosine], ...]: mutual best matches at or above the threshold.
    matches = models.JSONField(default=list)
    model_name = models.CharField(max_length=300, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["artwork", "listener"], name="pair_unique_listener")]

    def __str__(self):
        return f"{self.artwork} ({self.listener})"


class TermSource(models.TextChoices):
    PACKAGE = "package", _("Study package")
    LLM = "llm", _("Language model")
    RESEARCHER = "researcher", _("Researcher")


class TermStatus(models.TextChoices):
    PENDING = "pending", _("Not looked up")
    FOUND = "found", _("Found on Wikidata")
    NOT_FOUND = "not_found", _("Not found")
    CONFIRMED = "confirmed", _("Confirmed")
    REJECTED = "rejected", _("Rejected")


class Term(models.Model):
    """A culture-specific English term of a Chinese artwork's descriptions and its Chinese label."""

    artwork = models.ForeignKey(Artwork, on_delete=models.CASCADE, related_name="terms")
    term = models.CharField(max_length=200)
    zh = models.CharField(max_length=200, blank=True)
    wikidata = models.CharField(max_length=20, blank=True, help_text=_("Wikidata item id, e.g. Q1234."))
    source = models.CharField(max_length=12, choices=TermSource.choices)
    status = models.CharField(max_length=12, choices=TermStatus.choices, default=TermStatus.PENDING)
    confirmed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["artwork", "term"]
        constraints = [models.UniqueConstraint(fields=["artwork", "term"], name="term_unique_per_artwork")]

    def __str__(self):
        return self.term


class WikidataLookup(models.Model):
    """Cached answer of Wikidata for one English term, so a term is asked once."""

    query = models.CharField(max_length=200, unique=True)
    qid = models.CharField(max_length=20, blank=True)
    zh = models.CharField(max_length=200, blank=True)
    label_language = models.CharField(max_length=10, blank=True)
    raw = models.JSONField(default=dict)
    fetched_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.query} → {self.qid or '-'}"


class ParticipantStatus(models.TextChoices):
    ENTERED = "entered", _("Entered")
    IN_PROGRESS = "in_progress", _("In progress")
    COMPLETED = "completed", _("Completed")
    EXCLUDED_QC = "excluded_qc", _("Excluded (quality control)")
    NO_CONSENT = "no_consent", _("Declined consent")
    RETURNED = "returned", _("Returned")
    # Prolific knew no submission of its PROLIFIC_PID and SESSION_ID (PROLIFIC_VERIFY_SECONDS after the
    # consent): released, and left out of the results and exports.
    UNVERIFIED = "unverified", _("Unverified (unknown to Prolific)")


class Participant(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    prolific_pid = models.CharField(max_length=64)
    prolific_study_id = models.CharField(max_length=64, blank=True)
    prolific_session_id = models.CharField(max_length=64, blank=True)
    # Exports carry this instead of the Prolific id.
    pseudonym = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    group = models.CharField(max_length=20, blank=True)
    status = models.CharField(max_length=12, choices=ParticipantStatus.choices, default=ParticipantStatus.ENTERED)
    is_test = models.BooleanField(default=False)
    is_preview = models.BooleanField(default=False)
    preview_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # The ordered step keys of this participant's session, fixed at consent.
    plan = models.JSONField(default=list)
    step_index = models.PositiveIntegerField(default=0)
    qc_correct = models.PositiveIntegerField(default=0)
    qc_total = models.PositiveIntegerField(default=0)
    seed = models.BigIntegerField(default=0)
    entered_at = models.DateTimeField(auto_now_add=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["entered_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid"],
                condition=models.Q(is_preview=False),
                name="participant_one_per_pid",
            )
        ]
        indexes = [models.Index(fields=["study", "group", "status"])]

    def __str__(self):
        return str(self.pseudonym)

    @property
    def qc_accuracy(self) -> float | None:
        return self.qc_correct / self.qc_total if self.qc_total else None


class Side(models.TextChoices):
    LEFT = "left", _("Left")
    RIGHT = "right", _("Right")


class Assignment(models.Model):
    """One artwork shown to one participant, with the description drawn for it and the side-by-side order."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="assignments")
    artwork = models.ForeignKey(Artwork, on_delete=models.PROTECT, related_name="assignments")
    order = models.PositiveSmallIntegerField()
    is_qc = models.BooleanField(default=False)
    shown = models.ForeignKey(Description, null=True, on_delete=models.PROTECT, related_name="+")
    left = models.ForeignKey(Description, null=True, on_delete=models.PROTECT, related_name="+")
    right = models.ForeignKey(Description, null=True, on_delete=models.PROTECT, related_name="+")
    symbols_pre = models.JSONField(null=True, blank=True)
    symbols_post = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["participant", "order"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "order"], name="assignment_unique_order"),
            models.UniqueConstraint(fields=["participant", "artwork"], name="assignment_unique_artwork"),
        ]

    def __str__(self):
        return f"{self.participant} #{self.order}"


class Phase(models.TextChoices):
    PRE = "pre", _("Without description")
    POST = "post", _("With description")


class Answer(models.Model):
    """A multiple-choice answer on a symbol's meaning, with confidence and prior knowledge."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="answers")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="answers")
    phase = models.CharField(max_length=4, choices=Phase.choices)
    # The options in the order shown; choice is the option text picked.
    options = models.JSONField(default=list)
    choice = models.TextField()
    is_correct = models.BooleanField()
    confidence = models.PositiveSmallIntegerField()
    # Null where the question names no symbol: the prior-knowledge question was not asked.
    knew_before = models.BooleanField(null=True, blank=True)
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "phase", "question"]
        constraints = [models.UniqueConstraint(fields=["assignment", "question", "phase"], name="answer_unique_phase")]

    def __str__(self):
        return f"{self.assignment} {self.question} {self.phase}"


class Criterion(models.TextChoices):
    COMPREHENSION = "comprehension", _("Comprehension")
    KNOWLEDGE_GAIN = "knowledge_gain", _("Knowledge gain")
    PRIOR_KNOWLEDGE = "prior_knowledge", _("Prior knowledge")


class Preference(models.Model):
    """One forced choice between the two descriptions shown side by side."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="preferences")
    criterion = models.CharField(max_length=20, choices=Criterion.choices)
    side = models.CharField(max_length=5, choices=Side.choices)
    chosen = models.ForeignKey(Description, on_delete=models.PROTECT, related_name="+")
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "criterion"]
        constraints = [models.UniqueConstraint(fields=["assignment", "criterion"], name="preference_unique_criterion")]

    def __str__(self):
        return f"{self.assignment} {self.criterion}"


class PageVisit(models.Model):
    """Time on each page: first shown, submitted, and the seconds between."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="visits")
    step = models.CharField(max_length=40)
    shown_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    views = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["participant", "shown_at"]
        constraints = [models.UniqueConstraint(fields=["participant", "step"], name="visit_unique_step")]

    def __str__(self):
        return f"{self.participant} {self.step}"

    @property
    def seconds(self) -> float | None:
        if self.submitted_at is None:
            return None
        return round((self.submitted_at - self.shown_at).total_seconds(), 3)
