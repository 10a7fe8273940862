import unicodedata

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


def normalize_key(text: str) -> str:
    """The identity of an expression inside a dataset.

    Vietnamese arrives both precomposed (NFC) and decomposed (NFD); case and
    stray whitespace differ between sources. Casefolding can decompose some
    characters again, so NFC is applied on both sides of it.
    """
    composed = unicodedata.normalize("NFC", text)
    collapsed = " ".join(composed.split())
    return unicodedata.normalize("NFC", collapsed.casefold())


class Trait(models.Model):
    """A complexity trait of the VIVID taxonomy (paper section 3.2.1)."""

    number = models.PositiveSmallIntegerField(
        unique=True, help_text=_("Position in the classification prompt (Appendix B.2).")
    )
    code = models.SlugField(max_length=40, unique=True)
    aspect = models.CharField(max_length=60)
    name_en = models.CharField(max_length=100)
    name_vi = models.CharField(max_length=100)
    description_en = models.TextField()
    description_vi = models.TextField()

    class Meta:
        ordering = ["number"]

    def __str__(self):
        return f"{self.number}. {self.code}"


class Theme(models.Model):
    """A semantic theme of the VIVID taxonomy (paper section 3.2.2)."""

    number = models.PositiveSmallIntegerField(unique=True, help_text=_("Position in the topic prompt (Appendix B.1)."))
    code = models.SlugField(max_length=40, unique=True)
    name_en = models.CharField(max_length=100)
    name_vi = models.CharField(max_length=100)
    description_en = models.TextField()
    description_vi = models.TextField()

    class Meta:
        ordering = ["number"]

    def __str__(self):
        return f"{self.number}. {self.code}"


class Dataset(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="datasets"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # How many expressions the dataset holds, recounted by every service that adds or deletes some
    # (services.changes.dataset_changed): list pages show it without counting the corpus.
    expression_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class ExpressionKind(models.TextChoices):
    IDIOM = "idiom", _("Idiom")
    PROVERB = "proverb", _("Proverb")


class Expression(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="expressions")
    text = models.TextField()
    normalized_key = models.TextField(editable=False)
    explanation = models.TextField()
    kind = models.CharField(max_length=10, choices=ExpressionKind.choices, blank=True)
    source = models.CharField(max_length=300, blank=True)
    external_id = models.CharField(max_length=200, blank=True)
    traits = models.ManyToManyField(Trait, blank=True, related_name="expressions")
    theme = models.ForeignKey(Theme, null=True, blank=True, on_delete=models.PROTECT, related_name="expressions")
    # Columns of an import that have no field of their own are kept here.
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "normalized_key"], name="expression_unique_per_dataset"),
        ]

    def __str__(self):
        return self.text


class ImportJobStatus(models.TextChoices):
    PREVIEWED = "previewed", _("Previewed")
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


class ImportJob(models.Model):
    """An uploaded file on its way into a dataset.

    The upload is kept in the database so the preview survives a refresh and a
    worker on another machine can read it without shared storage.
    """

    dataset_name = models.CharField(max_length=200)
    dataset = models.ForeignKey(Dataset, null=True, blank=True, on_delete=models.SET_NULL, related_name="import_jobs")
    filename = models.CharField(max_length=255)
    content = models.BinaryField()
    column_map = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=12, choices=ImportJobStatus.choices, default=ImportJobStatus.PREVIEWED)
    # Counts, errors and preview rows, as computed by the import service.
    report = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.filename} -> {self.dataset_name} ({self.status})"
