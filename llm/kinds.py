"""The kinds of work on the batch-run engine, registered by the apps that define them.

The engine (llm.services.engine) claims, heartbeats, cancels, resumes and finishes a run of
any kind through its ``BatchRun`` and ``BatchItem`` fields; what a kind adds is how its run is
queued, which of its fields name models, and (when its items record one reply each) where a
model's reported usage can be read to calibrate token estimates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.utils.module_loading import import_string


@dataclass(frozen=True)
class WorkKind:
    label: str
    run_model: type
    item_model: type
    # The dotted path of the function that queues the run's first task, given the run's id (called
    # after the transaction that queued the run commits); looked up at each call, so the kind's
    # module stays the one place that says how its runs are queued.
    enqueue: str
    # The run's ForeignKeys to llm.ModelConfig: how the models page counts each model's runs.
    model_fields: tuple[str, ...] = ()
    # (model, run_kind) -> [(messages, reported input tokens), ...], latest first: one request per item.
    calibration_samples: Callable[..., list[tuple[list[dict], int]]] | None = None
    # Why a finished run failed although its items finished (None: it is done).
    finish_error: Callable[[int], str] = field(default=lambda run_id: "")


_KINDS: dict[type, WorkKind] = {}


def work_kind_register(kind: WorkKind) -> None:
    _KINDS[kind.run_model] = kind


def work_kind_of(run_model: type) -> WorkKind:
    return _KINDS[run_model]


def work_kind_enqueue(kind: WorkKind, run_id: int) -> None:
    import_string(kind.enqueue)(run_id)


def work_kinds() -> list[WorkKind]:
    return list(_KINDS.values())
