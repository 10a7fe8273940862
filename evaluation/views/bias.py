"""The judge run page's Bias tab (verbosity, paraphrase stability, self-preference, position bias),
starting a run's paraphrases, and the new pairwise run form.

Researchers only: the tab shows judge scores next to human means.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import add_service_errors, download, json_text
from core.roles import RESEARCHER

from ..forms.bias import PairwiseRunForm, ParaphraseStartForm
from ..selectors import bias as bias_selectors
from ..selectors.lookups import judge_run_or_404
from ..services import bias as bias_services


def _percent(value) -> float | None:
    return None if value is None else round(100 * value, 1)


@require_GET
@role_required(RESEARCHER)
def run_bias(request, pk: int):
    run = judge_run_or_404(pk)
    fmt = request.GET.get("format", "")
    if fmt and fmt != "json":
        return HttpResponseBadRequest(
            _("Unknown download format “%(format)s”; use ?format=json.") % {"format": fmt},
            content_type="text/plain; charset=utf-8",
        )
    report = bias_selectors.judge_bias(run=run)
    if fmt == "json":
        return download(json_text(report), filename=f"run-{run.pk}-bias.json", fmt="json")
    pairwise = report.get("pairwise")
    self_preference = report["self_preference"]
    self_rows = []
    if self_preference["applicable"] and pairwise is None:
        self_rows = [
            (_("Its own model's explanations"), self_preference["own"]),
            (_("Other models' explanations"), self_preference["others"]),
        ]
    win_rows = []
    if pairwise is not None:
        win_rows = [
            (_("Run A wins in both orders"), pairwise["win_rate"]["a"]),
            (_("Run B wins in both orders"), pairwise["win_rate"]["b"]),
            (_("A different winner in each order"), pairwise["win_rate"]["inconsistent"]),
        ]
        if pairwise["human_agreement"] is not None:
            win_rows.append((_("Agreement with people's choice"), pairwise["human_agreement"]))
    context = {
        "self_rows": self_rows,
        "win_rows": win_rows,
        "run": run,
        "report": report,
        "verbosity": report["verbosity"],
        "paraphrase": report["paraphrase"],
        "self_preference": report["self_preference"],
        "pairwise": pairwise,
        "is_pairwise": pairwise is not None,
        "paraphrase_form": None if pairwise is not None else ParaphraseStartForm(judge=run),
        "first_position_percent": _percent(pairwise["first_position_rate"]) if pairwise else None,
        "consistency_percent": _percent(pairwise["consistency"]) if pairwise else None,
    }
    return render(request, "evaluation/run_bias.html", context)


@require_POST
@role_required(RESEARCHER)
def run_bias_paraphrase(request, pk: int):
    """Start the judge run under other wordings of its prompt; a wording already run is not run again."""
    run = judge_run_or_404(pk)
    form = ParaphraseStartForm(request.POST, judge=run)
    if not form.is_valid():
        return HttpResponseBadRequest(
            " ".join(str(error) for errors in form.errors.values() for error in errors),
            content_type="text/plain; charset=utf-8",
        )
    try:
        runs = bias_services.judge_paraphrases_start(
            judge=run,
            prompts=list(form.cleaned_data["prompts"]) or None,
            user=request.user,
            idempotency_key=form.cleaned_data["idempotency_key"],
            confirm_cost=form.cleaned_data["confirm_cost"],
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("evaluation:run_bias", pk=run.pk)
    messages.success(
        request,
        _("Paraphrase runs: %(ids)s. The figures fill in as they finish.")
        % {"ids": ", ".join(f"#{started.pk}" for started in runs)},
    )
    return redirect("evaluation:run_bias", pk=run.pk)


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def pairwise_new(request):
    title = _("New pairwise judge run")
    if request.method == "GET":
        initial = {key: int(request.GET[key]) for key in ("run_a", "run_b") if request.GET.get(key, "").isdigit()}
        return render(
            request, "evaluation/pairwise_new.html", {"form": PairwiseRunForm(initial=initial), "title": title}
        )
    form = PairwiseRunForm(request.POST)
    if form.is_valid():
        try:
            run = bias_services.pairwise_run_start(
                **form.run_arguments(), user=request.user, idempotency_key=form.cleaned_data["idempotency_key"]
            )
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            if run.idempotent_repeat:
                messages.info(request, _("This form was already submitted: here is the run it started."))
            else:
                messages.success(request, _("Run #%(id)s started.") % {"id": run.pk})
            return redirect("evaluation:run_detail", pk=run.pk)
    return render(request, "evaluation/pairwise_new.html", {"form": form, "title": title}, status=400)
