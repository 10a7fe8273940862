"""Run execution: a run's items fan out in chunks that workers claim, and each item is sent once.

Each request goes through the persistent response cache, a concurrency lease shared by every
worker, requests-per-minute pacing, and retries with exponential backoff and jitter that honour
Retry-After. Each item is written once (guarded by its status), so a worker killed mid-run leaves
nothing half done and a resume sends no request twice.
"""

import collections
import json
import math
import os
import threading
import time
import uuid
from datetime import timedelta
from queue import Empty, SimpleQueue

from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Expression
from llm.providers import ClientError, Completion, ProviderError, RetryableError, provider_for
from llm.services.cache import cache_key, response_cache_lookup, response_cache_store_many
from llm.services.engine import batch_run_claim, batch_run_fail, batch_run_finish
from llm.services.throttle import SlotLease, request_with_retries

from ...models import ItemStatus, Run, RunItem, RunKind, RunPhase, RunStatus

# How often a chunk that wants more threads looks for a slot another chunk has freed.
SLOT_WAIT_SECONDS = 0.02
# ... and how often at the least, while every slot stays taken.
SLOT_WAIT_MAX_SECONDS = 0.16
# See chunk_size: a chunk of EVAL_CHUNK_SIZE items for each this many slots of the cap.
CHUNK_SLOTS = 16
# A chunk runs one thread more than the slots it holds for each this many slots: while a thread
# stores the reply it has just received, a spare thread sends the next request in its slot.
SLOTS_PER_SPARE_THREAD = 4


def claimable_items() -> Q:
    """A pending item no live chunk works on: never claimed, released, or claimed by a chunk
    that has not renewed its claim for EVAL_STALL_SECONDS (its worker died)."""
    expired = timezone.now() - timedelta(seconds=settings.EVAL_STALL_SECONDS)
    return Q(status=ItemStatus.PENDING) & (Q(claim_token="") | Q(claimed_at__isnull=True) | Q(claimed_at__lt=expired))


def run_execute(*, run_id: int) -> None:
    """Fan a run's pending items out in chunks. Also resumes a run whose worker died.

    Items a live chunk has claimed are left out, so a redelivered fan-out (or a resume
    while chunks still work) sends nothing twice.
    """
    claimed = batch_run_claim(run_model=Run, run_id=run_id) is not None
    run = Run.objects.get(pk=run_id)
    if not claimed and run.status != RunStatus.RUNNING:
        return
    pending = list(run.items.filter(claimable_items()).order_by("id").values_list("id", flat=True))
    if not pending:
        run_finish(run_id)
        return
    from ...tasks import run_chunk_task

    size = chunk_size(run.model)
    for start in range(0, len(pending), size):
        run_chunk_task.delay(run_id, pending[start : start + size])


