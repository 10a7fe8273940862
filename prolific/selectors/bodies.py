"""The exact bodies of the create-study requests: what --dry-run prints and the page previews.

One Prolific study per group (its link carries ``group=``), or one for all groups (the
participant picks a group in the survey). Places are the group's quota (or the sum of the
quotas), minutes and reward come from the study package.
"""

import ipaddress
import re
from decimal import ROUND_DOWN, Decimal, InvalidOperation
from urllib.parse import urlsplit

from django.conf import settings
from django.urls import reverse
from django.utils.translation import gettext as _

from study.models import DEVICES_DEFAULT, Culture, Device, Study

from ..client import ProlificError
from ..models import CompletionAction

# Prolific replaces these placeholders with the participant's ids when it sends them to the study URL.
URL_PARAMETERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
AMOUNT = re.compile(r"(\d+(?:[.,]\d{1,2})?)")
# What a study stored before packages could choose its devices sends.
DEVICES = list(DEVICES_DEFAULT)
NO_CONSENT_RETURN_REASON = "Did not consent to take part."
# Names that resolve only on this computer or the local network, never for Prolific's servers.
LOOPBACK_NAMES = ("localhost", ".localhost")
LOCAL_NAMES = (".local", ".lan", ".internal", ".home.arpa")


def site_url(explicit: str | None = None) -> str:
    """The public address of the app (a request's own, --site-url, or PROLIFIC_SITE_URL), without the final slash."""
    value = (explicit or settings.PROLIFIC_SITE_URL or "").strip().rstrip("/")
    if not value.startswith(("http://", "https://")):
        raise ProlificError(
            _(
                "The app's public address is unknown: pass --site-url https://... or set PROLIFIC_SITE_URL "
                "(the address participants open, which Prolific's study link points at)."
            )
        )
    return value


def _host_kind(host: str) -> str:
    """What keeps Prolific from reaching ``host``: "loopback", "link-local", "private", "local-name", or "" for a
    public host."""
    host = host.rstrip(".")
    if host == "localhost" or host.endswith(LOOPBACK_NAMES):
        return "loopback"
    if host.endswith(LOCAL_NAMES):
        return "local-name"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return ""  # a name: what it resolves to is up to DNS
    address = getattr(address, "ipv4_mapped", None) or address
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    # Private ranges, and every other address the internet does not route (shared, reserved, unspecified).
    return "private" if address.is_private or not address.is_global else ""


def site_unreachable(url: str) -> str:
    """Why Prolific cannot reach the public address ``url`` (a loopback, private or link-local host), or "".

    The study URL participants open and the webhook address are built on it; the callers add which
    setting to change, as it differs between the page and the commands.
    """
    host = urlsplit(url or "").hostname or ""
    kind = _host_kind(host)
    if not kind:
        return ""
    what = {
        "loopback": _("a loopback address (only this computer reaches it)"),
        "link-local": _("a link-local address (only this network segment reaches it)"),
        "private": _("a private network address (only your local network reaches it)"),
        "local-name": _("a local network name (only your local network knows it)"),
    }[kind]
    return _(
        "Prolific cannot reach %(url)s: %(host)s is %(what)s. Participants could not open the study URL, and "
        "Prolific could not deliver its webhook there."
    ) % {"url": url, "host": host, "what": what}


def external_study_url(*, study: Study, group: str | None, base: str) -> str:
    url = f"{base}{reverse('study:entry', args=[study.slug])}?{URL_PARAMETERS}"
    return f"{url}&group={group}" if group else url


