"""The artwork pipeline of *Pragmatics Meets Culture*: question construction, base and
pragmatic speakers, and the simulated listener (see artworks/models.py), a kind of work on
the llm app's engine (cancel and resume are the engine's)."""

from .lifecycle import (
    DEFAULT_GROUPS,
    artwork_run_dispatch,
    artwork_run_enqueue,
    artwork_run_estimate,
    artwork_run_execute,
    artwork_run_failed_construction,
    artwork_run_start,
    artwork_run_step,
)

__all__ = [
    "DEFAULT_GROUPS",
    "artwork_run_dispatch",
    "artwork_run_enqueue",
    "artwork_run_estimate",
    "artwork_run_execute",
    "artwork_run_failed_construction",
    "artwork_run_start",
    "artwork_run_step",
]
