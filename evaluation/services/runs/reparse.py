"""Read a judge run's stored replies again with the current score parser: a parser fix reaches old
runs without a single request to the model."""

from collections import Counter

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from llm.providers import Completion
from llm.services.cache import cache_key, response_cache_lookup

from ...models import ItemStatus, Run, RunItem, RunKind, RunStatus
from ...scoring import PARSER_VERSION
from .execution import judge_reading_fields

LOOKUP_BATCH = 500
READING_FIELDS = (
    "score",
    "score_reason",
    "parser_version",
    "expected_score",
    "score_probabilities",
    "finish_reason",
    "refusal",
)


def _cached_replies(run: Run, items: list[RunItem]) -> dict[int, dict]:
    """Each item's reply as the response cache keeps it (its finish_reason and log-probabilities)."""
    keys = {item.pk: cache_key(run.model, item.messages, run.params) for item in items}
    found: dict[str, dict] = {}
    unique = sorted(set(keys.values()))
    for start in range(0, len(unique), LOOKUP_BATCH):
        found.update(response_cache_lookup(unique[start : start + LOOKUP_BATCH]))
    return {pk: found[key] for pk, key in keys.items() if key in found}


def _finish_reason(item: RunItem, cached: dict, max_tokens: int | None) -> str:
    """The stored finish_reason; for a reply stored before it was kept, the cache's, else "length"
    when the reply used every token max_tokens allowed (what a cut looks like in the usage)."""
    reason = item.finish_reason or cached.get("finish_reason") or ""
    if reason or not max_tokens:
        return reason
    used = item.tokens_out or cached.get("tokens_out") or 0
    return "length" if used >= max_tokens else ""


def run_scores_reparse(*, run: Run, dry_run: bool = False, user=None) -> dict:
    """Read every done item of a pointwise judge run again with the current parser and store what
    changed (unless ``dry_run``). Returns the counts: ``n_items``, ``n_changed`` (scores that
    differ), of which ``n_newly_unscored``, ``n_newly_scored`` and ``n_other_value``, then
    ``n_unscored`` and ``n_cut_off`` after the reading, ``n_expected`` (items with a
    probability-weighted score), ``previous_versions`` (items per parser version before) and
    ``parser_version``.

    A run still queued or running is refused: its worker writes the items being read.
    """
    if run.kind != RunKind.JUDGE or run.source_run_b_id:
        raise ValidationError({"run": _("run #%(id)s is not a pointwise judge run") % {"id": run.pk}})
    if run.status in (RunStatus.QUEUED, RunStatus.RUNNING):
        raise ValidationError({"run": _("run #%(id)s is still running; read it again when it ends") % {"id": run.pk}})
    items = list(run.items.filter(status=ItemStatus.DONE).order_by("id"))
    cached = _cached_replies(run, items)
    max_tokens = run.params.get("max_tokens")
    counts: Counter = Counter()
    previous_versions: Counter = Counter()
    changed_items = []
    for item in items:
        previous_versions[str(item.parser_version or 1)] += 1
        entry = cached.get(item.pk, {})
        # Log-probabilities only from the same reply: a cache entry is the reply the item stored.
        logprobs = entry.get("logprobs") if entry.get("text") == item.response else None
        completion = Completion(
            text=item.response,
            logprobs=logprobs,
            finish_reason=_finish_reason(item, entry, max_tokens),
            refusal=item.refusal or entry.get("refusal") or "",
        )
        fields = judge_reading_fields(completion)
        fields.update(finish_reason=completion.finish_reason[:32], refusal=completion.refusal)
        if logprobs is None and fields["score"] == item.score:
            # The log-probabilities are gone from the cache: what was computed from them stands.
            fields.update(expected_score=item.expected_score, score_probabilities=item.score_probabilities)
        if fields["score"] != item.score:
            counts["n_changed"] += 1
            if fields["score"] is None:
                counts["n_newly_unscored"] += 1
            elif item.score is None:
                counts["n_newly_scored"] += 1
            else:
                counts["n_other_value"] += 1
        counts["n_unscored"] += fields["score"] is None
        counts["n_cut_off"] += fields["finish_reason"] == "length"
        counts["n_expected"] += fields["expected_score"] is not None
        if any(getattr(item, name) != value for name, value in fields.items()):
            for name, value in fields.items():
                setattr(item, name, value)
            changed_items.append(item)
    summary = {
        "run": run.pk,
        "parser_version": PARSER_VERSION,
        "n_items": len(items),
        "n_changed": counts["n_changed"],
        "n_newly_unscored": counts["n_newly_unscored"],
        "n_newly_scored": counts["n_newly_scored"],
        "n_other_value": counts["n_other_value"],
        "n_unscored": counts["n_unscored"],
        "n_cut_off": counts["n_cut_off"],
        "n_expected": counts["n_expected"],
        "previous_versions": dict(sorted(previous_versions.items())),
        "dry_run": dry_run,
    }
    if dry_run:
        return summary
    with transaction.atomic():
        RunItem.objects.bulk_update(changed_items, READING_FIELDS, batch_size=500)
        run = Run.objects.select_for_update().get(pk=run.pk)
        record = {
            "at": timezone.now().isoformat(),
            "parser_version": PARSER_VERSION,
            "n_changed": summary["n_changed"],
        }
        # Kept on the run: the human report's cache and a reader of the record both see the re-reading.
        run.reproducibility = {**run.reproducibility, "reparsed": [*run.reproducibility.get("reparsed", []), record]}
        run.save(update_fields=["reproducibility"])
    return summary
