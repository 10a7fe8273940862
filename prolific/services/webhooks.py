"""Prolific's submission status-change webhook: verified, logged, applied once; and the subscription.

A delivery is signed base64(HMAC-SHA256(secret, timestamp + raw body)) in the headers
X-Prolific-Request-Signature and X-Prolific-Request-Timestamp. The secret is read from the
environment variable PROLIFIC_WEBHOOK_SECRET_ENV names, never from the database. Every valid
delivery is kept (WebhookDelivery). Anyone can post refused ones, as fast as they like: each is
counted per minute (WebhookRefusalCount), and only the first PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE
of a minute are kept, with their body, to show who is knocking.
"""

import base64
import hashlib
import hmac
import json
import logging
import os
import time
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from study.models import Study

from ..client import ProlificClient, ProlificError
from ..models import WebhookDelivery, WebhookRefusalCount
from .submissions import prolific_submission_status_apply

logger = logging.getLogger(__name__)

EVENT_TYPE = "submission.status.change"
BODY_KEPT = 10_000
# Per-minute counts older than this are deleted as new minutes are counted.
REFUSAL_COUNTS_KEPT = timedelta(days=30)


class WebhookSignatureError(ProlificError):
    """The delivery is not Prolific's: no secret here, no or a wrong signature, or a stale timestamp."""


def webhook_secret() -> str:
    return os.environ.get(settings.PROLIFIC_WEBHOOK_SECRET_ENV, "").strip()


def webhook_signature(*, secret: str, timestamp: str, body: bytes) -> str:
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()


def _header(headers, name: str) -> str:
    lowered = {str(key).lower(): value for key, value in dict(headers or {}).items()}
    return str(lowered.get(name.lower()) or lowered.get("http_" + name.lower().replace("-", "_")) or "").strip()


def _check(body: bytes, headers) -> str:
    """'' when the delivery is Prolific's, otherwise why not."""
    secret = webhook_secret()
    if not secret:
        return "no secret configured"
    signature = _header(headers, "X-Prolific-Request-Signature")
    timestamp = _header(headers, "X-Prolific-Request-Timestamp")
    if not signature or not timestamp:
        return "unsigned"
    expected = webhook_signature(secret=secret, timestamp=timestamp, body=body)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        return "invalid signature"
    try:
        sent = float(timestamp)
    except ValueError:
        return "invalid timestamp"
    if sent > 1e12:  # milliseconds
        sent /= 1000
    if abs(time.time() - sent) > settings.PROLIFIC_WEBHOOK_MAX_AGE_S:
        return "stale timestamp"
    return ""


def prolific_webhook_receive(*, body: bytes, headers, remote_addr: str = "") -> WebhookDelivery:
    """Verify and apply one delivery; raises WebhookSignatureError (after counting it) when it is not Prolific's."""
    text = body.decode("utf-8", errors="replace")[:BODY_KEPT]
    problem = _check(body, headers)
    if problem:
        refused = webhook_refusal_record(at=timezone.now())
        kept = settings.PROLIFIC_WEBHOOK_REFUSED_BODIES_PER_MINUTE
        if refused <= kept:
            WebhookDelivery.objects.create(
                signature_valid=False, remote_addr=(remote_addr or "")[:64], body=text, outcome=problem
            )
            logger.warning("Prolific webhook refused (%s) from %s", problem, remote_addr or "?")
        elif refused == kept + 1:
            logger.warning(
                "Prolific webhook: more than %s deliveries refused this minute (the last from %s); "
                "the rest of the minute's are only counted",
                kept,
                remote_addr or "?",
            )
        raise WebhookSignatureError(problem)
    try:
        event = json.loads(body)
    except ValueError:
        event = None
    if not isinstance(event, dict):
        return WebhookDelivery.objects.create(
            signature_valid=True, remote_addr=remote_addr[:64], body=text, outcome="not JSON"
        )
    event_type = str(event.get("event_type") or "")[:100]
    submission_id = str(event.get("resource_id") or "")[:64]
    status = str(event.get("status") or "")[:20]
    outcome = "ignored event"
    if event_type == EVENT_TYPE and submission_id:
        result = prolific_submission_status_apply(
            submission_id=submission_id, status=status, participant_id=str(event.get("participant_id") or "")[:64]
        )
        outcome = result["outcome"] + (", place freed" if result["freed"] else "")
    return WebhookDelivery.objects.create(
        signature_valid=True,
        event_type=event_type,
        submission_id=submission_id,
        status=status,
        remote_addr=(remote_addr or "")[:64],
        body=text,
        outcome=outcome[:40],
    )


