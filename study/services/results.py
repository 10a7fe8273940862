"""What keeps a study's cached results honest: every service that writes something they read
(participants and their status, assignments, answers, preferences, page times) says so here.

The results, figures and counts are cached under the study's change stamp
(``study.selectors.results``); a change gives the stamp a new value, now and again once the
writer's transaction commits (``core.stamps.stamp_bump``), and the next reader computes afresh.
"""

from contextlib import contextmanager
from contextvars import ContextVar

from core.stamps import stamp_bump

from ..selectors.results import study_results_scope

# The studies changed while a batch of writes runs (synthetic participants): bumped once at its end.
_deferred: ContextVar[set | None] = ContextVar("study_results_deferred", default=None)


def study_results_changed(*, study_id: int) -> None:
    """The study's results, exports and figures must be computed again."""
    deferred = _deferred.get()
    if deferred is not None:
        deferred.add(study_id)
        return
    stamp_bump(scope=study_results_scope(study_id))


@contextmanager
def study_results_changes_deferred():
    """Hold the bumps of the writes inside until the block ends, then bump each study changed once.

    For a writer that makes many changes in a row (a synthetic participant's thirty pages): a
    bump is a write to the shared cache (two, with the one after the commit), and nobody needs
    the results between two pages of the same run. A bump still happens when the block fails.
    """
    outer = _deferred.get()
    changed: set = set()
    token = _deferred.set(changed)
    try:
        yield
    finally:
        _deferred.reset(token)
        for study_id in sorted(changed):
            if outer is not None:
                outer.add(study_id)
            else:
                stamp_bump(scope=study_results_scope(study_id))
