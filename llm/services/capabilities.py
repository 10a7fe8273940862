"""What a registered model can do: image input, token log-probabilities, its context length.

``model_probe`` asks the model itself with tiny requests (one output token for log-probabilities,
a few for the image) and stores what it found, with when; ``model_capability_problem`` is the check
a run makes before it starts. A capability nobody has declared or probed is unknown (None): images
are not sent to such a model, and a run needing log-probabilities is let through (its items fail
with the provider's own message if the model has none).
"""

from __future__ import annotations

import base64
import datetime
import io
import logging
import re

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from ..models import ModelConfig
from ..providers import ClientError, ProviderError, RetryableError, provider_for

# A plain colour every vision model names; a text-only model answering without the image would
# have to guess it. Kept in English (not gettext): it is part of the request.
PROBE_COLOUR = "green"
VISION_PROMPT = "What is the main colour of this image? Answer with one word."
LOGPROBS_PROMPT = "Answer with one word: is the sky blue?"
DETAIL_MAX_CHARS = 300
# A probe queued from the page that never finished (its worker died) stops blocking a new one after this.
PROBE_STALE_AFTER = datetime.timedelta(minutes=10)

logger = logging.getLogger(__name__)

# Replies of a model that received an image and says it cannot see it.
_SEES_NO_IMAGE = re.compile(
    r"\b(?:can(?:no|')t|cannot|unable to|not able to|do not|don't|am not able to)\s+(?:see|view|access|process|"
    r"analy[sz]e|open|display|read)\s+(?:the\s+|any\s+|this\s+|your\s+)?(?:image|picture|photo|artwork|attachment)s?"
    r"|\bno image (?:was|has been|is) (?:provided|attached|shared|included)",
    re.IGNORECASE,
)
# What servers say when they refuse image input (vLLM, llama.cpp, OpenAI, gateways).
_IMAGE_REFUSED = re.compile(
    r"image|vision|multimodal|multi-modal|image_url|content part|unsupported content", re.IGNORECASE
)


def probe_image_data_url() -> str:
    """A 32x32 PNG of one plain colour."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (0, 160, 0)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def reply_sees_no_image(text: str) -> bool:
    """Whether a reply to a request carrying an image says the model could not see it."""
    return bool(_SEES_NO_IMAGE.search(text or ""))


def error_refuses_image(error: BaseException) -> bool:
    """Whether a provider's refusal of a request is about its image (a text-only endpoint)."""
    return isinstance(error, ClientError) and bool(_IMAGE_REFUSED.search(str(error)))


def _detail(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= DETAIL_MAX_CHARS else text[: DETAIL_MAX_CHARS - 1] + "…"


def _probe_logprobs(provider) -> dict:
    try:
        completion = provider.complete(
            [{"role": "user", "content": LOGPROBS_PROMPT}], temperature=0.0, max_tokens=1, top_logprobs=5
        )
    except RetryableError as exc:
        return {"result": None, "detail": _detail(exc)}
    except ProviderError as exc:
        return {"result": False, "detail": _detail(exc)}
    first = (completion.logprobs or [None])[0]
    if not first or first.get("logprob") is None:
        return {"result": False, "detail": _("the reply carried no log-probabilities")}
    n = len(first.get("top") or [])
    detail = ngettext("%(n)s alternative for the first token", "%(n)s alternatives for the first token", n)
    return {"result": True, "detail": detail % {"n": n}}


def _probe_vision(provider) -> dict:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": VISION_PROMPT},
                {"type": "image_url", "image_url": {"url": probe_image_data_url()}},
            ],
        }
    ]
    try:
        completion = provider.complete(messages, temperature=0.0, max_tokens=5)
    except RetryableError as exc:
        return {"result": None, "detail": _detail(exc)}
    except ProviderError as exc:
        return {"result": False, "detail": _detail(exc)}
    text = completion.text or ""
    if PROBE_COLOUR in text.lower():
        return {"result": True, "detail": _detail(text)}
    # The image was taken but not seen (ignored by a text-only model behind a lenient server, or refused).
    return {
        "result": False,
        "detail": _("asked the colour of a plain %(colour)s image, answered “%(reply)s”")
        % {"colour": PROBE_COLOUR, "reply": _detail(text)},
    }


