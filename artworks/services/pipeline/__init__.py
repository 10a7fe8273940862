"""The artwork pipeline of *Pragmatics Meets Culture*: question construction, base and
pragmatic speakers, and the simulated listener (see artworks/models.py)."""

from .lifecycle import (
    DEFAULT_GROUPS,
    PipelineError,
    artwork_run_cancel,
    artwork_run_dispatch,
    artwork_run_estimate,
    artwork_run_execute,
    artwork_run_resume,
    artwork_run_start,
    artwork_run_step,
)

__all__ = [
    "DEFAULT_GROUPS",
    "PipelineError",
    "artwork_run_cancel",
    "artwork_run_dispatch",
    "artwork_run_estimate",
    "artwork_run_execute",
    "artwork_run_resume",
    "artwork_run_start",
    "artwork_run_step",
]
