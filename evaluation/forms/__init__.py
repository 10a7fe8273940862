"""Forms of the evaluation pages, one module per feature; the names callers use are re-exported here."""

from .prompts import PromptAddForm
from .report import JudgeRepeatForm
from .runs import (
    RUN_FORMS,
    ClassificationRunForm,
    GenerationRunForm,
    JudgeRunForm,
    ResultsFilterForm,
    RunImportForm,
    RunRerunForm,
)

__all__ = [
    "RUN_FORMS",
    "ClassificationRunForm",
    "GenerationRunForm",
    "JudgeRepeatForm",
    "JudgeRunForm",
    "PromptAddForm",
    "ResultsFilterForm",
    "RunImportForm",
    "RunRerunForm",
]
