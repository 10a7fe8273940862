"""Placeholder: being written."""

from .workflow_stubs import _Todo

RoundListApi = RoundDetailApi = RoundLockApi = VersionListApi = VersionDetailApi = VersionExportApi = SuggestionImportApi = _Todo
