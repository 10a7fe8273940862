"""Role checks read the user's groups on every request: a change of role shows on the next one."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from core.roles import ADJUDICATOR, ALL_ROLES, ANNOTATOR, RESEARCHER, user_roles
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def test_it_refuses_a_removed_role_on_the_next_request():
    user = make_user("changing_roles", ANNOTATOR)
    client = Client()
    client.force_login(user)
    assert client.get(reverse("annotation:dataset_list")).status_code == 200
    user.groups.remove(Group.objects.get(name=ANNOTATOR))
    assert client.get(reverse("annotation:dataset_list")).status_code == 403
    user.groups.add(Group.objects.get(name=RESEARCHER))
    assert client.get(reverse("annotation:dataset_list")).status_code == 200


def test_it_counts_only_the_role_groups_and_every_role_of_a_superuser():
    user = make_user("several_groups", ADJUDICATOR)
    user.groups.add(Group.objects.create(name="Not a role"))
    assert user_roles(user) == {ADJUDICATOR}
    assert user_roles(make_user("root", is_superuser=True)) == set(ALL_ROLES)
