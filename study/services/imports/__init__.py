"""Import a study package (study.json plus images) into a draft study, all or nothing.

The package is read from a folder, a .zip file or uploaded zip bytes (``reading``), validated
whole, every error collected and named by artwork and field (``validation``), and only then
written in one transaction (``writing``). Image files written before a failure are deleted
again, so a refused package leaves neither rows nor files behind.
"""

from .reading import PACKAGE_FILE, StudyImportError, package_json_read, package_open_checked
from .validation import CONSENT_TEXT_MAX, MAX_SMALLINT, RESERVED_SLUGS, PackageChecker
from .writing import IMPORT_IDEMPOTENCY_SCOPE, study_import

__all__ = [
    "CONSENT_TEXT_MAX",
    "IMPORT_IDEMPOTENCY_SCOPE",
    "MAX_SMALLINT",
    "PACKAGE_FILE",
    "PackageChecker",
    "RESERVED_SLUGS",
    "StudyImportError",
    "package_json_read",
    "package_open_checked",
    "study_import",
]
