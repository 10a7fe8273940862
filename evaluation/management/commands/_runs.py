"""What the run_* commands share: --wait with a tqdm bar, --inline, and exit codes."""

import time

from celery import current_app
from django.core.management.base import CommandError
from tqdm import tqdm

from evaluation.models import Run, RunStatus
from evaluation.selectors import run_progress

FINISHED = (RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED)

# The run commands skip Django's system checks: the URL check alone imports every view (and
# numpy, scipy and pandas with the statistics pages), seconds of a command that starts a run.
# `manage.py check`, runserver and migrate still run them.
SKIP_SYSTEM_CHECKS: list = []


def add_common_arguments(parser) -> None:
    parser.add_argument("--wait", action="store_true", help="Show a progress bar; exit 0 when the run is done.")
    parser.add_argument(
        "--inline",
        action="store_true",
        help="Execute in this process instead of on a Celery worker (for a machine without a worker).",
    )


def add_cost_argument(parser) -> None:
    parser.add_argument(
        "--confirm-cost",
        action="store_true",
        help="Start the run although its estimated cost is above EVAL_COST_CONFIRM_USD (without it the "
        "command prints the estimate and exits 1).",
    )


def prepare(options) -> None:
    if options.get("inline"):
        # Celery's configuration is not built yet in a fresh command process.
        current_app.conf.task_always_eager = True


def wait_for(command, run: Run, poll: float = 0.2) -> None:
    """Follow a run to its end; a failed or cancelled run ends the command with an error."""
    progress = run_progress(run=run)
    with tqdm(total=progress["n_items"], unit="item", file=command.stderr._out, dynamic_ncols=True) as bar:
        while True:
            run.refresh_from_db()
            progress = run_progress(run=run)
            bar.n = progress["n_done"] + progress["n_failed"]
            bar.set_postfix(
                failed=progress["n_failed"], unscored=progress["n_unscored"], cached=progress["n_cached"], refresh=False
            )
            bar.refresh()
            if run.status in FINISHED:
                break
            time.sleep(poll)
    if run.status != RunStatus.DONE:
        raise CommandError(f"run {run.pk} ended {run.status}{': ' + run.error if run.error else ''}")
    cost = "unknown (price unknown)" if progress["cost"] is None else f"US${progress['cost']:.4f}"
    command.stdout.write(
        f"run {run.pk} done: {progress['n_done']} done, {progress['n_failed']} failed, "
        f"{progress['n_unscored']} unscored, {progress['n_cached']} cached; "
        f"{progress['tokens_in']} tokens in, {progress['tokens_out']} out, cost {cost}"
    )
