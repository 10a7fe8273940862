"""Bonuses on the study's Prolific page: a CSV becomes a batch with its total cost; "Pay" queues it for a worker,
which sends it once, ever; the batch's row follows it (htmx) until Prolific has answered."""

from django.contrib import messages
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.decorators import role_required
from core.roles import RESEARCHER

from .. import selectors, services
from ..forms import BonusPayForm, BonusUploadForm
from ..services.bonuses import PAYABLE
from . import back, call_prolific, study_or_404
from .studies import page_context


@require_POST
@role_required(RESEARCHER)
def prolific_bonus_create(request, slug: str):
    study = study_or_404(slug)
    form = BonusUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "prolific/study.html", page_context(request, study, bonus_form=form), status=400)
    batch = call_prolific(
        request,
        would=_("It would check the rows and create the bonus batch on Prolific (nothing is paid before you confirm)."),
        call=lambda: services.bonus_batch_create(
            study=study, file_or_text=form.cleaned_data["content"], user=request.user
        ),
    )
    if batch is not None:
        messages.success(
            request,
            _("Bonus batch %(n)s: %(rows)s participants, total cost %(total)s (fees and VAT included). Not paid yet.")
            % {"n": batch.pk, "rows": len(batch.rows), "total": batch.total_amount},
        )
    return back(study)


@require_POST
@role_required(RESEARCHER)
def prolific_bonus_pay(request, slug: str):
    study = study_or_404(slug)
    form = BonusPayForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return back(study)
    batch = selectors.bonus_batch_of(study=study, pk=form.cleaned_data["batch"])
    if batch is None:
        messages.error(request, _("No such bonus batch of this study."))
        return back(study)
    # A double click or a second tab: the batch left CREATED with the first request and is never sent again.
    queued = batch.status in PAYABLE and call_prolific(
        request,
        would=_("It would pay bonus batch %(n)s (total %(total)s).") % {"n": batch.pk, "total": batch.total_amount},
        call=lambda: services.bonus_batch_pay_request(batch=batch),
    )
    if queued:
        messages.success(
            request,
            _("Bonus batch %(n)s is being paid: a worker sends it to Prolific, and its row below shows the answer.")
            % {"n": batch.pk},
        )
    elif queued is not None:
        messages.info(
            request,
            _("Bonus batch %(n)s is %(status)s; it is never sent twice.")
            % {"n": batch.pk, "status": batch.get_status_display()},
        )
    return back(study)
