"""The three staff roles. Groups are created by a data migration."""

from django.contrib.auth.models import AnonymousUser, User

ANNOTATOR = "Annotator"
ADJUDICATOR = "Adjudicator"
RESEARCHER = "Researcher"
ALL_ROLES = (ANNOTATOR, ADJUDICATOR, RESEARCHER)


def user_roles(user: User | AnonymousUser) -> set[str]:
    """Role names of a user; a superuser holds every role.

    Cached on the user object: templates and permission checks ask many times
    per request.
    """
    if not user.is_authenticated or not user.is_active:
        return set()
    cached = getattr(user, "_vivid_roles", None)
    if cached is None:
        if user.is_superuser:
            cached = set(ALL_ROLES)
        else:
            cached = set(user.groups.filter(name__in=ALL_ROLES).values_list("name", flat=True))
        user._vivid_roles = cached
    return cached


def has_role(user, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))
