"""Forms of the annotation app, one module per part of the workflow. They validate input only."""

from .corpus import FIELD_LABELS, ExpressionFilterForm, ImportForm, ImportRetargetForm

__all__ = ["FIELD_LABELS", "ExpressionFilterForm", "ImportForm", "ImportRetargetForm"]
