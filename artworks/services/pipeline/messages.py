"""The chat messages the pipeline sends: with the image for a vision model, with the
artwork's text for a text-only one."""

import base64
import hashlib
import mimetypes

from django.utils.translation import gettext as _

from llm.models import ModelConfig, Provider
from llm.providers import ClientError

from ...models import CollectionArtwork

# Kept fixed in English (not gettext): it is part of the request, and so of its cache key.
TEXT_ONLY_NOTE = "The image of the artwork is not available to you. What is known of the artwork:"


def sees_images(model: ModelConfig) -> bool:
    """Only an OpenAI-compatible model known to take images (declared, or found by
    ``manage.py probe_model``) gets the image; any other reads the artwork's text instead.
    The local transformers provider is text-only."""
    return model.provider == Provider.OPENAI and model.supports_vision is True


def artwork_text(artwork: CollectionArtwork) -> str:
    lines = [f"Title: {artwork.title}", f"Artist: {artwork.artist}", f"Date: {artwork.date}"]
    if artwork.comment:
        lines.append(f"Comment: {artwork.comment}")
    return TEXT_ONLY_NOTE + "\n" + "\n".join(lines)


def image_data_url(artwork: CollectionArtwork) -> str:
    if not artwork.image:
        raise ClientError(_("Artwork %(key)s has no image.") % {"key": artwork.key})
    try:
        with artwork.image.open("rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ClientError(
            _("Cannot read the image of artwork %(key)s: %(error)s") % {"key": artwork.key, "error": exc}
        ) from exc
    mime = mimetypes.guess_type(artwork.image.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def user_messages(prompt: str, artwork: CollectionArtwork, *, vision: bool) -> list[dict]:
    if vision:
        return [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": prompt},
                    {"type": "image_url", "image_url": {"url": image_data_url(artwork)}},
                ],
            }
        ]
    return [{"role": "user", "content": f"{prompt}\n\n{artwork_text(artwork)}"}]


def redacted(messages: list[dict]) -> list[dict]:
    """Messages as kept on an item: an image becomes its digest rather than megabytes of base64."""
    kept = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
                if url.startswith("data:"):
                    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
                    part = {"type": "image_url", "image_url": {"url": f"{url[: url.find(',') + 1]}… sha256:{digest}"}}
                parts.append(part)
            content = parts
        kept.append({**message, "content": content})
    return kept
