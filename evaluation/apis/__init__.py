"""The evaluation REST API under /api/evaluation/ (researchers only): thin views over services and selectors."""

from .prompts import PromptListApi
from .report import HumanReportApi
from .results import ResultsTableApi
from .runs import (
    RunCancelApi,
    RunDetailApi,
    RunImportApi,
    RunItemDetailApi,
    RunItemListApi,
    RunListApi,
    RunReportApi,
    RunResumeApi,
)

__all__ = [
    "HumanReportApi",
    "PromptListApi",
    "ResultsTableApi",
    "RunCancelApi",
    "RunDetailApi",
    "RunImportApi",
    "RunItemDetailApi",
    "RunItemListApi",
    "RunListApi",
    "RunReportApi",
    "RunResumeApi",
]
