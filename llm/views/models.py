"""The model registry pages: the list with each model's capabilities, registering and probing a model."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import add_service_errors, vary_on_htmx, wants_fragment
from core.roles import RESEARCHER

from .. import selectors, services
from ..forms import ModelAddForm
from ..models import ModelConfig


def _model_row(model: ModelConfig) -> dict:
    return {
        "model": model,
        "key_set": selectors.api_key_state(model.api_key_env),
        "capabilities": [
            (
                {
                    "result": getattr(model, field),
                    "detail": ((model.probe or {}).get(key) or {}).get("detail", ""),
                },
                key,
            )
            for key, field in (("vision", "supports_vision"), ("logprobs", "supports_logprobs"))
        ],
    }


@require_GET
@role_required(RESEARCHER)
@vary_on_htmx
def model_list(request):
    # The row of a model being probed polls for itself until its probe is done.
    if wants_fragment(request) and request.GET.get("model", "").isdigit():
        model = get_object_or_404(ModelConfig, pk=int(request.GET["model"]))
        return render(request, "llm/model_list.html#model-row", {"row": _model_row(model)})
    rows = [_model_row(model) for model in selectors.model_list()]
    return render(request, "llm/model_list.html", {"rows": rows})


@require_POST
@role_required(RESEARCHER)
@vary_on_htmx
def model_probe(request, pk: int):
    """Probe the model in a worker, as ``manage.py probe_model NAME`` does in the shell."""
    model = get_object_or_404(ModelConfig, pk=pk)
    queued = services.model_probe_request(model=model)
    if wants_fragment(request):
        # The row itself says "probing since" either way; a second click changes nothing.
        return render(request, "llm/model_list.html#model-row", {"row": _model_row(model)})
    if queued:
        messages.success(request, _("Probing “%(name)s”: its row shows the results when done.") % {"name": model.name})
    else:
        messages.info(request, _("“%(name)s” is already being probed.") % {"name": model.name})
    return redirect("llm:model_list")


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def model_new(request):
    form = ModelAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            model = services.model_add(**form.cleaned_data, user=request.user)
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(request, _("Model “%(name)s” added.") % {"name": model.name})
            return redirect("llm:model_list")
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "llm/model_new.html", {"form": form}, status=status)
