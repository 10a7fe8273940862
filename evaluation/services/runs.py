"""Runs: generation, judging and classification, executed by Celery workers.

A run's items fan out in chunks. Each request goes through the persistent
response cache, a concurrency lease shared by every worker, requests-per-minute
pacing, and retries with exponential backoff and jitter that honour
Retry-After. Each item is written once (guarded by its status), so a worker
killed mid-run leaves nothing half done and a resume sends no request twice.
"""

import collections
import hashlib
import json
import logging
import random
import threading
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, connections, transaction
from django.db.models import Q, Subquery, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Dataset, DatasetVersion, Expression

from ..model_guard import model_refusal
from ..models import (
    ItemStatus,
    ModelConfig,
    ModelSlot,
    ModelThrottle,
    PromptKind,
    PromptTemplate,
    ResponseCache,
    Run,
    RunItem,
    RunKind,
    RunPhase,
    RunStatus,
)
from ..providers import ClientError, Completion, ProviderError, RetryableError, provider_for

logger = logging.getLogger(__name__)

JUDGE_STRATEGIES = ("zero-shot", "demonstration", "cot", "aspect")
GENERATION_PROMPTS = ("zero-shot", "few-shot")
CLASSIFICATION_TASKS = ("topic", "traits")
# Appendix C: generation at temperature 0.7 and 150 tokens; the judge at temperature 0.
GENERATION_DEFAULTS = {"temperature": 0.7, "max_tokens": 150, "seed": 0}
JUDGE_DEFAULTS = {"temperature": 0.0, "max_tokens": 10, "seed": 0}
COT_MAX_TOKENS = 400
CLASSIFICATION_DEFAULTS = {"temperature": 0.0, "max_tokens": 10, "seed": 0}


class RunError(Exception):
    pass


def _latest_prompt(kind: str, name: str) -> PromptTemplate:
    prompt = PromptTemplate.objects.filter(kind=kind, name=name).order_by("-builtin", "-created_at").first()
    if prompt is None:
        raise ValidationError({"prompt": _("no %(kind)s prompt named '%(name)s'") % {"kind": kind, "name": name}})
    return prompt


