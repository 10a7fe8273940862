"""Run lifecycle: create and queue a run, cancel it, resume it, and tell a stalled run from a live one."""

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Dataset, DatasetVersion, Expression
from core.services.idempotency import idempotent_create
from llm.guard import model_refusal
from llm.models import ModelConfig
from llm.services.engine import batch_run_resume, package_versions

from ...models import ItemStatus, PromptKind, PromptTemplate, Run, RunItem, RunKind, RunPhase
from ...prompts import CLASSIFICATION_TASKS, GENERATION_PROMPTS, JUDGE_STRATEGIES
from ...selectors.prompts import prompt_in_use

# Appendix C: generation at temperature 0.7 and 150 tokens; the judge at temperature 0.
GENERATION_DEFAULTS = {"temperature": 0.7, "max_tokens": 150, "seed": 0}
JUDGE_DEFAULTS = {"temperature": 0.0, "max_tokens": 10, "seed": 0}
COT_MAX_TOKENS = 400
# A judge model known to give log-probabilities is asked for the top 20 alternatives of each
# reply token (the most OpenAI allows): the score token's give the probability-weighted score.
JUDGE_TOP_LOGPROBS = 20
CLASSIFICATION_DEFAULTS = {"temperature": 0.0, "max_tokens": 10, "seed": 0}
RUN_IDEMPOTENCY_SCOPE = "evaluation.run"


def _latest_prompt(kind: str, name: str) -> PromptTemplate:
    prompt = prompt_in_use(kind=kind, name=name)
    if prompt is None:
        raise ValidationError({"prompt": _("no %(kind)s prompt named '%(name)s'") % {"kind": kind, "name": name}})
    return prompt


def _judge_prompt(prompt: PromptTemplate) -> PromptTemplate:
    from ...prompts import PLACEHOLDERS, placeholders

    if prompt.kind != PromptKind.JUDGE:
        raise ValidationError({"prompt": _("prompt #%(id)s is not a judge prompt") % {"id": prompt.pk}})
    unknown = placeholders(prompt.messages) - set(PLACEHOLDERS[PromptKind.JUDGE])
    if unknown:
        raise ValidationError(
            {
                "prompt": _("prompt #%(id)s takes {%(names)s}, which a judge run does not fill")
                % {"id": prompt.pk, "names": "}, {".join(sorted(unknown))}
            }
        )
    return prompt


def run_reproducibility(*, model, prompt) -> dict:
    """What a run records to be repeated: the model as configured, the prompt's hash, package versions."""
    return {
        "model_name": model.name,
        "provider": model.provider,
        "model_id": model.model_id,
        "base_url": model.base_url,
        "prompt_hash": prompt.content_hash,
        "prompt_reference": prompt.reference,
        "packages": package_versions(),
    }


def run_create(
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
    idempotency_key: str | None = None,
    prompt: PromptTemplate | None = None,
) -> Run:
    """Create a run and its items, and queue it.

    generation: ``prompt_name`` zero-shot|few-shot over a dataset or a frozen version;
    judge: ``prompt_name`` is the strategy, over the done items of ``source_run``;
    classification: ``prompt_name`` is the task, topic|traits, over items with gold labels.

    A judge run may name its ``prompt`` (a paraphrase of the strategy's): the strategy still decides
    the defaults and groups the run with the strategy's other runs.

    A second request with the same ``idempotency_key`` (a double submit, a retried API call)
    returns the run the first one created, with ``run.idempotent_repeat`` set, and starts nothing.
    """
    run = idempotent_create(
        scope=RUN_IDEMPOTENCY_SCOPE,
        key=idempotency_key,
        user=user,
        model=Run,
        create=lambda: _run_build(
            kind=kind,
            model=model,
            prompt_name=prompt_name,
            dataset=dataset,
            version=version,
            source_run=source_run,
            params=params,
            limit=limit,
            user=user,
            prompt=prompt,
        ),
    )
    return run


