"""Personas shared by every test: annotator A, annotator B, adjudicator, researcher, outsider."""

import os

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from annotation.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER

PASSWORD = "correct-horse-battery-staple"


def require_services() -> bool:
    return os.environ.get("REQUIRE_SERVICES", "") in {"1", "true", "yes"}


def skip_or_fail(reason: str):
    """A missing service skips on a laptop and fails in CI (REQUIRE_SERVICES=1)."""
    if require_services():
        pytest.fail(f"REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def make_user(username: str, *roles: str, **extra) -> User:
    user = User.objects.create_user(username=username, password=PASSWORD, email=f"{username}@example.org", **extra)
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def annotator_a(db):
    return make_user("annotator_a", ANNOTATOR)


@pytest.fixture
def annotator_b(db):
    return make_user("annotator_b", ANNOTATOR)


@pytest.fixture
def adjudicator(db):
    return make_user("adjudicator", ADJUDICATOR)


@pytest.fixture
def researcher(db):
    return make_user("researcher", RESEARCHER)


@pytest.fixture
def outsider(db):
    """Signed in, but holds no role."""
    return make_user("outsider")


def _client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def researcher_client(researcher):
    return _client_for(researcher)


@pytest.fixture
def annotator_client(annotator_a):
    return _client_for(annotator_a)


@pytest.fixture
def adjudicator_client(adjudicator):
    return _client_for(adjudicator)


@pytest.fixture
def outsider_client(outsider):
    return _client_for(outsider)


@pytest.fixture
def anonymous_client():
    return Client()
