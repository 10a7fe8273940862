"""Runs imported from lm-evaluation-harness and Inspect logs of the exported VIVID tasks (``import_run``).

A log becomes a finished run of the version it was exported from: a generation run (the replies
as its items' responses, ready to judge and to score by hand) or a classification run, whose
predictions, gold answers and exact match the app computes itself (evaluation/answers.py); the
harness's own scores are not read. All or nothing: one unmatched or malformed sample and nothing
is written. The same file twice gives the run the first import made.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from annotation.models import DatasetVersion
from llm.models import ModelConfig, Provider
from llm.services.engine import package_versions

from ...harness_logs import HarnessLog, LogError, log_parse
from ...models import ItemStatus, Run, RunItem, RunKind, RunStatus
from ...prompts import CLASSIFICATION_TASKS
from ...scoring import score_classification
from ...selectors.harness import TASKS, HarnessExportError, harness_rows
from ...selectors.prompts import prompt_in_use

# Errors list at most this many samples; the count says how many more.
MAX_LISTED = 20


def _listed(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_LISTED:
        return problems
    return [*problems[:MAX_LISTED], _("and %(n)s more") % {"n": len(problems) - MAX_LISTED}]


def _import_model(log: HarnessLog, *, fallback: str, user) -> ModelConfig:
    """The external model of the log's model name, made on first import."""
    model_id = (log.model or fallback)[:500]
    if not model_id:
        raise ValidationError({"model": _("the log does not name its model: choose one")})
    existing = ModelConfig.objects.filter(provider=Provider.EXTERNAL, model_id=model_id).first()
    if existing is not None:
        return existing
    base = slugify(f"imported-{model_id}")[:90] or "imported"
    name, n = base, 1
    while ModelConfig.objects.filter(name=name).exists():
        n += 1
        name = f"{base}-{n}"
    return ModelConfig.objects.create(
        name=name, provider=Provider.EXTERNAL, model_id=model_id, max_concurrency=1, created_by=user
    )


def _task_of(log: HarnessLog, task: str | None) -> str:
    tasks = sorted({sample.task for sample in log.samples})
    unknown = [name for name in ([task] if task else tasks) if name not in TASKS]
    if unknown:
        raise ValidationError({"task": _("unknown VIVID task %(task)s") % {"task": unknown[0]}})
    if task:
        if task not in tasks:
            raise ValidationError({"task": _("the log has no sample of task %(task)s") % {"task": task}})
        return task
    if len(tasks) > 1:
        raise ValidationError(
            {"task": _("the log holds the tasks %(tasks)s: choose one") % {"tasks": ", ".join(tasks)}}
        )
    if tasks[0] not in TASKS:
        raise ValidationError({"task": _("unknown VIVID task %(task)s") % {"task": tasks[0]}})
    return tasks[0]


def _version_of(log: HarnessLog, samples, version: DatasetVersion | None) -> DatasetVersion:
    names = sorted({sample.version for sample in samples})
    if version is not None:
        wrong = [s for s in samples if s.version != version.name]
        if wrong:
            raise ValidationError(
                {
                    "version": _("%(where)s is from version '%(found)s', not '%(version)s'")
                    % {"where": wrong[0].where, "found": wrong[0].version, "version": version.name}
                }
            )
        return version
    if len(names) > 1:
        raise ValidationError({"version": _("the log mixes the versions %(names)s") % {"names": ", ".join(names)}})
    found = DatasetVersion.objects.filter(name=names[0]).select_related("round__dataset").first()
    if found is None:
        raise ValidationError({"version": _("no frozen version named '%(name)s'") % {"name": names[0]}})
    return found


def run_import(
    *,
    fmt: str,
    data: bytes,
    filename: str,
    version: DatasetVersion | None = None,
    model: ModelConfig | None = None,
    task: str | None = None,
    model_fallback: str = "",
    harness_version: str = "",
    user=None,
) -> Run:
    """A finished run from a harness log, or the run an earlier import of the same file made
    (then ``run.idempotent_repeat`` is set). Raises ValidationError naming every bad sample.

    ``model_fallback`` and ``harness_version`` are what the caller knows beside the file (an lm-eval
    samples file names neither; its results_*.json does)."""
    try:
        log = log_parse(fmt=fmt, data=data, name=filename)
    except LogError as exc:
        raise ValidationError({"file": _listed(exc.problems)}) from None
    log.harness_version = log.harness_version or harness_version
    earlier = _earlier_import(log, task)
    if earlier is not None:
        earlier.idempotent_repeat = True
        return earlier
    run, created = _run_import(
        log,
        fmt=fmt,
        filename=filename,
        version=version,
        model=model,
        task=task,
        model_fallback=model_fallback,
        user=user,
    )
    run.idempotent_repeat = not created
    return run


