"""What every model call needs: the model registry, the statuses and fields of a batch run on
the engine (llm.services.engine), the response cache and the shared concurrency and pacing rows.

Evaluation runs and artwork pipeline runs are two kinds of work on that engine: each is a
``BatchRun`` with ``BatchItem``s and keeps its own tables.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Provider(models.TextChoices):
    OPENAI = "openai", _("OpenAI-compatible endpoint")
    TRANSFORMERS = "transformers", _("Local transformers model")
    # The model of a run imported from a harness log (import_run): the app never sends it anything.
    EXTERNAL = "external", _("Imported (no calls)")


# What a person may register; an external model is only made by the log importer.
REGISTRABLE_PROVIDERS = [(value, label) for value, label in Provider.choices if value != Provider.EXTERNAL]


# One lease row (ModelSlot) per allowed concurrent request: the cap keeps a registration from
# asking for millions of rows (a fuzzed max_concurrency of 2**31 took the server's memory).
MAX_CONCURRENCY = 256


class ModelConfig(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    provider = models.CharField(max_length=20, choices=Provider.choices)
    base_url = models.URLField(max_length=500, blank=True)
    # A model id at the endpoint, a local path, or a hub id (only where the machine is online).
    model_id = models.CharField(max_length=500)
    # The NAME of the environment variable holding the API key; the key itself is never stored.
    api_key_env = models.CharField(max_length=100, blank=True)
    max_concurrency = models.PositiveIntegerField(default=4, help_text=_("Concurrent requests, across all workers."))
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    timeout = models.FloatField(default=60.0, help_text=_("Seconds per request."))
    # What the model can do; None until declared or probed (`manage.py probe_model NAME`). Images go
    # only to a model known to see them, and a run that needs log-probabilities is refused on one
    # known to give none.
    supports_vision = models.BooleanField(null=True, blank=True, help_text=_("Takes image input."))
    supports_logprobs = models.BooleanField(null=True, blank=True, help_text=_("Returns token log-probabilities."))
    context_length = models.PositiveIntegerField(null=True, blank=True, help_text=_("Tokens of context."))
    probed_at = models.DateTimeField(null=True, blank=True)
    # What each probe sent back: {"vision": {"result": true|false|null, "detail": "..."}, ...}.
    probe = models.JSONField(default=dict, blank=True)
    # A probe asked from the models page runs in a worker: set while it is queued or running (the
    # guard against a second one), with the error of the last one that could not run at all.
    probe_started_at = models.DateTimeField(null=True, blank=True)
    probe_error = models.TextField(blank=True)
    # US dollars per million tokens; None when unknown (then a run's cost is unknown, never 0).
    price_input = models.FloatField(null=True, blank=True, help_text=_("USD per million input tokens."))
    price_output = models.FloatField(null=True, blank=True, help_text=_("USD per million output tokens."))
    builtin = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


class ItemStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class BatchRun(models.Model):
    """What the engine reads and writes on a run of any kind: its status, when it was queued,
    started and finished, the worker that owns it, its estimate and the tokens it used."""

    status = models.CharField(max_length=12, choices=RunStatus.choices, default=RunStatus.QUEUED)
    error = models.TextField(blank=True)
    # Model ids, base URLs or local hashes, prompt hashes, package versions: what reproduces the run.
    reproducibility = models.JSONField(default=dict, blank=True)
    # Made before the run started: tokens in and out, cost, the prices it used and how tokens were counted.
    estimate = models.JSONField(default=dict, blank=True)
    # The tokens its requests used, as the providers reported them (a cached reply counts 0).
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the run was last queued (started or resumed): the no-worker hint counts from here.
    queued_at = models.DateTimeField(null=True, blank=True)
    # The worker that claimed the run (a resume claims it anew and the old one stops), and when
    # it last showed it was alive: a run whose worker died goes quiet.
    worker_token = models.CharField(max_length=32, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class BatchItem(models.Model):
    """One unit of a run's work: written once, guarded by its status, whatever the workers do."""

    status = models.CharField(max_length=10, choices=ItemStatus.choices, default=ItemStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The last request and reply, kept also when the reply was unusable.
    messages = models.JSONField(default=list, blank=True)
    response = models.TextField(blank=True)
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # What the item's requests used (every attempt included).
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True


class ResponseCache(models.Model):
    """Replies keyed by model config, messages and parameters: a rerun or a resume
    after a crash never sends the same request twice."""

    key = models.CharField(max_length=64, unique=True)
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.key


class ModelSlot(models.Model):
    """Concurrency leases per model, shared by every worker through the database."""

    model = models.ForeignKey(ModelConfig, on_delete=models.CASCADE, related_name="slots")
    number = models.PositiveIntegerField()
    holder = models.CharField(max_length=100, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "number"], name="llm_model_slot_unique_number")]

    def __str__(self):
        return f"{self.model_id}#{self.number}"


class ModelThrottle(models.Model):
    """Requests-per-minute pacing per model, shared by every worker: each request
    reserves the next start time under a row lock."""

    model = models.OneToOneField(ModelConfig, on_delete=models.CASCADE, related_name="throttle")
    next_request_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.model_id} next {self.next_request_at}"
