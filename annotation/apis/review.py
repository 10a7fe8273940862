"""Placeholder: being written."""

from .workflow_stubs import _Todo

AssignmentListApi = AssignmentDetailApi = AssignmentSubmitApi = _Todo
