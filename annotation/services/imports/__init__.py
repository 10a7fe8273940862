"""Files brought into the annotation app: the corpus, a model's suggestions, labels made elsewhere.

``expressions`` reads a corpus file into a dataset, ``jobs`` previews one for a person to confirm,
``suggestions`` attaches a model's traits, ``annotations`` brings in labels made outside VIVID Studio;
``taxonomy`` is how all of them read trait and theme names. The table reader and its messages are
``core.tables``.
"""

from .annotations import (
    MESSAGES,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    AnnotationRowError,
    AnnotationsImportResult,
    annotations_import,
)
from .expressions import (
    KNOWN_FIELDS,
    OPTIONAL_FIELDS,
    PREVIEW_ROWS,
    REQUIRED_FIELDS,
    expression_import,
    parse_column_map,
)
from .jobs import (
    IMPORT_JOB_IDEMPOTENCY_SCOPE,
    ImportJobStateError,
    import_job_cancel,
    import_job_confirm,
    import_job_create,
    import_job_retarget,
    import_job_run,
)
from .suggestions import SUGGESTION_SET_IDEMPOTENCY_SCOPE, suggestion_set_import
from .taxonomy import parse_traits, theme_tokens, trait_tokens, unknown_trait_params

__all__ = [
    "AnnotationRowError",
    "AnnotationsImportResult",
    "IMPORT_JOB_IDEMPOTENCY_SCOPE",
    "ImportJobStateError",
    "KNOWN_FIELDS",
    "MESSAGES",
    "OPTIONAL_COLUMNS",
    "OPTIONAL_FIELDS",
    "PREVIEW_ROWS",
    "REQUIRED_COLUMNS",
    "REQUIRED_FIELDS",
    "SUGGESTION_SET_IDEMPOTENCY_SCOPE",
    "annotations_import",
    "expression_import",
    "import_job_cancel",
    "import_job_confirm",
    "import_job_create",
    "import_job_retarget",
    "import_job_run",
    "parse_column_map",
    "parse_traits",
    "suggestion_set_import",
    "theme_tokens",
    "trait_tokens",
    "unknown_trait_params",
]