def _probe_context(provider) -> dict:
    try:
        value = provider.context_length()
    except ProviderError as exc:
        return {"result": None, "detail": _detail(exc)}
    if value is None:
        return {"result": None, "detail": _("the endpoint does not report it")}
    return {"result": value, "detail": ""}


def _probe_tokenizer(provider) -> dict:
    """What the endpoint says it serves: the cost estimate counts with that tokenizer where it is installed."""
    try:
        name = provider.declared_tokenizer()
    except ProviderError as exc:
        return {"result": None, "detail": _detail(exc)}
    if not name:
        return {"result": None, "detail": _("the endpoint does not name the checkpoint it serves")}
    return {"result": name, "detail": _("the checkpoint the endpoint serves")}


def model_probe(*, model: ModelConfig) -> ModelConfig:
    """Ask the model what it can do and store the answers, with when. A probe that could not
    decide (the server was unreachable, or does not report a context length) keeps what was known."""
    try:
        provider = provider_for(model)
    except ProviderError as exc:
        raise ClientError(str(exc)) from exc
    found = {
        "logprobs": _probe_logprobs(provider),
        "vision": _probe_vision(provider),
        "context_length": _probe_context(provider),
        "tokenizer": _probe_tokenizer(provider),
    }
    fields = {"probed_at": timezone.now(), "probe": found, "probe_error": ""}
    for name, field in (("vision", "supports_vision"), ("logprobs", "supports_logprobs")):
        if found[name]["result"] is not None:
            fields[field] = found[name]["result"]
    if found["context_length"]["result"] is not None:
        fields["context_length"] = found["context_length"]["result"]
    ModelConfig.objects.filter(pk=model.pk).update(**fields)
    model.refresh_from_db()
    return model


def model_probe_request(*, model: ModelConfig) -> bool:
    """Queue a probe of ``model`` in a worker (the page's Probe button). False when one is already
    queued or running: a double click or a second tab never queues two."""
    now = timezone.now()
    changed = (
        ModelConfig.objects.filter(pk=model.pk)
        .filter(Q(probe_started_at__isnull=True) | Q(probe_started_at__lt=now - PROBE_STALE_AFTER))
        .update(probe_started_at=now, probe_error="")
    )
    model.refresh_from_db()
    if not changed:
        return False
    transaction.on_commit(lambda: model_probe_enqueue(model.pk))
    return True


def model_probe_enqueue(model_id: int) -> None:
    from ..tasks import model_probe_task

    model_probe_task.delay(model_id)


def model_probe_queued(*, model_id: int) -> None:
    """The worker's side of ``model_probe_request``: the same probe as ``manage.py probe_model``,
    then the model is free for another; a probe that could not run at all leaves its error."""
    model = ModelConfig.objects.filter(pk=model_id).first()
    if model is None:
        return
    error = ""
    try:
        model_probe(model=model)
    except ProviderError as exc:
        error = _detail(exc)
    except SoftTimeLimitExceeded:
        ModelConfig.objects.filter(pk=model_id).update(probe_started_at=None)
        raise
    except Exception as exc:  # noqa: BLE001 - whatever stopped it is shown on the page, not lost in a log
        logger.exception("probe of model %s failed", model.name)
        error = _detail(f"{type(exc).__name__}: {exc}")
    ModelConfig.objects.filter(pk=model_id).update(probe_started_at=None, probe_error=error)


def model_vision_refused(*, model: ModelConfig, detail: str) -> None:
    """Record that the endpoint refused an image during a run: the model takes none from now on."""
    probe = {**(model.probe or {}), "vision": {"result": False, "detail": _detail(detail), "during_run": True}}
    ModelConfig.objects.filter(pk=model.pk).update(supports_vision=False, probe=probe)
    model.supports_vision = False
    model.probe = probe


def model_capability_problem(model: ModelConfig, *, logprobs: bool = False) -> str | None:
    """Why ``model`` cannot serve a run with these needs, or None. Only a capability known to be
    missing refuses; an unknown one is let through."""
    if logprobs and model.supports_logprobs is False:
        return _(
            "%(model)s gives no token log-probabilities, which this run needs (P(Correct) and the pragmatic "
            "speaker's self-evaluation); choose a model that does, or probe it again with "
            "`python manage.py probe_model %(model)s` if that changed"
        ) % {"model": model.name}
    return None
