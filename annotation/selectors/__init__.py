"""Reads of the annotation app."""

from .corpus import *  # noqa: F403
from .corpus import __all__ as _corpus_all
from .workflow import *  # noqa: F403
from .workflow import __all__ as _workflow_all

__all__ = [*_corpus_all, *_workflow_all]
