"""The one idempotency mechanism: a create repeated with the same key gives back what the first made."""

import time

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import connection

from core.forms import IdempotentFormMixin
from core.models import IdempotencyKey
from core.services.idempotency import idempotent_create
from tests.concurrency import at_the_same_instant

KEY = "key-0123456789"


def _group_create(name):
    return lambda: Group.objects.create(name=name)


@pytest.mark.django_db
def test_it_creates_once_and_returns_the_first_object_for_a_repeat(researcher):
    first = idempotent_create(scope="test.group", key=KEY, user=researcher, model=Group, create=_group_create("one"))
    again = idempotent_create(scope="test.group", key=KEY, user=researcher, model=Group, create=_group_create("two"))

    assert (first.idempotent_repeat, again.idempotent_repeat) == (False, True)
    assert again.pk == first.pk
    assert not Group.objects.filter(name="two").exists()


@pytest.mark.django_db
def test_it_creates_every_time_without_a_key(researcher):
    idempotent_create(scope="test.group", key=None, user=researcher, model=Group, create=_group_create("a"))
    idempotent_create(scope="test.group", key="", user=researcher, model=Group, create=_group_create("b"))

    assert set(Group.objects.filter(name__in=["a", "b"]).values_list("name", flat=True)) == {"a", "b"}
    assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db
def test_it_keeps_keys_apart_by_scope_and_user(researcher, annotator_a):
    idempotent_create(scope="test.group", key=KEY, user=researcher, model=Group, create=_group_create("r"))
    by_other_user = idempotent_create(
        scope="test.group", key=KEY, user=annotator_a, model=Group, create=_group_create("a")
    )
    in_other_scope = idempotent_create(
        scope="test.other", key=KEY, user=researcher, model=Group, create=_group_create("o")
    )

    assert not by_other_user.idempotent_repeat and not in_other_scope.idempotent_repeat


@pytest.mark.django_db
def test_it_frees_the_key_when_the_create_fails(researcher):
    def refuse():
        Group.objects.create(name="half-written")
        raise ValidationError({"name": "refused"})

    with pytest.raises(ValidationError):
        idempotent_create(scope="test.group", key=KEY, user=researcher, model=Group, create=refuse)
    fixed = idempotent_create(scope="test.group", key=KEY, user=researcher, model=Group, create=_group_create("fixed"))

    assert not fixed.idempotent_repeat and fixed.name == "fixed"
    assert not Group.objects.filter(name="half-written").exists()


@pytest.mark.django_db
def test_it_creates_again_when_what_the_key_made_was_deleted(researcher):
    first = idempotent_create(scope="test.group", key=KEY, user=researcher, model=Group, create=_group_create("x"))
    first.delete()

    again = idempotent_create(scope="test.group", key=KEY, user=researcher, model=Group, create=_group_create("y"))

    assert not again.idempotent_repeat and again.name == "y"


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["short", "has space 123", "x" * 65, "semi;colon12"])
def test_it_refuses_a_malformed_key_by_name(researcher, key):
    with pytest.raises(ValidationError) as refused:
        idempotent_create(scope="test.group", key=key, user=researcher, model=Group, create=_group_create("z"))

    assert "idempotency_key" in refused.value.message_dict
    assert not Group.objects.filter(name="z").exists()


def test_it_gives_each_rendered_form_a_fresh_key_and_keeps_a_posted_one():
    first, second = IdempotentFormMixin(), IdempotentFormMixin()
    posted = IdempotentFormMixin(data={"idempotency_key": KEY})

    assert first["idempotency_key"].value() != second["idempotency_key"].value()
    assert 'type="hidden"' in str(first["idempotency_key"])
    assert posted.is_valid() and posted.cleaned_data["idempotency_key"] == KEY


@pytest.mark.services
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_creates_once_when_two_requests_with_one_key_arrive_at_the_same_instant(researcher):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent connections need a database file or PostgreSQL")

    def slow_create(name):
        def create():
            # Hold the first claim open long enough that the second request arrives while it runs.
            time.sleep(0.3)
            return Group.objects.create(name=name)

        return create

    def request(name):
        return lambda: idempotent_create(
            scope="test.race", key=KEY, user=researcher, model=Group, create=slow_create(name)
        )

    results, errors = at_the_same_instant(request("left"), request("right"))

    assert errors == []
    assert sorted(group.idempotent_repeat for group in results) == [False, True]
    assert results[0].pk == results[1].pk
    assert Group.objects.filter(name__in=["left", "right"]).count() == 1
