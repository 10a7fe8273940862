"""Reading a study package: its folder or zip, and the study.json inside it."""

import json

from django.utils.translation import gettext as _

from core.packages import FileRefused, FolderPackage, PackageError, ZipPackage, package_open

PACKAGE_FILE = "study.json"


class StudyImportError(ValueError):
    """The package cannot be imported; nothing was written."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


def package_open_checked(*, source, filename: str) -> FolderPackage | ZipPackage:
    try:
        package = package_open(source=source, markers=(PACKAGE_FILE,), filename=filename)
    except PackageError as exc:
        raise StudyImportError(exc.errors) from None
    if isinstance(package, ZipPackage) and not package.found:
        raise StudyImportError(
            [_("%(file)s: not found at the root of the zip or in its single top-level folder") % {"file": PACKAGE_FILE}]
        )
    return package


def package_json_read(*, package) -> tuple[dict, bytes]:
    try:
        raw = package.read(PACKAGE_FILE)
    except FileRefused as exc:
        raise StudyImportError([exc.message()]) from None
    if raw is None:
        raise StudyImportError([_("%(file)s: not found in the package") % {"file": PACKAGE_FILE}])
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise StudyImportError([_("%(file)s: not UTF-8") % {"file": PACKAGE_FILE}]) from None
    except json.JSONDecodeError as exc:
        raise StudyImportError(
            [_("%(file)s: not valid JSON (%(detail)s)") % {"file": PACKAGE_FILE, "detail": exc}]
        ) from None
    if not isinstance(data, dict):
        raise StudyImportError([_("%(file)s: must hold one JSON object") % {"file": PACKAGE_FILE}])
    return data, raw
