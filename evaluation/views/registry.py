"""The model registry and the prompt templates."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.decorators import role_required
from core.http import add_service_errors, wants_fragment
from core.roles import RESEARCHER

from .. import selectors, services
from ..forms import ModelAddForm, PromptAddForm
from ..models import ModelConfig, PromptKind, PromptTemplate


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
def model_list(request):
    # The row of a model being probed polls for itself until its probe is done.
    if wants_fragment(request) and request.GET.get("model", "").isdigit():
        model = get_object_or_404(ModelConfig, pk=int(request.GET["model"]))
        return render(request, "evaluation/model_list.html#model-row", {"row": _model_row(model)})
    rows = [_model_row(model) for model in selectors.model_list()]
    return render(request, "evaluation/model_list.html", {"rows": rows})


@require_POST
@role_required(RESEARCHER)
def model_probe(request, pk: int):
    """Probe the model in a worker, as ``manage.py probe_model NAME`` does in the shell."""
    model = get_object_or_404(ModelConfig, pk=pk)
    queued = services.model_probe_request(model=model)
    if wants_fragment(request):
        # The row itself says "probing since" either way; a second click changes nothing.
        return render(request, "evaluation/model_list.html#model-row", {"row": _model_row(model)})
    if queued:
        messages.success(request, _("Probing “%(name)s”: its row shows the results when done.") % {"name": model.name})
    else:
        messages.info(request, _("“%(name)s” is already being probed.") % {"name": model.name})
    return redirect("evaluation:model_list")


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
            return redirect("evaluation:model_list")
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "evaluation/model_new.html", {"form": form}, status=status)


@require_GET
@role_required(RESEARCHER)
def prompt_list(request):
    prompts = list(selectors.prompt_list())
    groups = [
        {"kind": kind, "label": label, "prompts": [p for p in prompts if p.kind == kind]}
        for kind, label in PromptKind.choices
    ]
    return render(request, "evaluation/prompt_list.html", {"groups": groups})


@require_GET
@role_required(RESEARCHER)
def prompt_detail(request, pk: int):
    prompt = get_object_or_404(PromptTemplate, pk=pk)
    return render(request, "evaluation/prompt_detail.html", {"prompt": prompt})


@require_http_methods(["GET", "POST"])
@role_required(RESEARCHER)
def prompt_new(request):
    form = PromptAddForm(request.POST or None, initial={"kind": request.GET.get("kind")})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            prompt = services.prompt_add(
                name=data["name"].strip(),
                kind=data["kind"],
                messages=data["messages"],
                reference=data["reference"],
                user=request.user,
            )
        except ValidationError as exc:
            if hasattr(exc, "error_dict") and "messages" in exc.error_dict:
                exc.error_dict["messages_json"] = exc.error_dict.pop("messages")
            add_service_errors(form, exc)
        else:
            messages.success(
                request,
                _("Prompt “%(name)s” saved as version %(hash)s.")
                % {"name": prompt.name, "hash": prompt.content_hash[:12]},
            )
            return redirect("evaluation:prompt_detail", pk=prompt.pk)
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "evaluation/prompt_new.html", {"form": form}, status=status)
