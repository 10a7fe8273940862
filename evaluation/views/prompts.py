"""The prompt templates: the built-in ones and researchers' own."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from core.decorators import role_required
from core.http import add_service_errors
from core.roles import RESEARCHER

from .. import selectors, services
from ..forms import PromptAddForm
from ..models import PromptKind, PromptTemplate


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