def _package_versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in ("django", "celery", "openai", "transformers", "torch"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            continue
    return versions


@transaction.atomic
def run_start(
    *,
    kind: str,
    model: ModelConfig,
    prompt_name: str,
    dataset: Dataset | None = None,
    version: DatasetVersion | None = None,
    source_run: Run | None = None,
    params: dict | None = None,
    limit: int | None = None,
    user=None,
) -> Run:
    """Create a run and its items, and queue it.

    generation: ``prompt_name`` zero-shot|few-shot over a dataset or a frozen version;
    judge: ``prompt_name`` is the strategy, over the done items of ``source_run``;
    classification: ``prompt_name`` is the task, topic|traits, over items with gold labels.
    """
    if kind == RunKind.GENERATION:
        if prompt_name not in GENERATION_PROMPTS:
            raise ValidationError({"prompt": _("zero-shot or few-shot")})
        prompt = _latest_prompt(PromptKind.GENERATION, prompt_name)
        defaults = GENERATION_DEFAULTS
    elif kind == RunKind.JUDGE:
        if prompt_name not in JUDGE_STRATEGIES:
            raise ValidationError({"strategy": _("one of %(values)s") % {"values": ", ".join(JUDGE_STRATEGIES)}})
        if source_run is None or source_run.kind != RunKind.GENERATION:
            raise ValidationError({"source_run": _("a judge run scores a generation run")})
        prompt = _latest_prompt(PromptKind.JUDGE, prompt_name)
        defaults = {**JUDGE_DEFAULTS, "max_tokens": COT_MAX_TOKENS if prompt_name == "cot" else 10}
        dataset = source_run.dataset
    elif kind == RunKind.CLASSIFICATION:
        if prompt_name not in CLASSIFICATION_TASKS:
            raise ValidationError({"task": _("topic or traits")})
        prompt = _latest_prompt(PromptKind.CLASSIFICATION, prompt_name)
        defaults = CLASSIFICATION_DEFAULTS
    else:
        raise ValidationError({"kind": _("one of %(values)s") % {"values": ", ".join(RunKind.values)}})
    if version is not None:
        dataset = version.round.dataset
    if dataset is None:
        raise ValidationError({"dataset": _("a run needs a dataset or a frozen version")})
    if limit is not None and limit < 1:
        raise ValidationError({"limit": _("at least 1")})
    refusal = model_refusal(model)
    if refusal:
        raise ValidationError({"model": refusal})

    run = Run.objects.create(
        kind=kind,
        model=model,
        prompt=prompt,
        dataset=dataset,
        version=version,
        source_run=source_run,
        strategy=prompt_name,
        params={**defaults, **(params or {})},
        limit=limit,
        created_by=user,
        queued_at=timezone.now(),
        reproducibility={
            "model_name": model.name,
            "provider": model.provider,
            "model_id": model.model_id,
            "base_url": model.base_url,
            "prompt_hash": prompt.content_hash,
            "prompt_reference": prompt.reference,
            "packages": _package_versions(),
        },
    )
    if kind == RunKind.JUDGE:
        sources = source_run.items.filter(status=ItemStatus.DONE).order_by("id")
        if limit:
            sources = sources[:limit]
        RunItem.objects.bulk_create(
            [RunItem(run=run, expression_id=s.expression_id, source_item=s) for s in sources], batch_size=1000
        )
    else:
        expressions = _run_expressions(dataset=dataset, version=version, kind=kind, task=prompt_name)
        if limit:
            expressions = expressions[:limit]
        RunItem.objects.bulk_create([RunItem(run=run, expression_id=eid) for eid in expressions], batch_size=1000)
    if not run.items.exists():
        raise ValidationError({"items": _("the run would have no items")})
    transaction.on_commit(lambda: _enqueue_execute(run.pk))
    return run


def _run_expressions(*, dataset, version, kind, task) -> list[int]:
    if version is not None:
        ids = list(version.items.exclude(expression=None).order_by("id").values_list("expression_id", flat=True))
    else:
        ids = list(dataset.expressions.order_by("id").values_list("id", flat=True))
    if kind == RunKind.CLASSIFICATION and task == "topic" and version is None:
        with_theme = set(Expression.objects.filter(pk__in=ids, theme__isnull=False).values_list("id", flat=True))
        ids = [i for i in ids if i in with_theme]
    return ids


def _enqueue_execute(run_id: int) -> None:
    from ..tasks import run_execute_task

    run_execute_task.delay(run_id)


def run_cancel(*, run: Run, user=None) -> Run:
    """Stop a queued or running run; items already written stay."""
    changed = Run.objects.filter(pk=run.pk, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).update(
        status=RunStatus.CANCELLED, finished_at=timezone.now()
    )
    run.refresh_from_db()
    if not changed:
        raise RunError(
            _("the run is %(status)s and cannot be cancelled") % {"status": run.get_status_display().lower()}
        )
    return run


def run_resume(*, run: Run, user=None, retry_failed: bool = False) -> Run:
    """Queue a run again: only its pending items are sent (the cache covers the rest).

    A cancelled or failed run resumes at once; a running run only when it has
    stalled (no item finished for EVAL_STALL_SECONDS), which is what a worker
    killed mid-run looks like, so a live run is never fanned out twice.
    """
    with transaction.atomic():
        changed = Run.objects.filter(pk=run.pk, status__in=[RunStatus.CANCELLED, RunStatus.FAILED]).update(
            status=RunStatus.QUEUED, finished_at=None, error="", queued_at=timezone.now(), phase=RunPhase.NONE
        )
        if not changed and run_is_stalled(run=run):
            changed = Run.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
                status=RunStatus.QUEUED, queued_at=timezone.now(), phase=RunPhase.NONE
            )
        run.refresh_from_db()
        if not changed:
            raise RunError(
                _("the run is %(status)s and cannot be resumed") % {"status": run.get_status_display().lower()}
            )
        if retry_failed:
            run.items.filter(status=ItemStatus.FAILED).update(status=ItemStatus.PENDING, error="")
        # Claims a dead chunk left behind, judged by this process's EVAL_STALL_SECONDS: the
        # worker that fans out may be configured otherwise. Live chunks renew theirs.
        expired = timezone.now() - timedelta(seconds=settings.EVAL_STALL_SECONDS)
        run.items.filter(status=ItemStatus.PENDING, claimed_at__lt=expired).update(claim_token="", claimed_at=None)
        transaction.on_commit(lambda: _enqueue_execute(run.pk))
    return run