def _earlier_import(log: HarnessLog, task: str | None) -> Run | None:
    earlier = Run.objects.filter(reproducibility__log_sha256=log.sha256)
    if task:
        # A log of several tasks imports as one run per task.
        earlier = earlier.filter(reproducibility__task=f"vivid_{task}")
    return earlier.order_by("pk").first()


@transaction.atomic
def _run_import(log: HarnessLog, *, fmt, filename, version, model, task, model_fallback, user) -> tuple[Run, bool]:
    task = _task_of(log, task)
    samples = [sample for sample in log.samples if sample.task == task]
    version = _version_of(log, samples, version)
    # Two imports of one file at once: the second waits here, then finds the first one's run.
    DatasetVersion.objects.select_for_update().filter(pk=version.pk).first()
    earlier = _earlier_import(log, task)
    if earlier is not None:
        return earlier, False
    try:
        spec = harness_rows(version=version)[f"vivid_{task}"]
    except HarnessExportError as exc:
        raise ValidationError({"version": str(exc)}) from None
    rows = {row["id"]: row for row in spec["rows"]}
    expressions = dict(version.items.values_list("external_id", "expression_id"))
    problems, seen = [], {}
    for sample in samples:
        if sample.id not in rows:
            problems.append(
                _("%(where)s: id '%(id)s' is not an item of version '%(version)s'")
                % {"where": sample.where, "id": sample.id, "version": version.name}
            )
        elif sample.id in seen:
            problems.append(
                _("%(where)s: id '%(id)s' again (first at %(first)s)")
                % {"where": sample.where, "id": sample.id, "first": seen[sample.id]}
            )
        elif expressions.get(sample.id) is None:
            problems.append(
                _("%(where)s: the item '%(id)s' no longer has its expression")
                % {"where": sample.where, "id": sample.id}
            )
        seen.setdefault(sample.id, sample.where)
    if problems:
        raise ValidationError({"file": _listed(problems)})

    kind_of_prompt, prompt_name, _shots = TASKS[task]
    prompt = prompt_in_use(kind=kind_of_prompt, name=prompt_name)
    if prompt is None:
        raise ValidationError(
            {"prompt": _("no %(kind)s prompt named '%(name)s'") % {"kind": kind_of_prompt, "name": prompt_name}}
        )
    if model is None:
        model = _import_model(log, fallback=model_fallback, user=user)
    classification = task in CLASSIFICATION_TASKS
    kind = RunKind.CLASSIFICATION if classification else RunKind.GENERATION
    params = {**spec["params"], **{k: v for k, v in log.params.items() if k in ("temperature", "seed", "max_tokens")}}
    if "max_gen_toks" in log.params:
        params["max_tokens"] = log.params["max_gen_toks"]
    now = timezone.now()
    run = Run.objects.create(
        kind=kind,
        model=model,
        prompt=prompt,
        dataset=version.round.dataset,
        version=version,
        strategy=task if classification else prompt_name,
        params=params,
        status=RunStatus.DONE,
        created_by=user,
        queued_at=now,
        started_at=now,
        finished_at=now,
        tokens_in=sum(s.tokens_in for s in samples),
        tokens_out=sum(s.tokens_out for s in samples),
        reproducibility={
            "imported": True,
            "harness": log.harness,
            "harness_version": log.harness_version,
            "log_format": fmt,
            "log_file": filename,
            "log_sha256": log.sha256,
            "task": f"vivid_{task}",
            "harness_task": log.task_name,
            "model_name": log.model or model_fallback or model.model_id,
            "model_args": log.model_args,
            "generation_params": log.params,
            "provider": model.provider,
            "model_id": model.model_id,
            "prompt_hash": prompt.content_hash,
            "prompt_reference": prompt.reference,
            # A prompt edited since the export: the log's conversations are not this template's.
            "prompt_matches_export": spec["prompt"]["hash"] == prompt.content_hash,
            "imported_at": now.isoformat(),
            "packages": package_versions(),
        },
    )
    items = []
    for number, sample in enumerate(samples, start=1):
        row = rows[sample.id]
        fields = {}
        if classification:
            prediction, correct = score_classification(task, sample.reply, row["target"])
            fields = {"prediction": prediction[:100], "gold": row["target"], "correct": correct}
        items.append(
            RunItem(
                run=run,
                number=number,
                expression_id=expressions[sample.id],
                status=ItemStatus.DONE,
                messages=sample.messages,
                response=sample.reply,
                finish_reason=sample.finish_reason,
                tokens_in=sample.tokens_in,
                tokens_out=sample.tokens_out,
                cached=False,
                latency_ms=None,
                finished_at=now,
                **fields,
            )
        )
    RunItem.objects.bulk_create(items, batch_size=1000)
    return run, True


__all__ = ["run_import"]
