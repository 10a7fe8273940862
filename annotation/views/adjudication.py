"""Adjudication (workflow step 5) and item history (step 7).

Adjudicators see both annotators' decisions side by side once the researcher
locks the round, and record the final traits and theme or remove the item.
Annotators who should adjudicate together, as in the paper, are given the
Adjudicator role as well (roles are additive groups).
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect, push_url

from core.decorators import role_required
from core.http import add_service_errors, vary_on_htmx, wants_fragment
from core.localization import localized_name
from core.queues import queue_status
from core.roles import ADJUDICATOR, has_role

from .. import selectors, services
from ..forms.adjudication import RemoveForm, ResolveForm
from ..models import UNDECIDED_STATUSES, ItemStatus, RemovalReason, RoundStatus, TraitDecision
from ..selectors import adjudication as adjudication_selectors
from ..selectors import rounds as round_selectors
from ..selectors.lookups import item_or_404, round_or_404

QUEUE_PAGE_SIZE = 50
ITEM_TEMPLATE = "annotation/adjudication_item.html"


def _taxonomy():
    return list(selectors.trait_list()), list(selectors.theme_list())


@require_GET
@role_required(ADJUDICATOR)
def queue(request, round_pk: int):
    round_ = round_or_404(request.user, round_pk)
    context = {"round": round_, "locked": selectors.can_see_all_labels(user=request.user, round=round_)}
    if context["locked"]:
        traits, _themes = _taxonomy()
        items = adjudication_selectors.adjudication_item_list(round=round_)
        page = Paginator(items, QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
        context |= {
            "page": page,
            "rows": [
                adjudication_selectors.item_comparison(item=item, traits=traits, with_llm=False)
                for item in page.object_list
            ],
            "first": adjudication_selectors.adjudication_next(round=round_),
            "funnel": round_selectors.round_counts(round=round_)["funnel"],
        }
    return render(request, "annotation/adjudication_queue.html", context)


def _initial(item, comparison) -> dict:
    if comparison is None:
        return {"revision": item.revision}
    return {"revision": item.revision, "traits": comparison.agreed_traits, "theme": comparison.agreed_theme}


def _item_context(request, round_, item, *, resolve_form=None, remove_form=None, **extra) -> dict:
    traits, themes = _taxonomy()
    see_all = selectors.can_see_all_labels(user=request.user, round=round_)
    comparison = adjudication_selectors.item_comparison(item=item, traits=traits) if see_all else None
    initial = _initial(item, comparison)
    return {
        "round": round_,
        "item": item,
        "locked": see_all,
        "comparison": comparison,
        # Before the lock an item's status would tell whether its annotators agreed.
        "open": see_all and item.status in UNDECIDED_STATUSES,
        "resolve_form": resolve_form or ResolveForm(initial=initial, traits=traits, themes=themes),
        "remove_form": remove_form or RemoveForm(initial=initial),
        "remaining": adjudication_selectors.adjudication_queue_count(round=round_) if see_all else 0,
        "next_item": adjudication_selectors.adjudication_next(round=round_, after=item) if see_all else None,
        **extra,
    }


def _render_item(request, context, status=200):
    template = ITEM_TEMPLATE + ("#adjudication-item" if wants_fragment(request) else "")
    return render(request, template, context, status=queue_status(request, status))


@require_http_methods(["GET", "POST"])
@role_required(ADJUDICATOR)
@vary_on_htmx
def item(request, round_pk: int, item_pk: int):
    round_ = round_or_404(request.user, round_pk)
    item_ = adjudication_selectors.adjudication_item_get(round=round_, pk=item_pk)
    if item_ is None:
        raise Http404
    if request.method == "GET":
        return _render_item(request, _item_context(request, round_, item_))
    return _item_post(request, round_, item_)


def _item_post(request, round_, item_):
    traits, themes = _taxonomy()
    action = request.POST.get("action")
    if action == "remove":
        form = RemoveForm(request.POST)
        forms = {"remove_form": form}
    else:
        form = ResolveForm(request.POST, traits=traits, themes=themes)
        forms = {"resolve_form": form}
    if not form.is_valid():
        return _render_item(request, _item_context(request, round_, item_, **forms), status=400)
    data = form.cleaned_data
    try:
        if action == "remove":
            resolved = services.adjudication_remove(
                item=item_, user=request.user, reason=data["reason"], note=data["note"], revision=data["revision"]
            )
        else:
            resolved = services.adjudication_resolve(
                item=item_,
                user=request.user,
                traits=data["traits"],
                theme=data["theme"],
                note=data["note"],
                revision=data["revision"],
            )
    except services.ConflictError:
        current = adjudication_selectors.adjudication_item_get(round=round_, pk=item_.pk)
        who = current.resolved_by.get_username() if current.resolved_by else _("Someone else")
        conflict = _(
            "%(who)s resolved this item first; your decision was not saved. Their decision is shown below, and yours is kept in the form."
        ) % {"who": who}
        if current.status in UNDECIDED_STATUSES:
            # Nobody resolved it: the page was loaded before the item changed (the round was reopened).
            conflict = _(
                "This item changed since you opened it; your decision was not saved. Check it and submit again."
            )
            form.data = form.data.copy()
            form.data[form.add_prefix("revision")] = str(current.revision)
        context = _item_context(request, round_, current, conflict=conflict, **forms)
        return _render_item(request, context, status=409)
    except ValidationError as exc:
        add_service_errors(form, exc)
        return _render_item(request, _item_context(request, round_, item_, **forms), status=400)
    return _after_resolution(request, round_, resolved)


def _after_resolution(request, round_, resolved):
    """On to the next waiting item: an htmx swap that updates the address bar, or a redirect."""
    label = resolved.expression.text
    if resolved.status == ItemStatus.REMOVED:
        done = _("“%(expression)s” was removed.") % {"expression": label}
    else:
        done = _("“%(expression)s” was resolved.") % {"expression": label}
    following = adjudication_selectors.adjudication_next(round=round_, after=resolved)
    if following is None:
        messages.success(request, done + " " + _("No item is waiting for adjudication."))
        queue_url = reverse("annotation:adjudication_queue", args=[round_.pk])
        return HttpResponseClientRedirect(queue_url) if request.htmx else redirect(queue_url)
    url = reverse("annotation:adjudication_item", args=[round_.pk, following.pk])
    if not request.htmx:
        messages.success(request, done)
        return redirect(url)
    following = adjudication_selectors.adjudication_item_get(round=round_, pk=following.pk)
    context = _item_context(request, round_, following, just_done=resolved, done_message=done)
    response = render(request, ITEM_TEMPLATE + "#adjudication-item", context)
    return push_url(response, url)


# --- Item history -------------------------------------------------------------


def _field_labels() -> dict:
    return {
        "theme": _("Theme"),
        "trait_decisions": _("Trait decisions"),
        "added_traits": _("Added traits"),
        "flagged": _("Flagged"),
        "note": _("Note"),
        "status": _("Status"),
        "final_theme": _("Final theme"),
        "final_traits": _("Final traits"),
        "removal_reason": _("Removal reason"),
    }


def _value_text(field: str, value, traits: dict, themes: dict) -> str:
    """A stored old or new value in words: names instead of codes, in the active language."""
    if value is None or value == "":
        return "—"
    if field in ("theme", "final_theme"):
        return localized_name(themes[value]) if value in themes else str(value)
    if field in ("added_traits", "final_traits"):
        return ", ".join(localized_name(traits[c]) if c in traits else str(c) for c in value) or _("none")
    if field == "trait_decisions":
        decisions = dict(TraitDecision.choices)
        return "; ".join(
            f"{localized_name(traits[c]) if c in traits else c}: {decisions.get(d, d)}" for c, d in value.items()
        ) or _("none")
    if field == "flagged":
        return _("Yes") if value else _("No")
    if field == "status":
        return str(dict(ItemStatus.choices).get(value, value))
    if field == "removal_reason":
        return str(dict(RemovalReason.choices).get(value, value))
    return str(value)


def _history_rows(changes) -> list[dict]:
    traits = {t.code: t for t in selectors.trait_list()}
    themes = {t.code: t for t in selectors.theme_list()}
    labels = _field_labels()
    return [
        {
            "change": change,
            "actor": change.actor.get_username() if change.actor else _("(deleted account)"),
            "field": labels.get(change.field, change.field),
            "old": _value_text(change.field, change.old_value, traits, themes),
            "new": _value_text(change.field, change.new_value, traits, themes),
            "decision": change.assignment_id is None,
        }
        for change in changes
    ]


@require_GET
@role_required()
def item_detail(request, round_pk: int, item_pk: int):
    """An item's full change history; annotators see only their own changes until the round is locked."""
    item_ = item_or_404(request.user, item_pk, round_pk=round_pk)
    round_ = item_.round
    see_all = selectors.can_see_all_labels(user=request.user, round=round_)
    traits, _themes = _taxonomy()
    own = adjudication_selectors.item_own_assignment(item=item_, user=request.user)
    own_codes = selectors.assignment_labels(own).traits if own else frozenset()
    context = {
        "round": round_,
        "item": item_,
        "own": own,
        "own_traits": [trait for trait in traits if trait.code in own_codes],
        "history": _history_rows(selectors.item_history(item=item_, user=request.user)),
        "comparison": adjudication_selectors.item_comparison(item=item_, traits=traits) if see_all else None,
        "outcome_visible": round_.status != RoundStatus.OPEN,
        # A control item's labels are known: it is never adjudicated.
        "can_adjudicate": see_all
        and item_.control_id is None
        and item_.status in UNDECIDED_STATUSES
        and has_role(request.user, ADJUDICATOR),
    }
    return render(request, "annotation/item_detail.html", context)
