"""Pacing a model's requests across every worker: the concurrency lease, requests per minute, and backoff."""

import random
import threading
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q, Subquery
from django.utils import timezone

from ..models import ModelConfig, ModelSlot, ModelThrottle
from ..providers import RetryableError


def backoff_delay(error: RetryableError, attempt: int) -> float:
    """The server's Retry-After when it sent one (up to EVAL_RETRY_AFTER_CAP_S), else capped
    exponential backoff with full jitter."""
    if error.retry_after is not None:
        return min(error.retry_after, float(settings.EVAL_RETRY_AFTER_CAP_S))
    return random.uniform(0, min(settings.EVAL_BACKOFF_CAP, settings.EVAL_BACKOFF_BASE * 2 ** (attempt - 1)))


# One thread per process and model asks the database for a free slot at a time; the others
# wait their turn on this lock. Without it, a chunk's threads beyond the free slots (another
# chunk, another process holds them) each polled every POLL_SECONDS: thousands of queries a
# second that took the CPU from the requests under way.
_slot_pollers: dict[int, threading.Lock] = {}
_slot_pollers_guard = threading.Lock()


def _slot_poller(model_id: int) -> threading.Lock:
    with _slot_pollers_guard:
        return _slot_pollers.setdefault(model_id, threading.Lock())


class SlotLease:
    """A concurrency lease on a model, honoured by every worker through the database.

    A lease expires a margin after the model's timeout, so a killed worker
    cannot hold a slot for ever; a live holder renews it before that, between
    requests (a request cannot outlive its timeout).
    """

    MARGIN_SECONDS = 5
    POLL_SECONDS = 0.01

    def __init__(self, model: ModelConfig):
        self.model = model
        self.holder = uuid.uuid4().hex
        self.expires_at = None

    def _lifetime(self) -> timedelta:
        return timedelta(seconds=self.model.timeout + self.MARGIN_SECONDS)

    def ensure(self) -> None:
        """Hold a slot for the next request: renew a lease about to lapse, or take a free slot."""
        now = timezone.now()
        if self.expires_at is not None:
            if self.expires_at - now > timedelta(seconds=self.MARGIN_SECONDS):
                return
            renewed = ModelSlot.objects.filter(model=self.model, holder=self.holder, expires_at__gt=now).update(
                expires_at=now + self._lifetime()
            )
            if renewed:
                self.expires_at = now + self._lifetime()
                return
        self._acquire()

    def _acquire(self) -> None:
        self.slots_ensure()
        with _slot_poller(self.model.pk):
            self._poll()

    def _poll(self) -> None:
        while not self._take():
            time.sleep(self.POLL_SECONDS)

    def slots_ensure(self) -> None:
        from .models import model_slots_ensure

        if not ModelSlot.objects.filter(model=self.model).exists():
            model_slots_ensure(model=self.model)  # a model created without model_add

    def try_acquire(self) -> bool:
        """Take a free slot if there is one, without waiting (after slots_ensure)."""
        return self._take()

    def _take(self) -> bool:
        now = timezone.now()
        free = Q(expires_at__isnull=True) | Q(expires_at__lt=now)
        candidate = ModelSlot.objects.filter(free, model=self.model).order_by("?").values("pk")[:1]
        # One statement picks and takes a free slot; the repeated condition makes
        # a race between two takers end with one winner.
        expires = now + self._lifetime()
        if ModelSlot.objects.filter(free, pk=Subquery(candidate)).update(holder=self.holder, expires_at=expires):
            self.expires_at = expires
            return True
        return False

    def release(self) -> None:
        if self.expires_at is not None:
            ModelSlot.objects.filter(model=self.model, holder=self.holder).update(holder="", expires_at=None)
            self.expires_at = None


def model_throttle_wait(model: ModelConfig) -> None:
    """Requests-per-minute pacing: reserve the next start time, then wait for it."""
    if not model.requests_per_minute:
        return
    interval = timedelta(seconds=60.0 / model.requests_per_minute)
    with transaction.atomic():
        throttle, _ = ModelThrottle.objects.select_for_update().get_or_create(model=model)
        now = timezone.now()
        start = max(now, throttle.next_request_at or now)
        throttle.next_request_at = start + interval
        throttle.save(update_fields=["next_request_at"])
    wait = (start - timezone.now()).total_seconds()
    if wait > 0:
        time.sleep(wait)


def request_with_retries(*, model: ModelConfig, lease: SlotLease, send):
    """``send()`` under the model's lease and pacing, with retries: exponential backoff with full
    jitter, or the server's Retry-After; returns (its result, the attempt that succeeded) and raises
    the last RetryableError after EVAL_MAX_ATTEMPTS. The lease is held from attempt to attempt but
    never through a backoff, which must not keep capacity other requests could use."""
    last_error: RetryableError | None = None
    for attempt in range(1, settings.EVAL_MAX_ATTEMPTS + 1):
        lease.ensure()
        model_throttle_wait(model)
        try:
            return send(), attempt
        except RetryableError as exc:
            last_error = exc
        if attempt == settings.EVAL_MAX_ATTEMPTS:
            break
        lease.release()
        time.sleep(backoff_delay(last_error, attempt))
    raise last_error
