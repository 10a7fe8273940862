from django.conf import settings

from core.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER, user_roles

# Staff pages come in Vietnamese and English; Chinese is for study participants.
STAFF_LANGUAGES = ("en", "vi")


def roles(request):
    held = user_roles(request.user) if hasattr(request, "user") else set()
    return {
        "user_roles": sorted(held),
        "is_annotator": ANNOTATOR in held,
        "is_adjudicator": ADJUDICATOR in held,
        "is_researcher": RESEARCHER in held,
        "staff_languages": [(code, name) for code, name in settings.LANGUAGES if code in STAFF_LANGUAGES],
    }