def chunk_size(model) -> int:
    """EVAL_CHUNK_SIZE items per CHUNK_SLOTS slots of the model's cap (at least EVAL_CHUNK_SIZE).

    A chunk's threads then send about as many rounds of requests whatever the cap, so a large
    cap does not pay a chunk's start-up and its tail (its last requests, while the next chunk
    starts) every few rounds, and a chunk lasts about as long as at a small cap, well within
    the task time limit.
    """
    return settings.EVAL_CHUNK_SIZE * max(1, model.max_concurrency // CHUNK_SLOTS)


def run_finish(run_id: int) -> None:
    """Mark a run done once nothing is pending (only a running run: a cancel stays a cancel)."""
    batch_run_finish(run_model=Run, run_id=run_id)


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
    claimed = RunItem.objects.filter(claimable_items(), run_id=run_id, pk__in=item_ids).update(
        claim_token=token, claimed_at=timezone.now()
    )
    if not claimed:
        run_finish(run_id)
        return
    try:
        _run_claimed(run, token)
    finally:
        run_claims_release(token=token)
    run_finish(run_id)


def run_claims_release(*, token: str) -> int:
    """Free the pending items a chunk claimed (done and failed items keep their token for the record)."""
    return RunItem.objects.filter(claim_token=token, status=ItemStatus.PENDING).update(claim_token="", claimed_at=None)


def _claimed_items(token: str, ids: list[int] | None = None) -> list[RunItem]:
    items = RunItem.objects.filter(claim_token=token, status=ItemStatus.PENDING)
    if ids is not None:
        items = items.filter(pk__in=ids)
    return list(
        items.select_related("expression__theme", "source_item", "source_item_b")
        .prefetch_related("expression__traits")
        .order_by("id")
    )


def _claimable_ids(run_id: int, limit: int) -> list[int]:
    return list(
        RunItem.objects.filter(claimable_items(), run_id=run_id).order_by("id").values_list("id", flat=True)[:limit]
    )


def run_items_claim_more(*, run_id: int, token: str, limit: int, share: float = 1.0) -> list[RunItem]:
    """Claim up to ``limit`` more of a run's claimable items for a live chunk (lowest ids first).

    Once fewer than ``limit`` are left, only ``share`` of them (at least one): the chunk's part of
    the model's slots. The chunks working a run then run out at about the same moment, instead
    of one holding the last rounds while the others' slots go idle.

    The UPDATE re-checks that each item is still claimable, so two chunks claiming at the same
    moment split the items between them and never share one. A chunk that lost every item of its
    pick to another looks again: only a run with nothing left to claim returns none (the chunk
    then stops claiming, and would end early with the rest of the run still waiting)."""
    while True:
        ids = _claimable_ids(run_id, limit)
        if not ids:
            return []
        if len(ids) < limit:
            ids = ids[: max(1, math.ceil(len(ids) * share))]
        claimed = RunItem.objects.filter(claimable_items(), pk__in=ids).update(
            claim_token=token, claimed_at=timezone.now()
        )
        if claimed:
            return _claimed_items(token, ids)


def _run_claimed(run: Run, token: str) -> None:
    items = _claimed_items(token)
    try:
        context = _RunContext(run, claim_token=token)
    except ProviderError as exc:
        # The model cannot be reached at all (say, its API key variable is unset): no item can succeed.
        batch_run_fail(run_model=Run, run_id=run.pk, error=str(exc)[:2000])
        return
    context.prepare(items)
    # Cached items first, together: a rerun then needs no slot, no thread and no model loaded.
    queue = collections.deque(context.process_cached(items))
    if not queue:
        return
    _model_warm_up(run, context.provider)
    workers = max(1, min(run.model.max_concurrency, len(queue)))
    if workers == 1:
        lease = SlotLease(run.model)
        context.lease_add(lease)
        try:
            context.work(queue, close_connections=False)
        finally:
            lease.release()
        return
    # A thread starts only once the chunk holds a slot for it, so the threads (and their
    # database connections) never outnumber the slots this chunk holds: chunks running at
    # once in other processes or on other machines share the cap without a crowd of
    # threads each polling for a slot and each holding a connection.
    threads: list[threading.Thread] = []
    leases: list[SlotLease] = []
    SlotLease(run.model).slots_ensure()
    share = _process_share(workers)
    wait = SLOT_WAIT_SECONDS
    try:
        while queue and len(leases) < workers and not context.cancelled():
            if len(leases) >= share:
                # Past this process's share, take a slot only after a pause: a chunk of the
                # worker's other processes takes its share at once, so the cap's requests (and
                # the client's CPU per request) spread over the processes instead of crowding
                # one interpreter; alone, the chunk still reaches the cap within a moment.
                time.sleep(SLOT_WAIT_SECONDS)
            lease = SlotLease(run.model)
            if not lease.try_acquire():
                # Every slot is taken, most likely for as long as the other chunks have work: look
                # again less and less often (each look is a query), up to SLOT_WAIT_MAX_SECONDS.
                time.sleep(wait)
                wait = min(2 * wait, SLOT_WAIT_MAX_SECONDS)
                continue
            wait = SLOT_WAIT_SECONDS
            leases.append(lease)
            context.lease_add(lease)
            while len(threads) < len(leases) + len(leases) // SLOTS_PER_SPARE_THREAD:
                thread = threading.Thread(target=context.work, args=(queue,), name=f"run{run.pk}-{len(threads)}")
                threads.append(thread)
                thread.start()
    finally:
        for thread in threads:
            thread.join()
        for lease in leases:
            lease.release()


def _process_share(workers: int) -> int:
    """This process's even share of a chunk's threads among the worker's pool processes
    (Celery's default pool size is the number of cores); all of them outside a worker."""
    from celery import current_app

    if current_app.conf.task_always_eager:
        return workers
    processes = current_app.conf.worker_concurrency or os.cpu_count() or 1
    return max(1, -(-workers // processes))


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
        from ...prompts import render

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
        # The slots this chunk holds, free for a request: a thread takes one for each request (not
        # for the whole chunk), so a thread storing a reply leaves its slot to the next request.
        self._leases: SimpleQueue[SlotLease] = SimpleQueue()
        self._leases_lock = threading.Lock()
        self._leases_held = 0
        self._threads_working = 0
        self._fingerprints: set[str] = set(run.reproducibility.get("fingerprints", []))
        self.shot_pool = _classification_pool(run) if run.kind == RunKind.CLASSIFICATION else None
        self._prepared: dict[int, tuple] = {}
        self._cached: dict = {}
        # A chunk whose queue runs low claims more of the run's items rather than ending: its
        # threads keep their slots, connections and leases, and the run does not dip while the
        # next chunk's task starts and ramps up (both pool processes' first chunks tend to end
        # together). It stops claiming well within the task's time limit; the fan-out's later
        # chunks then find what is left.
        self._started = time.monotonic()
        self._claim_until = self._started + settings.CELERY_TASK_SOFT_TIME_LIMIT / 4
        self._claim_lock = threading.Lock()
        self._claims_exhausted = not claim_token
        # A local model answers several items in one batch; an endpoint one item a request.
        self._largest_batch = settings.EVAL_LOCAL_BATCH if hasattr(self.provider, "complete_batch") else 1
        self._claim_size = max(2 * run.model.max_concurrency, self._largest_batch)

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

    def lease_add(self, lease: SlotLease) -> None:
        """A slot the chunk has taken, for its threads' requests."""
        with self._leases_lock:
            self._leases_held += 1
            self._leases.put(lease)

    def _lease_take(self) -> SlotLease:
        return self._leases.get()

    def _lease_return(self, lease: SlotLease) -> None:
        self._leases.put(lease)

    def _lease_spare_release(self) -> None:
        """Free a slot for other chunks once fewer threads work than the chunk holds slots: a
        thread that has run out of items frees one now, not when the chunk's last request ends.
        Each working thread holds at most one slot, so one is idle whenever more are held."""
        with self._leases_lock:
            self._threads_working -= 1
            if self._leases_held <= self._threads_working:
                return
            try:
                lease = self._leases.get_nowait()
            except Empty:
                return
            self._leases_held -= 1
        lease.release()

    def work(self, queue: collections.deque, *, close_connections: bool = True) -> None:
        """Take items until none is left. A thread keeps its database connection from item to
        item (per-item setup would cost more than the work); a slot it takes for each request."""
        with self._leases_lock:
            self._threads_working += 1
        try:
            # Connected before the first request, not while storing its reply: the chunk's first
            # replies all arrive together, and threads each opening a connection then leave their
            # slots idle for a round (the spare threads cover only a few).
            connection.ensure_connection()
            batch_size = 1
            while not self.cancelled():
                batch = []
                while len(batch) < batch_size:
                    try:  # the chunk's other threads take items from the same queue meanwhile
                        batch.append(queue.popleft())
                    except IndexError:
                        break
                if not batch:
                    if self.claim_more(queue, wait=True):
                        continue
                    break
                self.claim_more(queue, wait=False)
                if len(batch) == 1:
                    self.process(batch[0])
                else:
                    self.process_batch(batch)
                # A local model's first reply comes alone and each batch doubles up to EVAL_LOCAL_BATCH:
                # the run page then counts items (and has an ETA) after one reply's time, not a
                # whole batch's (a first batch of 8 left it at 0% for minutes, then at 100%).
                batch_size = min(self._largest_batch, batch_size * 2)
        finally:
            self._lease_spare_release()
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
            if item.source_item_b_id:
                # Pairwise: run A's explanation first, or run B's when the item is the swapped order.
                pair = (item.source_item.response, item.source_item_b.response)
                values["first"], values["second"] = pair[::-1] if item.swapped else pair
        if self.run.kind == RunKind.CLASSIFICATION:
            from ...prompts import classification_messages, gold_answer, select_shots

            shots = select_shots(
                self.shot_pool, expression.pk, seed=self.params.get("seed", 0), item_text=expression.text
            )
            gold = gold_answer(self.run.strategy, expression) or ""
            return classification_messages(self.run.prompt.messages, expression.text, shots), gold
        return self.render(self.run.prompt.messages, **values), gold

    def prepare(self, items: list[RunItem]) -> None:
        """Build every item's messages and look the items up in the cache with one query."""
        prepared = {}
        for item in items:
            messages, gold = self.messages_for(item)
            prepared[item.pk] = (messages, gold, cache_key(self.model, messages, self.params))
        self._cached.update(response_cache_lookup([key for _, _, key in prepared.values()]))
        self._prepared.update(prepared)

    def claim_more(self, queue: collections.deque, *, wait: bool) -> bool:
        """Top the queue up with more of the run's items; whether the queue has any now.

        Without ``wait``, only when no other thread of the chunk is already at it (the caller
        still has an item to work on), and only once the queue holds less than half a round of
        the chunk's slots: a chunk sitting on rounds of items at the end of a run keeps them from
        the slots of chunks that have run out. Cached items are written at once, as at the
        chunk's start."""
        enough = 1 if wait else max(1, self._largest_batch // 2, self._leases_held // 2)
        if len(queue) >= enough or self._claims_exhausted:
            return bool(queue)
        if not self._claim_lock.acquire(blocking=wait):
            return True
        try:
            while len(queue) < enough:
                if self._claims_exhausted or time.monotonic() > self._claim_until or self.cancelled():
                    break
                items = run_items_claim_more(
                    run_id=self.run.pk,
                    token=self.claim_token,
                    limit=self._claim_size,
                    share=min(1.0, self._leases_held / max(1, self.model.max_concurrency)),
                )
                if not items:
                    self._claims_exhausted = True
                    break
                self.prepare(items)
                queue.extend(self.process_cached(items))
            return bool(queue)
        finally:
            self._claim_lock.release()

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
        self._write(
            item,
            messages,
            gold,
            completion,
            cached=cached is not None,
            attempts=attempts,
            started=started,
            cache_as=None if cached is not None else key,
        )

    def process_batch(self, items: list[RunItem]) -> None:
        """A local model generates several uncached items in one padded batch.

        Each item is stored as soon as its own reply has ended (the provider says so during the
        generation), so progress moves within a batch; its latency runs from the batch's start to
        the end of its own reply, the time a request of its own would have waited in the batch."""
        fresh = []
        for item in items:
            if self._cached.get(self._prepared[item.pk][2]) is not None:
                self.process(item)
            else:
                fresh.append(item)
        if not fresh:
            return
        started = time.monotonic()
        written: set[int] = set()

        def store(index: int, completion: Completion) -> None:
            item = fresh[index]
            if item.pk in written:
                return
            written.add(item.pk)
            messages, gold, key = self._prepared[item.pk]
            self._write(item, messages, gold, completion, cached=False, attempts=1, started=started, cache_as=key)

        lease = self._lease_take()
        try:
            lease.ensure()
            completions = self.provider.complete_batch(
                [self._prepared[item.pk][0] for item in fresh],
                temperature=self.params.get("temperature", 0.0),
                max_tokens=self.params.get("max_tokens", 150),
                seed=self.params.get("seed"),
                top_logprobs=self.params.get("top_logprobs"),
                on_done=store,
            )
        except ProviderError:
            completions = None
        finally:
            self._lease_return(lease)
        if completions is None:
            for item in fresh:  # one at a time, so one bad conversation fails alone
                if item.pk not in written:
                    self.process(item)
            return
        # A provider that reports nothing during the batch: its items end with it.
        for index, (_item, completion) in enumerate(zip(fresh, completions, strict=True)):
            store(index, completion)

    def _write(
        self,
        item,
        messages,
        gold,
        completion: Completion,
        *,
        cached: bool,
        attempts: int,
        started: float,
        cache_as: str | None = None,
    ) -> None:
        """Store an item's result (and its response in the cache under ``cache_as``) before the
        thread takes its next item, so a killed worker loses at most the requests in flight and the
        replies being stored."""
        if self.run.kind == RunKind.JUDGE and not item.source_item_b_id:
            from ...scoring import compact_logprobs

            completion.logprobs = compact_logprobs(completion.logprobs)
        fields = self._result_fields(
            item, gold, completion, messages, cached=cached, attempts=attempts, started=started
        )
        # Token totals are summed from the items (see run_progress): one shared
        # counter row updated by every thread would serialise them on its lock.
        # One transaction, so one commit (a WAL flush on PostgreSQL) per item rather than two;
        # each thread writes its own item, in parallel with the others.
        with transaction.atomic():
            if cache_as:
                response_cache_store_many([(cache_as, completion)])
            written = RunItem.objects.filter(pk=item.pk, status=ItemStatus.PENDING).update(**fields)
        if written and not cached and completion.fingerprint and completion.fingerprint not in self._fingerprints:
            self._record_fingerprint(completion.fingerprint)

    def process_cached(self, items: list[RunItem]) -> list[RunItem]:
        """Write the items whose reply is cached, in one transaction and without a slot (no
        request goes out); return the others."""
        fresh = []
        with transaction.atomic():
            for item in items:
                messages, gold, key = self._prepared[item.pk]
                cached = self._cached.get(key)
                if cached is None:
                    fresh.append(item)
                    continue
                fields = self._result_fields(
                    item, gold, Completion(**cached), messages, cached=True, attempts=0, started=time.monotonic()
                )
                RunItem.objects.filter(pk=item.pk, status=ItemStatus.PENDING).update(**fields)
        return fresh

    def _result_fields(
        self, item, gold, completion: Completion, messages, *, cached: bool, attempts: int, started: float
    ) -> dict:
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
            "finish_reason": completion.finish_reason[:32],
            "refusal": completion.refusal,
        }
        if self.run.kind == RunKind.JUDGE and item.source_item_b_id:
            from ...scoring import parse_pairwise_choice

            position = parse_pairwise_choice(completion.text)
            fields["score"] = position
            # The run preferred: position 1 shows run A unless the item is the swapped order.
            fields["prediction"] = "" if position is None else ("a" if (position == 1) != item.swapped else "b")
        elif self.run.kind == RunKind.JUDGE:
            fields.update(judge_reading_fields(completion))
        elif self.run.kind == RunKind.CLASSIFICATION:
            from ...scoring import score_classification

            prediction, correct = score_classification(self.run.strategy, completion.text, gold)
            fields.update(prediction=prediction[:100], gold=gold, correct=correct)
        return fields

    def _record_fingerprint(self, fingerprint: str) -> None:
        with self._lock:
            if fingerprint in self._fingerprints:
                return
            self._fingerprints.add(fingerprint)
            if self._provider_facts is None:
                self._provider_facts = self.provider.describe()
        run_fingerprint_record(run_id=self.run.pk, fingerprint=fingerprint, provider_facts=self._provider_facts)

    def _request(self, messages: list[dict]) -> tuple[Completion, int]:
        lease = self._lease_take()
        try:
            return request_with_retries(
                model=self.model,
                lease=lease,
                send=lambda: self.provider.complete(
                    messages,
                    temperature=self.params.get("temperature", 0.0),
                    max_tokens=self.params.get("max_tokens", 150),
                    seed=self.params.get("seed"),
                    top_logprobs=self.params.get("top_logprobs"),
                ),
            )
        finally:
            self._lease_return(lease)


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


def _item_fail(item: RunItem, messages: list[dict], error: str, *, attempts: int) -> None:
    RunItem.objects.filter(pk=item.pk, status=ItemStatus.PENDING).update(
        status=ItemStatus.FAILED, messages=messages, error=error[:2000], attempts=attempts, finished_at=timezone.now()
    )


def judge_reading_fields(completion: Completion) -> dict:
    """What a pointwise judge item stores of its reply's reading: the score or the reason it has
    none, the parser's version, and with log-probabilities the probability-weighted score."""
    from ...scoring import PARSER_VERSION, expected_score, read_judge_score

    reading = read_judge_score(completion.text, finish_reason=completion.finish_reason, refusal=completion.refusal)
    expected = expected_score(completion.logprobs, completion.text, reading)
    return {
        "score": reading.score,
        "score_reason": reading.reason,
        "parser_version": PARSER_VERSION,
        "expected_score": None if expected is None else expected[0],
        "score_probabilities": None if expected is None else expected[1],
    }


def run_item_messages(*, run: Run, items) -> list[list[dict]]:
    """Each item's messages exactly as the engine will send them, without a provider (nothing is
    sent): the cost estimate counts their tokens before the run starts."""
    from ...prompts import render

    context = _RunContext.__new__(_RunContext)
    # What messages_for reads, and nothing else: no provider, no claim, no lock.
    context.run, context.params, context.render = run, run.params, render
    context.shot_pool = _classification_pool(run) if run.kind == RunKind.CLASSIFICATION else None
    return [context.messages_for(item)[0] for item in items]


def _classification_pool(run: Run) -> list:
    """The gold-labelled expressions of the dataset that 3-shot demonstrations are drawn from."""
    from ...prompts import shot_pool

    candidates = Expression.objects.filter(dataset=run.dataset).select_related("theme").prefetch_related("traits")
    return shot_pool(run.strategy, candidates.order_by("id"))