def run_is_stalled(*, run: Run) -> bool:
    """A running run with pending items and no item finished for EVAL_STALL_SECONDS."""
    if run.status != RunStatus.RUNNING or not run.items.filter(status=ItemStatus.PENDING).exists():
        return False
    last = run.items.exclude(finished_at=None).order_by("-finished_at").values_list("finished_at", flat=True).first()
    since = last or run.started_at or run.created_at
    return (timezone.now() - since).total_seconds() > settings.EVAL_STALL_SECONDS


def _claimable() -> Q:
    """A pending item no live chunk works on: never claimed, released, or claimed by a chunk
    that has not renewed its claim for EVAL_STALL_SECONDS (its worker died)."""
    expired = timezone.now() - timedelta(seconds=settings.EVAL_STALL_SECONDS)
    return Q(status=ItemStatus.PENDING) & (Q(claim_token="") | Q(claimed_at__isnull=True) | Q(claimed_at__lt=expired))


def run_execute(*, run_id: int) -> None:
    """Fan a run's pending items out in chunks. Also resumes a run whose worker died.

    Items a live chunk has claimed are left out, so a redelivered fan-out (or a resume
    while chunks still work) sends nothing twice.
    """
    claimed = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(status=RunStatus.RUNNING)
    Run.objects.filter(pk=run_id, started_at=None).update(started_at=timezone.now())
    run = Run.objects.get(pk=run_id)
    if not claimed and run.status != RunStatus.RUNNING:
        return
    pending = list(run.items.filter(_claimable()).order_by("id").values_list("id", flat=True))
    if not pending:
        _run_finish(run_id)
        return
    from ..tasks import run_chunk_task

    size = settings.EVAL_CHUNK_SIZE
    for start in range(0, len(pending), size):
        run_chunk_task.delay(run_id, pending[start : start + size])


def _run_finish(run_id: int) -> None:
    """Mark a run done once nothing is pending (only a running run: a cancel stays a cancel)."""
    if RunItem.objects.filter(run_id=run_id, status=ItemStatus.PENDING).exists():
        return
    totals = RunItem.objects.filter(run_id=run_id).aggregate(tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
    Run.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.DONE,
        finished_at=timezone.now(),
        tokens_in=totals["tokens_in"] or 0,
        tokens_out=totals["tokens_out"] or 0,
    )


def run_chunk(*, run_id: int, item_ids: list[int]) -> None:
    """Execute a chunk of items with up to the model's concurrency in this process.

    The chunk first claims its items in one statement; it works only on the items it
    claimed, so a copy of it (a redelivery, a second fan-out) finds nothing to do while
    it lives. Whatever happens, the claims it still holds are released when it ends.
    """
    run = Run.objects.select_related("model", "prompt", "dataset").get(pk=run_id)
    if run.status != RunStatus.RUNNING:
        return
    token = uuid.uuid4().hex
    claimed = RunItem.objects.filter(_claimable(), run_id=run_id, pk__in=item_ids).update(
        claim_token=token, claimed_at=timezone.now()
    )
    if not claimed:
        _run_finish(run_id)
        return
    try:
        _run_claimed(run, token)
    finally:
        run_claims_release(token=token)
    _run_finish(run_id)


def run_claims_release(*, token: str) -> int:
    """Free the pending items a chunk claimed (done and failed items keep their token for the record)."""
    return RunItem.objects.filter(claim_token=token, status=ItemStatus.PENDING).update(claim_token="", claimed_at=None)


