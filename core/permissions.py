from rest_framework.permissions import SAFE_METHODS, BasePermission

from core.roles import RESEARCHER, has_role, user_roles


class HasAnyRole(BasePermission):
    """Signed in and holding at least one staff role."""

    message = "You need the Annotator, Adjudicator or Researcher role."

    def has_permission(self, request, view):
        return bool(user_roles(request.user))


class ReadAnyRoleWriteResearcher(BasePermission):
    message = "Only researchers can change datasets and expressions."

    def has_permission(self, request, view):
        if request.method in SAFE_METHODS:
            return bool(user_roles(request.user))
        return has_role(request.user, RESEARCHER)


class IsResearcher(BasePermission):
    message = "Only researchers can do this."

    def has_permission(self, request, view):
        return has_role(request.user, RESEARCHER)
