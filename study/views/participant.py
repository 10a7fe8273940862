"""The participant's pages: the Prolific entry link, one page per step, the finish redirect.

Participants are anonymous: their session is found through a signed cookie (set by the entry
link, scoped to the study's /s/<slug>/ pages), never through an id in the URL, so no one can
open another's session.
Chinese-group participants get every page in Simplified Chinese.
"""

from csp.decorators import csp_exempt
from django.conf import settings
from django.contrib import messages
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from core.decorators import role_required
from core.files import untrusted_file_response
from core.ratelimit import rate_limit_hit
from core.roles import RESEARCHER, has_role

from ..models import Culture, Participant, StudyStatus
from ..selectors.lookups import study_or_404
from ..selectors.participants import participant_current
from ..selectors.studies import study_artwork_find, study_find
from ..services import participants as flow
from ..steps import step_parse
from .presenters import page_context

ENTRY_MESSAGES = {
    "bad_pid": (
        gettext_noop("This link is missing your Prolific ID"),
        gettext_noop("Please open the study from Prolific again: the link must carry your PROLIFIC_PID."),
    ),
    "bad_params": (
        gettext_noop("This link is not valid"),
        gettext_noop("Please open the study from Prolific again."),
    ),
    "bad_id": (
        gettext_noop("This link does not come from Prolific"),
        gettext_noop(
            "The Prolific ID, study ID or session ID in this link is not one Prolific gives (24 letters a–f "
            "and digits). Please open the study from Prolific again, without changing the link."
        ),
    ),
    "bad_group": (
        gettext_noop("This link is not valid"),
        gettext_noop("Please open the study from Prolific again."),
    ),
    "draft": (
        gettext_noop("This study has not started yet"),
        gettext_noop("Please come back when it is published on Prolific."),
    ),
    "paused": (
        gettext_noop("This study is paused"),
        gettext_noop("Please come back in a little while; your answers so far are saved."),
    ),
    "closed": (
        gettext_noop("This study is closed"),
        gettext_noop("Thank you for your interest. Please return the study on Prolific."),
    ),
    "full": (
        gettext_noop("This study is full"),
        gettext_noop("All places for your group are taken. Please return the study on Prolific."),
    ),
    "other_session": (
        gettext_noop("You have already started this study"),
        gettext_noop(
            "Your Prolific ID is taking part from another Prolific session. Please continue from the link "
            "of the session where you started, or contact the researchers on Prolific."
        ),
    ),
    "unverified": (
        gettext_noop("We could not confirm your Prolific session"),
        gettext_noop(
            "Prolific does not know the session this link opened, so it no longer holds a place in the study. "
            "If you took part from Prolific, please contact the researchers on Prolific."
        ),
    ),
    "too_many": (
        gettext_noop("Too many attempts"),
        gettext_noop(
            "Too many study links were opened from your network just now. Please wait a minute and try again."
        ),
    ),
    "no_session": (
        gettext_noop("We could not find your session"),
        gettext_noop("Please open the study again from the link on Prolific; you will continue where you left off."),
    ),
}


# The four pages of an artwork before the comparison share one template.
ARTWORK_PAGES = ("symbols", "qa", "post_symbols", "post_qa")


def _participant_cookie(slug: str) -> str:
    return f"vivid_participant_{slug}"


def _participant_pk(request, slug: str) -> int | None:
    """The participant this browser entered as, from a signed cookie: no session row to read per page.

    Signed with the site's secret and salted by study, so it cannot be forged or carried to
    another study; it expires with the session cookie's age.
    """
    value = request.get_signed_cookie(
        _participant_cookie(slug), default=None, salt=f"study.participant:{slug}", max_age=settings.SESSION_COOKIE_AGE
    )
    return int(value) if value and value.isdigit() else None


