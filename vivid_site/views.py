from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.utils.translation import gettext as _
from django.views import defaults
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from annotation.selectors import dataset_list, round_list
from annotation.selectors.rounds import annotator_rounds, rounds_to_adjudicate
from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER, user_roles

HOME_DATASETS = 10
HOME_ROUNDS = 5


@login_required
def home(request):
    """Each role sees what it can do; a signed-in user with no role is told whom to ask."""
    roles = user_roles(request.user)
    # Without a role the page shows only whom to ask, so nothing else is even queried.
    context = {"datasets": dataset_list()[:HOME_DATASETS] if roles else []}
    if ANNOTATOR in roles:
        # Only the user's own rounds and own progress: nothing about the other annotators.
        context["my_rounds"] = annotator_rounds(user=request.user)
    if ADJUDICATOR in roles:
        context["adjudication_rounds"] = list(rounds_to_adjudicate())
    if RESEARCHER in roles:
        context["recent_rounds"] = list(round_list(user=request.user)[:HOME_ROUNDS])
    return render(request, "home.html", context)


def page_not_found(request, exception):
    """API clients get JSON for a URL no route matches (e.g. /api/rounds/abc/), as the API's own 404s are."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": _("Not found.")}, status=404)
    return defaults.page_not_found(request, exception)


@require_safe
@cache_control(max_age=86400, public=True)
def favicon(request):
    """Browsers ask for /favicon.ico on their own (the admin's pages, a JSON answer); our pages link
    the icon themselves. Not permanent: the static file's name carries its hash in production."""
    return HttpResponseRedirect(static("favicon.svg"))
