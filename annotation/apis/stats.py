"""Placeholder: being written."""

from .workflow_stubs import _Todo

RoundStatsApi = _Todo
