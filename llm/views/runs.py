"""The cancel and resume buttons of a run page, for a run of any kind on the engine."""

from django.contrib import messages
from django.utils.translation import gettext as _

from ..services import BatchRunError, batch_run_cancel, batch_run_resume


def batch_run_act(request, *, run, action: str, resume=batch_run_resume) -> None:
    """Cancel or resume ``run`` as a button asked (``resume``: the kind's own, when it has one),
    saying what happened in a message."""
    try:
        if action == "cancel":
            batch_run_cancel(run=run, user=request.user)
            messages.success(request, _("Run #%(id)s cancelled; the items already done are kept.") % {"id": run.pk})
        elif action == "resume":
            resume(run=run, user=request.user, retry_failed=bool(request.POST.get("retry_failed")))
            messages.success(request, _("Run #%(id)s resumed: only the items not yet done are sent.") % {"id": run.pk})
        else:
            messages.error(request, _("Unknown action."))
    except BatchRunError as exc:
        messages.error(request, str(exc))
