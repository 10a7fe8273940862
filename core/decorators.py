from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

from core.roles import has_role, user_roles


def role_required(*roles: str):
    """Anonymous users go to the login page; signed-in users without the role get 403.

    With no roles given, any staff role will do.
    """

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            allowed = has_role(request.user, *roles) if roles else bool(user_roles(request.user))
            if not allowed:
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator
