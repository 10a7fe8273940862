"""Names of taxonomy entries in the active language.

Traits and themes carry both an English and a Vietnamese name in the
database; Django's gettext cannot translate database rows, so the choice is
made here from the request's active language.
"""

from django.utils.translation import get_language


def _prefers_vietnamese() -> bool:
    return (get_language() or "").lower().startswith("vi")


def localized_name(entry) -> str:
    """``name_vi`` when the active language is Vietnamese, else ``name_en``."""
    if entry is None:
        return ""
    return entry.name_vi if _prefers_vietnamese() else entry.name_en


def localized_description(entry) -> str:
    if entry is None:
        return ""
    return entry.description_vi if _prefers_vietnamese() else entry.description_en
