"""The three staff roles. Groups are created by a data migration."""

from django.contrib.auth.models import AnonymousUser, Group, User

from .compiled_reads import CompiledRead

ANNOTATOR = "Annotator"
ADJUDICATOR = "Adjudicator"
RESEARCHER = "Researcher"
ALL_ROLES = (ANNOTATOR, ADJUDICATOR, RESEARCHER)


# Every group's name, kept if it is a role: read on every request (a role taken away is refused on the
# next one), so compiled once (core.compiled_reads).
_GROUP_NAMES = CompiledRead(
    lambda *, user_id: Group.objects.filter(user__id=user_id).order_by().values_list("name", flat=True)
)


def user_roles(user: User | AnonymousUser) -> set[str]:
    """Role names of a user; a superuser holds every role.

    Cached on the user object: templates and permission checks ask many times
    per request.
    """
    if not user.is_authenticated or not user.is_active:
        return set()
    cached = getattr(user, "_vivid_roles", None)
    if cached is None:
        cached = set(ALL_ROLES) if user.is_superuser else set(_GROUP_NAMES(user_id=user.pk)) & set(ALL_ROLES)
        user._vivid_roles = cached
    return cached


def has_role(user, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))
