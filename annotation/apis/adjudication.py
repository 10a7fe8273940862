"""Placeholder: being written."""

from .workflow_stubs import _Todo

AdjudicationListApi = AdjudicationResolveApi = ItemHistoryApi = _Todo
