"""Import a study package (study.json plus images) into a draft study, all or nothing.

The package is read from a folder, a .zip file or uploaded zip bytes (``reading``), validated
whole, every error collected and named by artwork and field (``validation``), and only then
written in one transaction (``writing``). Image files written before a failure are deleted
again, so a refused package leaves neither rows nor files behind.
"""

from .reading import PACKAGE_FILE, StudyImportError
from .writing import study_import

__all__ = ["PACKAGE_FILE", "StudyImportError", "study_import"]
