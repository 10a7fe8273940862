"""The frozen version as harness tasks: the folder ``export_tasks`` writes, as a zip."""

from django.http import HttpResponseBadRequest
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotation.selectors import version_or_404
from core.decorators import role_required
from core.http import download, file_stem
from core.roles import RESEARCHER

from ..selectors import HARNESS_FORMATS, HarnessExportError, harness_zip


@require_GET
@role_required(RESEARCHER)
def version_tasks(request, pk: int):
    """Researchers only: the tasks carry the gold labels."""
    version = version_or_404(pk)
    fmt = request.GET.get("format", "")
    if fmt not in HARNESS_FORMATS:
        return HttpResponseBadRequest(
            _("Unknown task format “%(format)s”; use ?format=lm-eval or ?format=inspect.") % {"format": fmt},
            content_type="text/plain; charset=utf-8",
        )
    try:
        body = harness_zip(version=version, fmt=fmt)
    except HarnessExportError as error:
        return HttpResponseBadRequest(
            _("This version cannot be exported as harness tasks: %(reason)s") % {"reason": error},
            content_type="text/plain; charset=utf-8",
        )
    name = file_stem(version.name, fallback=f"version-{version.pk}")
    return download(body, filename=f"{name}-{fmt}-tasks.zip", fmt="zip")