def webhook_refusal_record(*, at: datetime) -> int:
    """Count one refused delivery in the minute of ``at``; the minute's count, this one included.

    The increment and the read are one transaction: the row stays locked in between, so of
    deliveries refused at the same instant each reads its own number.
    """
    minute = at.replace(second=0, microsecond=0)
    with transaction.atomic():
        if not WebhookRefusalCount.objects.filter(minute=minute).update(count=F("count") + 1):
            try:
                with transaction.atomic():
                    WebhookRefusalCount.objects.create(minute=minute, count=1)
            except IntegrityError:
                # Another delivery created the minute's row first (we waited on its unique index).
                WebhookRefusalCount.objects.filter(minute=minute).update(count=F("count") + 1)
            else:
                WebhookRefusalCount.objects.filter(minute__lt=minute - REFUSAL_COUNTS_KEPT).delete()
        return WebhookRefusalCount.objects.values_list("count", flat=True).get(minute=minute)


def _workspace(client, workspace_id: str | None) -> str:
    if workspace_id:
        return workspace_id
    found = next((w.get("id") for w in client.paginate("workspaces/") if isinstance(w, dict) and w.get("id")), None)
    if not found:
        raise ProlificError(_("The token sees no Prolific workspace: give the workspace id (--workspace)."))
    return found


def prolific_hooks_register(*, study: Study, target_url: str, workspace_id: str | None = None) -> dict:
    """Subscribe ``target_url`` to submission status changes (once: an enabled subscription of the same URL is kept)."""
    # Prolific calls only https:// addresses; a loopback one is allowed for a local test run.
    if not target_url.startswith("https://") and urlsplit(target_url).hostname not in ("127.0.0.1", "localhost"):
        raise ProlificError(_("Prolific only calls https:// addresses: %(url)s is not one.") % {"url": target_url})
    client = ProlificClient(study=study)
    workspace = _workspace(client, workspace_id)
    existing = client.get("hooks/subscriptions/", params={"workspace_id": workspace}) or {}
    for hook in existing.get("results", []) if isinstance(existing, dict) else []:
        if hook.get("target_url") == target_url and hook.get("event_type") == EVENT_TYPE and hook.get("is_enabled"):
            return {"subscription_id": hook.get("id"), "workspace_id": workspace, "created": False}
    answer, headers = client.request(
        "POST",
        "hooks/subscriptions/",
        json_body={"event_type": EVENT_TYPE, "target_url": target_url, "workspace_id": workspace},
    )
    subscription = (answer or {}).get("id")
    confirmation = {k.lower(): v for k, v in headers.items()}.get("x-hook-secret", "")
    if not subscription or not confirmation:
        raise ProlificError(_("Prolific's answer to the subscription lacks its id or X-Hook-Secret header."))
    client.request(
        "POST",
        f"hooks/subscriptions/{subscription}/",
        json_body={"secret": confirmation},
        redact_values=(confirmation,),
    )
    return {"subscription_id": subscription, "workspace_id": workspace, "created": True}


def prolific_hooks_secret_create(*, study: Study, workspace_id: str | None = None) -> str:
    """A new signing secret for the workspace (it replaces the old one); returned once, never stored or logged."""
    client = ProlificClient(study=study)
    workspace = _workspace(client, workspace_id)
    answer, _headers = client.request(
        "POST", "hooks/secrets/", json_body={"workspace_id": workspace}, secret_keys=("value",)
    )
    value = (answer or {}).get("value") if isinstance(answer, dict) else None
    if not value:
        raise ProlificError(_("Prolific's answer holds no secret."))
    return value
