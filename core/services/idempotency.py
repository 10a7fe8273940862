"""One way to make a create safe to repeat: double clicks, the back button, a retried API call.

The view or API passes the request's key to the service, and the service wraps its create in
``idempotent_create``. The key is claimed by a row with a unique index in the same transaction
as the create: a repeat that arrives while the first request is still running waits on that
index until the first commits and then returns its object; if the first request fails, its
claim rolls back with it and the repeat creates. Nothing polls and nothing lives in the session.
"""

import re
from collections.abc import Callable
from typing import TypeVar

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.utils.translation import gettext as _

from core.models import IdempotencyKey
from core.selectors.idempotency import idempotent_earlier

KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")

Created = TypeVar("Created", bound=models.Model)


def idempotency_key_check(*, key: str | None) -> str | None:
    """The key, or None when the request sent none; a malformed key is refused by name."""
    if key is None or key == "":
        return None
    if not KEY_PATTERN.fullmatch(key):
        raise ValidationError(
            {"idempotency_key": _("An idempotency key is 8 to 64 letters, digits, '-' or '_'.")},
            code="idempotency_key",
        )
    return key


def idempotent_create(
    *, scope: str, key: str | None, user, model: type[Created], create: Callable[[], Created]
) -> Created:
    """``create()`` once per (scope, user, key); a repeat gets the first call's object.

    The object's ``idempotent_repeat`` says which it was, so a page can say "already submitted"
    and an API can answer 200 instead of 201. Without a key every call creates. ``create`` runs
    inside this function's transaction, so whatever it enqueues with ``transaction.on_commit``
    waits for the claim to commit too.
    """
    key = idempotency_key_check(key=key)
    if key is None or user is None or not user.is_authenticated:
        return _marked(create(), repeat=False)
    with transaction.atomic():
        try:
            with transaction.atomic():
                claim = IdempotencyKey.objects.create(scope=scope, user=user, key=key)
        except IntegrityError:
            # Committed by an earlier request with this key (we waited on the index for it).
            earlier = idempotent_earlier(scope=scope, key=key, user=user, model=model)
            if earlier is not None:
                return _marked(earlier, repeat=True)
            # What the key created is gone (deleted since): the key may create again.
            claim = IdempotencyKey.objects.get(scope=scope, user=user, key=key)
        created = create()
        IdempotencyKey.objects.filter(pk=claim.pk).update(object_id=str(created.pk))
        return _marked(created, repeat=False)


def idempotent_repeat_of(*, scope: str, key: str | None, user, model: type[Created]) -> Created | None:
    """The earlier request's object, marked as a repeat, or None.

    For a create whose checks would refuse a repeat (a name the first request took) or that
    would redo costly work before ``idempotent_create`` is reached: it asks this first.
    """
    earlier = idempotent_earlier(scope=scope, key=idempotency_key_check(key=key), user=user, model=model)
    return _marked(earlier, repeat=True) if earlier is not None else None


def _marked(obj: Created, *, repeat: bool) -> Created:
    obj.idempotent_repeat = repeat
    return obj
