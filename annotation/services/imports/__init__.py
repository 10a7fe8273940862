"""Files brought into the annotation app: the corpus, a model's suggestions, labels made elsewhere.

``expressions`` reads a corpus file into a dataset, ``jobs`` previews one for a person to confirm,
``suggestions`` attaches a model's traits, ``annotations`` brings in labels made outside VIVID Studio;
``taxonomy`` is how all of them read trait and theme names. The table reader and its messages are
``core.tables``.
"""

from core.tables import ImportReport, ImportValidationError, RowError

from .annotations import AnnotationsImportResult, annotations_import
from .expressions import (
    KNOWN_FIELDS,
    OPTIONAL_FIELDS,
    PREVIEW_ROWS,
    REQUIRED_FIELDS,
    expression_import,
    parse_column_map,
)
from .jobs import (
    ImportJobStateError,
    import_job_cancel,
    import_job_confirm,
    import_job_create,
    import_job_retarget,
    import_job_run,
)
from .suggestions import suggestion_set_import
from .taxonomy import parse_traits

__all__ = [
    "KNOWN_FIELDS",
    "OPTIONAL_FIELDS",
    "PREVIEW_ROWS",
    "REQUIRED_FIELDS",
    "AnnotationsImportResult",
    "ImportJobStateError",
    "ImportReport",
    "ImportValidationError",
    "RowError",
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
]
