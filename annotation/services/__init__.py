"""Writes to the annotation app. Views, the API, the CLI and Celery tasks call these."""

from .corpus import (
    dataset_create,
    dataset_delete,
    dataset_update,
    expression_create,
    expression_delete,
    expression_update,
)
from .demo import DEMO_CSV, DEMO_DATASET_NAME, DemoAccount, demo_accounts_ensure, demo_dataset_load
from .imports import (
    EXPORT_FORMATS,
    KNOWN_FIELDS,
    OPTIONAL_FIELDS,
    PREVIEW_ROWS,
    REQUIRED_FIELDS,
    SUPPORTED_EXTENSIONS,
    ExportError,
    ImportJobStateError,
    ImportReport,
    ImportValidationError,
    RowError,
    dataset_export,
    expression_import,
    import_job_cancel,
    import_job_confirm,
    import_job_create,
    import_job_retarget,
    import_job_run,
    parse_column_map,
    render_message,
)
from .review import (
    ConflictError,
    Labels,
    adjudication_remove,
    adjudication_resolve,
    assignment_draft_save,
    assignment_labels,
    assignment_skip,
    assignment_submit,
    item_status_refresh,
    suggested_codes,
    version_freeze,
)
from .rounds import round_create, round_lock, round_reopen, suggestion_set_create, suggestion_set_import

__all__ = [
    "ConflictError", "Labels", "adjudication_remove", "adjudication_resolve", "assignment_draft_save",
    "assignment_labels", "assignment_skip", "assignment_submit", "item_status_refresh", "suggested_codes",
    "version_freeze", "round_create", "round_lock", "round_reopen", "suggestion_set_create", "suggestion_set_import",
    "DEMO_CSV", "DEMO_DATASET_NAME", "EXPORT_FORMATS", "KNOWN_FIELDS", "OPTIONAL_FIELDS", "PREVIEW_ROWS", "REQUIRED_FIELDS",
    "SUPPORTED_EXTENSIONS", "DemoAccount", "ExportError", "ImportJobStateError", "ImportReport",
    "ImportValidationError", "RowError", "dataset_create", "dataset_delete", "dataset_export", "dataset_update",
    "demo_accounts_ensure", "demo_dataset_load", "expression_create", "expression_delete", "expression_import",
    "expression_update", "import_job_cancel", "import_job_confirm", "import_job_create", "import_job_retarget", "import_job_run",
    "parse_column_map", "render_message",
]