@transaction.atomic
def _run_build(*, kind, model, prompt_name, dataset, version, source_run, params, limit, user, prompt=None) -> Run:
    chosen = prompt
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
        prompt = _judge_prompt(chosen) if chosen is not None else _latest_prompt(PromptKind.JUDGE, prompt_name)
        defaults = {**JUDGE_DEFAULTS, "max_tokens": COT_MAX_TOKENS if prompt_name == "cot" else 10}
        if model.supports_logprobs:
            defaults["top_logprobs"] = JUDGE_TOP_LOGPROBS
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
        reproducibility=run_reproducibility(model=model, prompt=prompt),
    )
    if kind == RunKind.JUDGE:
        sources = source_run.items.filter(status=ItemStatus.DONE).order_by("id")
        if limit:
            sources = sources[:limit]
        RunItem.objects.bulk_create(
            [
                RunItem(run=run, number=number, expression_id=s.expression_id, source_item=s)
                for number, s in enumerate(sources, start=1)
            ],
            batch_size=1000,
        )
    else:
        expressions = _run_expressions(dataset=dataset, version=version, kind=kind, task=prompt_name)
        if limit:
            expressions = expressions[:limit]
        RunItem.objects.bulk_create(
            [RunItem(run=run, number=number, expression_id=eid) for number, eid in enumerate(expressions, start=1)],
            batch_size=1000,
        )
    if not run.items.exists():
        raise ValidationError({"items": _("the run would have no items")})
    transaction.on_commit(lambda: run_execute_enqueue(run.pk))
    return run


def run_repeat(*, judge: Run, user=None, idempotency_key: str | None = None, confirm_cost: bool = False) -> Run:
    """Start another judge run like ``judge`` with the next seed of its repeat group, to measure the judge's noise.

    Estimated like any run (a new seed is a new request: nothing comes from the cache); above
    EVAL_COST_CONFIRM_USD without ``confirm_cost`` it raises CostNotConfirmed and starts nothing."""
    from ...selectors.runs import judge_repeat_seed
    from .cost import run_start  # it builds on run_create, here

    return run_start(
        kind=RunKind.JUDGE,
        model=judge.model,
        prompt_name=judge.strategy,
        source_run=judge.source_run,
        params={**judge.params, "seed": judge_repeat_seed(judge=judge)},
        limit=judge.limit,
        user=user,
        idempotency_key=idempotency_key,
        confirm_cost=confirm_cost,
    )


def run_rerun_longer(
    *, run: Run, max_tokens: int, user=None, idempotency_key: str | None = None, confirm_cost: bool = False
) -> Run:
    """Start a pointwise judge run again with a larger ``max_tokens``: the same judge, prompt
    (its wording kept), generation run, seed and limit. For a strategy whose replies the paper's
    limit cuts off. Estimated like any run (each request is new); above EVAL_COST_CONFIRM_USD
    without ``confirm_cost`` it raises CostNotConfirmed and starts nothing."""
    from .cost import run_start  # it builds on run_create, here

    if run.kind != RunKind.JUDGE or run.source_run_b_id:
        raise ValidationError({"run": _("only a pointwise judge run can be run again with a larger limit")})
    current = int(run.params.get("max_tokens") or 0)
    if max_tokens <= current:
        raise ValidationError(
            {"max_tokens": _("a rerun needs more than the run's %(n)s tokens per reply") % {"n": current}}
        )
    return run_start(
        kind=RunKind.JUDGE,
        model=run.model,
        prompt_name=run.strategy,
        prompt=run.prompt,
        source_run=run.source_run,
        params={**run.params, "max_tokens": max_tokens},
        limit=run.limit,
        user=user,
        idempotency_key=idempotency_key,
        confirm_cost=confirm_cost,
    )


def _run_expressions(*, dataset, version, kind, task) -> list[int]:
    if version is not None:
        ids = list(version.items.exclude(expression=None).order_by("id").values_list("expression_id", flat=True))
    else:
        ids = list(dataset.expressions.order_by("id").values_list("id", flat=True))
    if kind == RunKind.CLASSIFICATION and task == "topic" and version is None:
        with_theme = set(Expression.objects.filter(pk__in=ids, theme__isnull=False).values_list("id", flat=True))
        ids = [i for i in ids if i in with_theme]
    return ids


def run_execute_enqueue(run_id: int) -> None:
    from ...tasks import run_execute_task

    run_execute_task.delay(run_id)


def run_resume(*, run: Run, user=None, retry_failed: bool = False) -> Run:
    """Queue a run again on the engine (llm.services.engine.batch_run_resume), clearing its loading
    phase and the claims a dead chunk left behind: only its pending items are sent, the cache covers
    the rest."""

    def release_dead_claims(run: Run) -> None:
        # Judged by this process's EVAL_STALL_SECONDS: the worker that fans out may be configured
        # otherwise. Live chunks renew theirs.
        expired = timezone.now() - timedelta(seconds=settings.EVAL_STALL_SECONDS)
        run.items.filter(status=ItemStatus.PENDING, claimed_at__lt=expired).update(claim_token="", claimed_at=None)

    return batch_run_resume(
        run=run,
        user=user,
        retry_failed=retry_failed,
        reset={"phase": RunPhase.NONE},
        before_enqueue=release_dead_claims,
    )