def reward_minor_units(text) -> int:
    """'£3.00 (demo)' -> 300: the package's reward in the currency's minor unit, as Prolific wants it."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        value = Decimal(str(text))
    else:
        found = AMOUNT.search(str(text or ""))
        if not found:
            raise ProlificError(
                _('The package\'s reward %(reward)s holds no amount (e.g. "£3.00"): Prolific needs one.')
                % {"reward": repr(text or "")}
            )
        try:
            value = Decimal(found.group(1).replace(",", "."))
        except InvalidOperation:
            raise ProlificError(
                _("The package's reward %(reward)s is not an amount.") % {"reward": repr(text)}
            ) from None
    cents = int((value * 100).quantize(Decimal("1"), rounding=ROUND_DOWN))
    if cents <= 0:
        raise ProlificError(_("The package's reward must be more than zero, got %(reward)s.") % {"reward": repr(text)})
    return cents


def completion_codes(*, study: Study, completion_action: str, reward: int, places: int) -> list[dict]:
    # A screened-out participant answered the whole survey (quality control is scored at the end):
    # a fixed part of the reward, which Prolific wants strictly below the reward.
    package = study.package if isinstance(study.package, dict) else {}
    screenout = package.get("screenout_reward")
    screenout_cents = reward_minor_units(screenout) if screenout else reward // 2
    screenout_cents = max(1, min(screenout_cents, reward - 1))
    return [
        {"code": study.completion_code, "code_type": "COMPLETED", "actions": [{"action": completion_action}]},
        {
            "code": study.screenout_code,
            "code_type": "FIXED_SCREENOUT",
            "actions": [
                {"action": "FIXED_SCREEN_OUT_PAYMENT", "fixed_screen_out_reward": screenout_cents, "slots": places}
            ],
        },
        {
            "code": study.no_consent_code,
            "code_type": "NO_CONSENT",
            "actions": [{"action": "REQUEST_RETURN", "return_reason": NO_CONSENT_RETURN_REASON}],
        },
    ]


def prolific_study_name(*, study: Study, group: str | None) -> str:
    """The name on Prolific: a study per group carries its group, so that the drafts are told apart in the
    workspace (the app finds them by ``internal_name``, which has always carried the group)."""
    if not group:
        return study.title
    label = Culture(group).label if group in Culture.values else group
    return _("%(title)s – %(group)s listeners") % {"title": study.title, "group": label}


def internal_name(*, study: Study, group: str | None) -> str:
    """How the app finds its own Prolific study again after a create whose answer was lost."""
    return f"vivid:{study.slug}:{group or 'all'}:{study.pk}"


def study_devices(*, study: Study) -> list[str]:
    """Prolific's device_compatibility for the study: the package's devices in Prolific's order."""
    chosen = set(study.devices or DEVICES)
    return [device for device in Device.values if device in chosen] or list(DEVICES)


def prolific_study_bodies(
    *,
    study: Study,
    group: str | None,
    completion_action: str = CompletionAction.MANUALLY_REVIEW,
    filters: list | None = None,
    site: str | None = None,
) -> list[dict]:
    """The create-request bodies: one for ``group``, one per group when ``group`` is "each", or one for all (None).

    ``site`` is the app's public address (the request's own on a page; otherwise PROLIFIC_SITE_URL).
    """
    if completion_action not in CompletionAction.values:
        raise ProlificError(
            _("Unknown completion action %(action)s (use %(choices)s).")
            % {"action": completion_action, "choices": ", ".join(CompletionAction.values)}
        )
    if filters is None:
        filters = []
    if not isinstance(filters, list) or not all(isinstance(item, dict) for item in filters):
        raise ProlificError(_("Filters must be a JSON list of objects (Prolific's filter format)."))
    if group == "each":
        groups = list(study.groups)
    else:
        if group and group not in study.groups:
            raise ProlificError(
                _("Unknown group %(group)s (this study has %(groups)s).")
                % {"group": group, "groups": ", ".join(study.groups)}
            )
        groups = [group or None]
    base = site_url(site)
    package = study.package if isinstance(study.package, dict) else {}
    reward = reward_minor_units(package.get("reward"))
    minutes = package.get("estimated_minutes")
    if not isinstance(minutes, int) or isinstance(minutes, bool) or minutes < 1:
        raise ProlificError(_("The package has no estimated_minutes: Prolific needs the expected duration."))
    bodies = []
    for each in groups:
        places = study.quota_per_group if each else study.quota_per_group * max(1, len(study.groups))
        description = _("A study of artwork descriptions, about %(minutes)s minutes.") % {"minutes": minutes}
        if package.get("contact"):
            description += " " + _("Contact: %(contact)s") % {"contact": package["contact"]}
        bodies.append(
            {
                "name": prolific_study_name(study=study, group=each),
                "internal_name": internal_name(study=study, group=each),
                "description": description,
                "external_study_url": external_study_url(study=study, group=each, base=base),
                "prolific_id_option": "url_parameters",
                "completion_codes": completion_codes(
                    study=study, completion_action=completion_action, reward=reward, places=places
                ),
                "total_available_places": places,
                "estimated_completion_time": minutes,
                "reward": reward,
                "device_compatibility": study_devices(study=study),
                "filters": filters,
                "submissions_config": {"max_submissions_per_participant": 1},
            }
        )
    return bodies
