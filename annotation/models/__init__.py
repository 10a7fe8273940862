from .corpus import Dataset, Expression, ExpressionKind, ImportJob, ImportJobStatus, Theme, Trait, normalize_key
from .workflow import (
    UNDECIDED_STATUSES,
    AnnotationRound,
    Assignment,
    AssignmentStatus,
    DatasetVersion,
    DatasetVersionItem,
    ItemStatus,
    LabelChange,
    Provenance,
    RemovalReason,
    RoundItem,
    RoundStatus,
    Suggestion,
    SuggestionSet,
    TraitDecision,
)

__all__ = [
    "AnnotationRound", "Assignment", "AssignmentStatus", "Dataset", "DatasetVersion", "DatasetVersionItem",
    "Expression", "ExpressionKind", "ImportJob", "ImportJobStatus", "ItemStatus", "LabelChange", "Provenance",
    "RemovalReason", "RoundItem", "RoundStatus", "Suggestion", "SuggestionSet", "Theme", "Trait", "TraitDecision",
    "UNDECIDED_STATUSES", "normalize_key",
]
