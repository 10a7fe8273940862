"""The API token page: see when one's token was issued and expires, revoke it, re-create it.

The key is shown once, in the answer to the re-creation (htmx) or on the page the
no-JavaScript form is redirected to (kept in the session for that one page view).
"""

from django.conf import settings
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from core.decorators import role_required
from core.http import vary_on_htmx
from core.selectors.tokens import token_expires_at, token_is_expired, user_token
from core.services.tokens import token_recreate, token_revoke

NEW_KEY_SESSION = "api_token_new_key"


@never_cache
@role_required()
@require_http_methods(["GET", "POST"])
@vary_on_htmx
def api_token(request):
    new_key = None
    error = None
    if request.method == "POST":
        action = request.POST.get("action", "")
        if action == "revoke":
            token_revoke(user=request.user)
        elif action == "create":
            new_key = token_recreate(user=request.user).key
        else:
            error = _("Unknown action: choose Revoke or Create a new token.")
        if not request.htmx and error is None:
            if new_key:
                request.session[NEW_KEY_SESSION] = new_key
            # 303 to a GET: refreshing the page that shows the key must not make another one.
            return HttpResponseRedirect(reverse("core:api_token"), status=303)
    else:
        new_key = request.session.pop(NEW_KEY_SESSION, None)
    token = user_token(user=request.user)
    context = {
        "token": token,
        "expires_at": token_expires_at(token=token) if token else None,
        "expired": token_is_expired(token=token) if token else False,
        "new_key": new_key,
        "error": error,
        "ttl_days": settings.API_TOKEN_TTL_DAYS,
    }
    template = "core/api_token.html#token-panel" if request.htmx else "core/api_token.html"
    return render(request, template, context, status=400 if error else 200)
