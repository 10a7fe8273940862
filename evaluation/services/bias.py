"""Writes of the judge bias diagnostics: a judge run's paraphrase runs, and pairwise judge runs.

Both are ordinary judge runs on the run engine (queued, fanned out in chunks, resumable): a
paraphrase run is the same judge, strategy, seed and generation run with another wording of the
prompt; a pairwise run asks, for each idiom both generation runs explained, which of the two
explanations is better, once in each order.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.services.idempotency import idempotent_create
from llm.guard import model_refusal
from llm.models import ModelConfig
from llm.services import CostNotConfirmed

from ..models import ItemStatus, PromptKind, PromptTemplate, Run, RunItem, RunKind, RunStatus
from ..prompts import JUDGE_STRATEGIES, PAIRWISE
from .runs import JUDGE_DEFAULTS, RUN_IDEMPOTENCY_SCOPE, run_execute_enqueue, run_reproducibility
from .runs.cost import run_cost_estimate, run_start

# A paraphrase run that ended this way is started again rather than reused.
_ABANDONED = (RunStatus.FAILED, RunStatus.CANCELLED)


def paraphrase_prompts(*, strategy: str):
    """The built-in paraphrases of a strategy's prompt, the newest version of each."""
    latest = {}
    for prompt in PromptTemplate.objects.filter(kind=PromptKind.JUDGE, paraphrase_of=strategy, builtin=True).order_by(
        "created_at", "pk"
    ):
        latest[prompt.name] = prompt
    return sorted(latest.values(), key=lambda prompt: prompt.name)


@transaction.atomic
def judge_paraphrases_start(
    *,
    judge: Run,
    prompts: list[PromptTemplate] | None = None,
    user=None,
    idempotency_key: str | None = None,
    confirm_cost: bool = False,
) -> list[Run]:
    """Judge ``judge``'s generation run again with each of ``prompts`` (default: the three built-in
    paraphrases of its strategy), same model, seed and limit. A prompt that already has a live or
    finished run in the group gets that run back instead of a second one.

    Each run is estimated like any run (CostNotConfirmed above EVAL_COST_CONFIRM_USD without
    ``confirm_cost``); all of them start, or none."""
    if judge.kind != RunKind.JUDGE or judge.strategy not in JUDGE_STRATEGIES:
        raise ValidationError({"run": _("run #%(id)s is not a pointwise judge run") % {"id": judge.pk}})
    if prompts is None:
        prompts = paraphrase_prompts(strategy=judge.strategy)
    if not prompts:
        raise ValidationError({"prompts": _("no paraphrase of the %(strategy)s prompt") % {"strategy": judge.strategy}})
    runs = []
    for prompt in prompts:
        existing = (
            Run.objects.filter(
                kind=RunKind.JUDGE,
                source_run_id=judge.source_run_id,
                model_id=judge.model_id,
                strategy=judge.strategy,
                prompt=prompt,
                params__seed=judge.params.get("seed"),
            )
            .exclude(status__in=_ABANDONED)
            .order_by("-pk")
            .first()
        )
        if existing is not None:
            existing.idempotent_repeat = True
            runs.append(existing)
            continue
        runs.append(
            run_start(
                confirm_cost=confirm_cost,
                kind=RunKind.JUDGE,
                model=judge.model,
                prompt_name=judge.strategy,
                source_run=judge.source_run,
                params=judge.params,
                limit=judge.limit,
                user=user,
                # One key per wording, still within the key's 64 characters.
                idempotency_key=f"{idempotency_key[:50]}-{prompt.pk}" if idempotency_key else None,
                prompt=prompt,
            )
        )
    return runs


def _pairwise_prompt() -> PromptTemplate:
    prompt = (
        PromptTemplate.objects.filter(kind=PromptKind.JUDGE, name=PAIRWISE).order_by("-builtin", "-created_at").first()
    )
    if prompt is None:
        raise ValidationError({"prompt": _("no judge prompt named '%(name)s'") % {"name": PAIRWISE}})
    return prompt


def pairwise_run_start(
    *,
    run_a: Run,
    run_b: Run,
    model: ModelConfig,
    params: dict | None = None,
    limit: int | None = None,
    user=None,
    idempotency_key: str | None = None,
    confirm_cost: bool = False,
) -> Run:
    """A pairwise judge run: for each idiom both generation runs explained, the judge chooses the
    better explanation twice, A shown first and then B shown first (position swap).

    Estimated like any run: above EVAL_COST_CONFIRM_USD without ``confirm_cost`` it raises
    CostNotConfirmed, and the run and its items roll back (nothing is queued)."""
    with transaction.atomic():
        run = idempotent_create(
            scope=RUN_IDEMPOTENCY_SCOPE,
            key=idempotency_key,
            user=user,
            model=Run,
            create=lambda: _pairwise_create(
                run_a=run_a, run_b=run_b, model=model, params=params, limit=limit, user=user
            ),
        )
        if getattr(run, "idempotent_repeat", False):
            return run
        estimate = run_cost_estimate(run=run)
        if estimate["needs_confirmation"] and not confirm_cost:
            raise CostNotConfirmed(estimate)
        estimate["confirmed"] = bool(estimate["needs_confirmation"] and confirm_cost)
        Run.objects.filter(pk=run.pk).update(estimate=estimate)
        run.estimate = estimate
    return run


@transaction.atomic
def _pairwise_create(*, run_a, run_b, model, params, limit, user) -> Run:
    for field, run in (("run_a", run_a), ("run_b", run_b)):
        if run.kind != RunKind.GENERATION:
            raise ValidationError({field: _("run #%(id)s is not a generation run") % {"id": run.pk}})
    if run_a.pk == run_b.pk:
        raise ValidationError({"run_b": _("compare two different generation runs")})
    if limit is not None and limit < 1:
        raise ValidationError({"limit": _("at least 1")})
    refusal = model_refusal(model)
    if refusal:
        raise ValidationError({"model": refusal})
    prompt = _pairwise_prompt()
    items_b = {
        item.expression_id: item for item in run_b.items.filter(status=ItemStatus.DONE).only("id", "expression_id")
    }
    pairs = [
        (item, items_b[item.expression_id])
        for item in run_a.items.filter(status=ItemStatus.DONE).only("id", "expression_id").order_by("id")
        if item.expression_id in items_b
    ]
    if limit:
        pairs = pairs[:limit]
    if not pairs:
        raise ValidationError(
            {"items": _("runs #%(a)s and #%(b)s explained no idiom in common") % {"a": run_a.pk, "b": run_b.pk}}
        )
    run = Run.objects.create(
        kind=RunKind.JUDGE,
        model=model,
        prompt=prompt,
        dataset=run_a.dataset,
        source_run=run_a,
        source_run_b=run_b,
        strategy=PAIRWISE,
        params={**JUDGE_DEFAULTS, **(params or {})},
        limit=limit,
        created_by=user,
        queued_at=timezone.now(),
        reproducibility=run_reproducibility(model=model, prompt=prompt),
    )
    orders = [(a, b, swapped) for a, b in pairs for swapped in (False, True)]
    RunItem.objects.bulk_create(
        [
            RunItem(run=run, number=n, expression_id=a.expression_id, source_item=a, source_item_b=b, swapped=swapped)
            for n, (a, b, swapped) in enumerate(orders, start=1)
        ],
        batch_size=1000,
    )
    transaction.on_commit(lambda: run_execute_enqueue(run.pk))
    return run