def _run_claimed(run: Run, token: str) -> None:
    items = list(
        RunItem.objects.filter(claim_token=token, status=ItemStatus.PENDING)
        .select_related("expression__theme", "source_item")
        .prefetch_related("expression__traits")
        .order_by("id")
    )
    try:
        context = _RunContext(run, claim_token=token)
    except ProviderError as exc:
        # The model cannot be reached at all (say, its API key variable is unset): no item can succeed.
        Run.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED, error=str(exc)[:2000], finished_at=timezone.now()
        )
        return
    _model_warm_up(run, context.provider)
    context.prepare(items)
    workers = max(1, min(run.model.max_concurrency, len(items)))
    if workers == 1:
        context.work(collections.deque(items), close_connections=False)
    else:
        queue = collections.deque(items)
        threads = [
            threading.Thread(target=context.work, args=(queue,), name=f"run{run.pk}-{n}") for n in range(workers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def _model_warm_up(run: Run, provider) -> None:
    """Load a local model before the first item, saying so on the run: the first load of the
    built-in model converts its GGUF (~20 s), and the page would otherwise sit at 0% unexplained."""
    # Duck-typed: a provider that does not subclass Provider (a test double) needs no warm-up.
    needs_warm_up = getattr(provider, "needs_warm_up", None)
    if needs_warm_up is None or not needs_warm_up():
        return
    Run.objects.filter(pk=run.pk).update(phase=RunPhase.LOADING_MODEL)
    try:
        provider.warm_up()
    except ProviderError:
        pass  # each item meets the same error and records it, as without the warm-up
    finally:
        Run.objects.filter(pk=run.pk, phase=RunPhase.LOADING_MODEL).update(phase=RunPhase.NONE)


class _RunContext:
    """What every item of a chunk shares: the run, its provider and its shots."""

    def __init__(self, run: Run, *, claim_token: str = ""):
        from ..prompts import render

        self.run = run
        self.claim_token = claim_token
        self._renewed_at = time.monotonic()
        self._provider_facts: dict | None = None
        self.model = run.model
        self.render = render
        self.params = run.params
        self.provider = provider_for(run.model)
        self._checked_at = 0.0
        self._cancelled = False
        self._lock = threading.Lock()
        self._local = threading.local()
        self._fingerprints: set[str] = set(run.reproducibility.get("fingerprints", []))
        self.shot_pool = _classification_pool(run) if run.kind == RunKind.CLASSIFICATION else None

    def cancelled(self) -> bool:
        # A cancel from the page takes effect within a second, without a query per item.
        now = time.monotonic()
        if now - self._checked_at > 1.0:
            self._checked_at = now
            self._cancelled = Run.objects.filter(pk=self.run.pk, status=RunStatus.CANCELLED).exists()
        # A live chunk renews its claims well within EVAL_STALL_SECONDS, so only a dead one's expire.
        if self.claim_token and now - self._renewed_at > settings.EVAL_STALL_SECONDS / 3:
            self._renewed_at = now
            RunItem.objects.filter(claim_token=self.claim_token, status=ItemStatus.PENDING).update(
                claimed_at=timezone.now()
            )
        return self._cancelled

    def work(self, queue: collections.deque, *, close_connections: bool = True) -> None:
        """Take items until none is left. A thread keeps its database connection and its
        concurrency lease from item to item: per-item setup would cost more than the work."""
        lease = SlotLease(self.model)
        self._local.lease = lease
        try:
            batch_size = settings.EVAL_LOCAL_BATCH if hasattr(self.provider, "complete_batch") else 1
            while not self.cancelled():
                batch = [queue.popleft() for _ in range(min(batch_size, len(queue)))]
                if not batch:
                    break
                if len(batch) == 1:
                    self.process(batch[0])
                else:
                    self.process_batch(batch)
        finally:
            lease.release()
            if close_connections:
                connections.close_all()

    def messages_for(self, item: RunItem) -> tuple[list[dict], str]:
        """The exact messages of an item, and the gold answer for classification."""
        expression = item.expression
        values = {
            "phrase": expression.text,
            "expression": expression.text,
            "idiom": expression.text,
            "explanation": expression.explanation,
            "reference": expression.explanation,
        }
        gold = ""
        if self.run.kind == RunKind.JUDGE:
            values["response"] = values["candidate"] = item.source_item.response
        if self.run.kind == RunKind.CLASSIFICATION:
            from ..prompts import classification_messages, gold_answer, select_shots

            shots = select_shots(
                self.shot_pool, expression.pk, seed=self.params.get("seed", 0), item_text=expression.text
            )
            gold = gold_answer(self.run.strategy, expression) or ""
            return classification_messages(self.run.prompt.messages, expression.text, shots), gold
        return self.render(self.run.prompt.messages, **values), gold

    def prepare(self, items: list[RunItem]) -> None:
        """Build every item's messages and look the whole chunk up in the cache with one query."""
        self._prepared = {}
        for item in items:
            messages, gold = self.messages_for(item)
            self._prepared[item.pk] = (messages, gold, cache_key(self.model, messages, self.params))
        keys = [key for _, _, key in self._prepared.values()]
        self._cached = dict(ResponseCache.objects.filter(key__in=keys).values_list("key", "response"))

    def process(self, item: RunItem) -> None:
        messages, gold, key = self._prepared[item.pk]
        cached = self._cached.get(key)
        started = time.monotonic()
        attempts = 0
        if cached is not None:
            completion = Completion(**cached)
        else:
            try:
                completion, attempts = self._request(messages)
            except ClientError as exc:
                _item_fail(item, messages, str(exc), attempts=1)
                return
            except RetryableError as exc:
                _item_fail(
                    item,
                    messages,
                    _("gave up after %(n)s attempts: %(error)s") % {"n": settings.EVAL_MAX_ATTEMPTS, "error": exc},
                    attempts=settings.EVAL_MAX_ATTEMPTS,
                )
                return
            _cache_store(key, completion)
        self._write(item, messages, gold, completion, cached=cached is not None, attempts=attempts, started=started)

    def process_batch(self, items: list[RunItem]) -> None:
        """A local model generates several uncached items in one padded batch."""
        fresh = []
        for item in items:
            if self._cached.get(self._prepared[item.pk][2]) is not None:
                self.process(item)
            else:
                fresh.append(item)
        if not fresh:
            return
        started = time.monotonic()
        self._local.lease.ensure()
        try:
            completions = self.provider.complete_batch(
                [self._prepared[item.pk][0] for item in fresh],
                temperature=self.params.get("temperature", 0.0),
                max_tokens=self.params.get("max_tokens", 150),
                seed=self.params.get("seed"),
                top_logprobs=self.params.get("top_logprobs"),
            )
        except ProviderError:
            for item in fresh:  # one at a time, so one bad conversation fails alone
                self.process(item)
            return
        for item, completion in zip(fresh, completions, strict=True):
            messages, gold, key = self._prepared[item.pk]
            _cache_store(key, completion)
            self._write(item, messages, gold, completion, cached=False, attempts=1, started=started)

    def _write(
        self, item, messages, gold, completion: Completion, *, cached: bool, attempts: int, started: float
    ) -> None:
        fields = {
            "status": ItemStatus.DONE,
            "messages": messages,
            "response": completion.text,
            "cached": cached,
            "tokens_in": 0 if cached else completion.tokens_in,
            "tokens_out": 0 if cached else completion.tokens_out,
            "latency_ms": int((time.monotonic() - started) * 1000),
            "attempts": attempts,
            "finished_at": timezone.now(),
        }
        if self.run.kind == RunKind.JUDGE:
            from ..scoring import parse_judge_score

            fields["score"] = parse_judge_score(completion.text)
        elif self.run.kind == RunKind.CLASSIFICATION:
            from ..scoring import exact_match, normalise_topic, normalise_traits

            prediction = (normalise_topic if self.run.strategy == "topic" else normalise_traits)(completion.text)
            fields.update(prediction=prediction[:100], gold=gold, correct=exact_match(prediction, gold))
        # Token totals are summed from the items (see run_progress): one shared
        # counter row updated by every thread would serialise them on its lock.
        written = RunItem.objects.filter(pk=item.pk, status=ItemStatus.PENDING).update(**fields)
        if written and not cached and completion.fingerprint and completion.fingerprint not in self._fingerprints:
            self._record_fingerprint(completion.fingerprint)

    def _record_fingerprint(self, fingerprint: str) -> None:
        with self._lock:
            if fingerprint in self._fingerprints:
                return
            self._fingerprints.add(fingerprint)
            if self._provider_facts is None:
                self._provider_facts = self.provider.describe()
        run_fingerprint_record(run_id=self.run.pk, fingerprint=fingerprint, provider_facts=self._provider_facts)

    def _request(self, messages: list[dict]) -> tuple[Completion, int]:
        """One request with retries: exponential backoff with full jitter, or the server's Retry-After."""
        last_error = None
        lease = self._local.lease
        for attempt in range(1, settings.EVAL_MAX_ATTEMPTS + 1):
            lease.ensure()
            model_throttle_wait(self.model)
            try:
                return (
                    self.provider.complete(
                        messages,
                        temperature=self.params.get("temperature", 0.0),
                        max_tokens=self.params.get("max_tokens", 150),
                        seed=self.params.get("seed"),
                        top_logprobs=self.params.get("top_logprobs"),
                    ),
                    attempt,
                )
            except RetryableError as exc:
                last_error = exc
            if attempt == settings.EVAL_MAX_ATTEMPTS:
                break
            lease.release()  # a backoff must not hold capacity that other requests could use
            time.sleep(backoff_delay(last_error, attempt))
        raise last_error


def run_fingerprint_record(*, run_id: int, fingerprint: str, provider_facts: dict) -> bool:
    """Add a fingerprint to a run's reproducibility facts (and the provider's facts, once).

    One UPDATE statement, so chunks on other workers recording at the same moment lose
    nothing: a read-modify-write of the JSON would keep only the last writer's list.
    Returns whether the fingerprint was new.
    """
    table = connection.ops.quote_name(Run._meta.db_table)
    column = connection.ops.quote_name("reproducibility")
    facts = json.dumps(provider_facts)
    if connection.vendor == "postgresql":
        sql = (
            f"UPDATE {table} SET {column} = jsonb_build_object('provider_facts', %s::jsonb) || {column}"
            f" || jsonb_build_object('fingerprints', COALESCE({column} -> 'fingerprints', '[]'::jsonb)"
            f" || to_jsonb(%s::text)) WHERE id = %s"
            f" AND NOT COALESCE({column} -> 'fingerprints', '[]'::jsonb) @> to_jsonb(ARRAY[%s::text])"
        )
        params = [facts, fingerprint, run_id, fingerprint]
    elif connection.vendor == "sqlite":
        sql = (
            f"UPDATE {table} SET {column} = json_insert(json_set({column}, '$.fingerprints',"
            f" json_insert(COALESCE(json_extract({column}, '$.fingerprints'), '[]'), '$[#]', %s)),"
            f" '$.provider_facts', json(%s)) WHERE id = %s"
            f" AND NOT EXISTS (SELECT 1 FROM json_each({column}, '$.fingerprints') WHERE value = %s)"
        )
        params = [fingerprint, facts, run_id, fingerprint]
    else:
        raise NotImplementedError(f"no atomic fingerprint update for {connection.vendor}")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount == 1


def _cache_store(key: str, completion: Completion) -> None:
    try:
        ResponseCache.objects.create(key=key, response=_completion_json(completion))
    except IntegrityError:
        pass  # another worker cached the same request first


def _completion_json(completion: Completion) -> dict:
    return {
        "text": completion.text,
        "tokens_in": completion.tokens_in,
        "tokens_out": completion.tokens_out,
        "fingerprint": completion.fingerprint,
        "logprobs": completion.logprobs,
    }


def _item_fail(item: RunItem, messages: list[dict], error: str, *, attempts: int) -> None:
    RunItem.objects.filter(pk=item.pk, status=ItemStatus.PENDING).update(
        status=ItemStatus.FAILED, messages=messages, error=error[:2000], attempts=attempts, finished_at=timezone.now()
    )


def backoff_delay(error: RetryableError, attempt: int) -> float:
    """The server's Retry-After when it sent one (up to EVAL_RETRY_AFTER_CAP_S), else capped
    exponential backoff with full jitter."""
    if error.retry_after is not None:
        return min(error.retry_after, float(settings.EVAL_RETRY_AFTER_CAP_S))
    return random.uniform(0, min(settings.EVAL_BACKOFF_CAP, settings.EVAL_BACKOFF_BASE * 2 ** (attempt - 1)))


def cache_key(model: ModelConfig, messages: list[dict], params: dict) -> str:
    """Identifies a request: the model config that answers it, the messages and the sampling parameters."""
    payload = {
        "provider": model.provider,
        "model_id": model.model_id,
        "base_url": model.base_url,
        "messages": messages,
        "temperature": params.get("temperature"),
        "max_tokens": params.get("max_tokens"),
        "seed": params.get("seed"),
        "top_logprobs": params.get("top_logprobs"),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _classification_pool(run: Run) -> list:
    """The gold-labelled expressions of the dataset that 3-shot demonstrations are drawn from."""
    from ..prompts import shot_pool

    candidates = Expression.objects.filter(dataset=run.dataset).select_related("theme").prefetch_related("traits")
    return shot_pool(run.strategy, candidates.order_by("id"))


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
        from .models import model_slots_ensure

        if not ModelSlot.objects.filter(model=self.model).exists():
            model_slots_ensure(model=self.model)  # a model created without model_add
        while True:
            now = timezone.now()
            free = Q(expires_at__isnull=True) | Q(expires_at__lt=now)
            candidate = ModelSlot.objects.filter(free, model=self.model).order_by("?").values("pk")[:1]
            # One statement picks and takes a free slot; the repeated condition makes
            # a race between two takers end with one winner.
            expires = now + self._lifetime()
            if ModelSlot.objects.filter(free, pk=Subquery(candidate)).update(holder=self.holder, expires_at=expires):
                self.expires_at = expires
                return
            time.sleep(self.POLL_SECONDS)

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
