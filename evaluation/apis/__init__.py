"""The evaluation REST API under /api/evaluation/ (researchers only): thin views over services and selectors."""

from .registry import ModelListApi, PromptListApi
from .results import ResultsTableApi
from .runs import RunCancelApi, RunDetailApi, RunItemDetailApi, RunItemListApi, RunListApi, RunReportApi, RunResumeApi

__all__ = [
    "ModelListApi",
    "PromptListApi",
    "ResultsTableApi",
    "RunCancelApi",
    "RunDetailApi",
    "RunItemDetailApi",
    "RunItemListApi",
    "RunListApi",
    "RunReportApi",
    "RunResumeApi",
]