def _remember_participant(response, slug: str, participant: Participant):
    response.set_signed_cookie(
        _participant_cookie(slug),
        str(participant.pk),
        salt=f"study.participant:{slug}",
        max_age=settings.SESSION_COOKIE_AGE,
        path=f"/s/{slug}/",
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
    return response


def _language(group: str) -> str:
    return "zh-hans" if group == Culture.CHINESE else "en"


def _message(request, reason: str, *, language: str = "en", status: int = 400):
    with translation.override(language):
        title, text = ENTRY_MESSAGES[reason]
        response = render(
            request,
            "study/participant/message.html",
            {"title": _(title), "text": _(text), "reason": reason},
            status=status,
        )
        response["Content-Language"] = language
    return response


def _too_many(request, scope: str, rate: str, *, language: str):
    """429 with the participant's page when this address opened too many links or sent too many
    consents (STUDY_ENTRY_RATE, STUDY_CONSENT_RATE); None when the request may go on."""
    wait = rate_limit_hit(scope=scope, request=request, rate=rate)
    if wait is None:
        return None
    response = _message(request, "too_many", language=language, status=429)
    response["Retry-After"] = str(wait)
    return response


@never_cache
@require_http_methods(["GET"])
def entry(request, slug):
    """Prolific's link: /s/<slug>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…[&group=…]."""
    group = request.GET.get("group", "")
    language = _language(group)
    refused = _too_many(request, "study-entry", settings.STUDY_ENTRY_RATE, language=language)
    if refused is not None:
        return refused
    study = study_find(slug=slug, package=False)
    if study is None:
        return _message(request, "bad_params", language=language, status=404)
    try:
        participant = flow.participant_enter(
            study=study,
            pid=request.GET.get("PROLIFIC_PID", "").strip(),
            prolific_study_id=request.GET.get("STUDY_ID", "").strip(),
            session_id=request.GET.get("SESSION_ID", "").strip(),
            group=group,
            is_test=flow.synthetic_entry_token_valid(request.GET.get("test_token", ""), slug),
        )
    except flow.EntryError as exc:
        response = _message(request, exc.reason, language=language, status=flow.entry_refusal_status(exc.reason))
        # A refused link must not leave a session opened earlier in this browser (say, another
        # participant's on a shared computer) reachable through the run page. The one exception is
        # the session of the link's own PID: this browser already holds it, dropping it would stop
        # the participant's first tab, and a second link (another SESSION_ID) gains nothing by it.
        held = _participant_pk(request, slug)
        if held is None or held != exc.participant_pk:
            response.delete_cookie(_participant_cookie(slug), path=f"/s/{slug}/", samesite="Lax")
        return response
    return _remember_participant(redirect("study:run", slug=slug), slug, participant)


def _current_participant(request, slug) -> Participant | None:
    pk = _participant_pk(request, slug)
    if not pk:
        return None
    return participant_current(slug=slug, pk=pk, orders=_orders_needed(request))


def _orders_needed(request) -> tuple[int, ...]:
    """The artworks whose assignments a POST will read, from the step it names: the page's own
    (its answers are checked against it) and, after the instructions or a comparison, the next
    artwork's (its page comes in the answer). Read with the session: a query less per page."""
    if request.method != "POST":
        return ()
    try:
        step = step_parse(request.POST.get("step", ""))
    except ValueError:
        return ()  # not a step at all: the services refuse it
    if step.kind == "instructions":
        return (1,)
    if step.order is None or not 0 < step.order < 10_000:
        return ()
    return (step.order, step.order + 1) if step.kind == "compare" else (step.order,)


@never_cache
@require_http_methods(["GET", "POST"])
def run(request, slug):
    participant = _current_participant(request, slug)
    if participant is None:
        return _message(request, "no_session")
    language = _language(participant.group)
    with translation.override(language):
        response = _run(request, participant)
        response["Content-Language"] = language
    return response


def _run(request, participant: Participant):
    if request.method == "POST" and request.POST.get("step") == "consent" and not participant.is_preview:
        refused = _too_many(
            request, "study-consent", settings.STUDY_CONSENT_RATE, language=_language(participant.group)
        )
        if refused is not None:
            return refused
    if request.method == "POST":
        outcome = flow.participant_page_submit(participant=participant, data=request.POST)
    else:
        outcome = flow.participant_page_show(participant=participant)
    participant = outcome.participant
    if outcome.again:
        return _to_run(participant)
    if outcome.message:
        return _message(request, outcome.message, language=_language(participant.group), status=outcome.status)
    if outcome.finished:
        return _finished(request, participant)
    # After a POST the next page comes in this response, not after a redirect: one request per
    # page, half the load. study.js sends the page with fetch (retried while the connection is
    # down) and shows this answer under a GET history entry, so a refresh does not send the
    # answers again (and if it did, or a retry arrives after the page was stored, the stale page
    # stores nothing and the participant is sent to the current page).
    errors = {key: _(message) for key, message in outcome.errors.items()} if outcome.errors else None
    return _render_step(request, participant, outcome.step, errors=errors, values=outcome.values, status=outcome.status)


def _render_step(request, participant, step, *, errors=None, values=None, status=200):
    context = page_context(participant, step, errors=errors, values=values)
    template = "artwork_page" if step.kind in ARTWORK_PAGES else step.kind
    return render(request, f"study/participant/{template}.html", context, status=status)


def _to_run(participant: Participant):
    # 303: the browser follows with a GET, so a refresh never sends the answers again.
    return HttpResponseRedirect(reverse("study:run", args=[participant.study.slug]), status=303)


def _finished(request, participant: Participant):
    url = flow.participant_finish_url(participant=participant)
    if url is None:
        return redirect("study:run", slug=participant.study.slug)
    if participant.is_preview:
        return render(request, "study/participant/preview_done.html", {"participant": participant, "url": url})
    return HttpResponseRedirect(url, status=303)


@never_cache
@require_http_methods(["GET"])
def local_done(request, slug):
    """The end of the study in development (PROLIFIC_COMPLETE_LOCAL): Prolific is not there to land
    on, so the code and the URL a participant would be sent to are shown here. 404 otherwise, and
    for a code that is not one of the study's."""
    if not settings.PROLIFIC_COMPLETE_LOCAL:
        raise Http404
    study = study_find(slug=slug, package=False)
    code = request.GET.get("cc", "")
    status = flow.finish_code_status(study=study, code=code) if study is not None else None
    if status is None:
        raise Http404
    participant = _current_participant(request, slug)
    language = _language(participant.group) if participant is not None else "en"
    with translation.override(language):
        context = {
            "study": study,
            "code": code,
            "status": status.label,
            "prolific_url": flow.prolific_complete_url(code=code),
        }
        response = render(request, "study/participant/local_done.html", context)
        response["Content-Language"] = language
    return response


@require_POST
@role_required(RESEARCHER)
def preview_start(request, slug):
    study = study_or_404(slug)
    try:
        participant = flow.preview_start(study=study, user=request.user, group=request.POST.get("group", ""))
    except flow.EntryError:
        messages.error(request, _("Choose one of the study's groups to preview."))
        return redirect("study:detail", slug=slug)
    return _remember_participant(redirect("study:run", slug=slug), slug, participant)


# The site policy would be the wrong one: the file carries its own, stricter policy.
@csp_exempt()
def artwork_image(request, slug, key):
    study = study_find(slug=slug, package=False)
    if study is None:
        raise Http404
    if study.status == StudyStatus.DRAFT and not (_participant_pk(request, slug) or has_role(request.user, RESEARCHER)):
        raise Http404
    artwork = study_artwork_find(study=study, key=key)
    if artwork is None:
        raise Http404
    # ?w= names one of the smaller copies made at import (the srcset of the page); any other width,
    # or an artwork imported before copies were made, gets the original.
    name = artwork.image.name
    width = request.GET.get("w", "")
    for variant in artwork.image_variants or ():
        if width == str(variant.get("width")):
            name = variant["name"]
            break
    file = artwork.image.open("rb") if name == artwork.image.name else default_storage.open(name, "rb")
    response = FileResponse(file)
    response["Cache-Control"] = "private, max-age=3600"
    return untrusted_file_response(response, filename=name, inline=True)
