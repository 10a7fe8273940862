"""API tokens: a profile page to see, revoke and re-create one's token; tokens expire after API_TOKEN_TTL_DAYS."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db
URL = "/profile/tokens/"


def age(token, days):
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(days=days))


def api_with(key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_the_page_lives_at_profile_tokens_and_is_linked_from_the_user_menu(annotator_client):
    assert reverse("core:api_token") == URL
    assert f'href="{URL}"'.encode() in annotator_client.get(reverse("home")).content


def test_it_sends_anonymous_visitors_to_sign_in_and_refuses_users_without_a_role(anonymous_client, outsider_client):
    for method in ("get", "post"):
        response = getattr(anonymous_client, method)(URL)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
        assert getattr(outsider_client, method)(URL, {"action": "create"}).status_code == 403
    assert not Token.objects.exists()


def test_it_shows_when_the_token_was_created_and_expires_but_never_the_key(annotator_client, annotator_a, settings):
    settings.API_TOKEN_TTL_DAYS = 30
    token = Token.objects.create(user=annotator_a)
    html = annotator_client.get(URL).content.decode()
    assert token.key not in html
    assert f'<time datetime="{token.created.isoformat()}">' in html
    expires = (token.created + timedelta(days=30)).isoformat()
    assert f'<time datetime="{expires}" data-testid="token-expires">' in html


def test_it_creates_a_token_and_shows_the_key_once_without_javascript(annotator_client, annotator_a):
    response = annotator_client.post(URL, {"action": "create"})
    assert response.status_code == 303 and response["Location"] == URL
    key = Token.objects.get(user=annotator_a).key
    first = annotator_client.get(URL).content.decode()
    assert key in first
    # A refresh shows it no more, and makes no other token.
    again = annotator_client.get(URL).content.decode()
    assert key not in again
    assert Token.objects.get(user=annotator_a).key == key


def test_it_recreates_the_token_with_htmx_and_the_old_one_stops_working(annotator_client, annotator_a):
    old = Token.objects.create(user=annotator_a).key
    response = annotator_client.post(URL, {"action": "create"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and 'data-testid="new-token-key"' in html
    new = Token.objects.get(user=annotator_a).key
    assert new != old and new in html
    assert api_with(old).get(reverse("api:trait-list")).status_code == 401
    assert api_with(new).get(reverse("api:trait-list")).status_code == 200


def test_it_revokes_the_token(annotator_client, annotator_a):
    key = Token.objects.create(user=annotator_a).key
    response = annotator_client.post(URL, {"action": "revoke"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and b'data-testid="no-token"' in response.content
    assert not Token.objects.exists()
    assert api_with(key).get(reverse("api:trait-list")).status_code == 401
    assert annotator_client.post(URL, {"action": "revoke"}).status_code == 303


def test_it_needs_the_csrf_token_to_change_the_token(annotator_a):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator_a)
    assert client.post(URL, {"action": "create"}).status_code == 403
    assert not Token.objects.exists()


def test_it_answers_an_unknown_action_with_a_clear_error(annotator_client):
    response = annotator_client.post(URL, {"action": "steal"})
    assert response.status_code == 400 and b"Unknown action" in response.content
    assert not Token.objects.exists()


def test_it_refuses_an_expired_token_with_401_and_a_clear_message(annotator_a, settings):
    settings.API_TOKEN_TTL_DAYS = 90
    token = Token.objects.create(user=annotator_a)
    age(token, 89)
    assert api_with(token.key).get(reverse("api:trait-list")).status_code == 200
    age(token, 91)
    response = api_with(token.key).get(reverse("api:trait-list"))
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    assert response.json()["detail"].startswith("This token expired on ")
    assert "POST /api/token/" in response.json()["detail"]


def test_it_follows_the_ttl_setting(annotator_a, settings):
    token = Token.objects.create(user=annotator_a)
    age(token, 10)
    settings.API_TOKEN_TTL_DAYS = 7
    assert api_with(token.key).get(reverse("api:trait-list")).status_code == 401
    settings.API_TOKEN_TTL_DAYS = 14
    assert api_with(token.key).get(reverse("api:trait-list")).status_code == 200


def test_post_token_returns_a_fresh_token_once_the_old_one_has_expired(annotator_a, settings):
    settings.API_TOKEN_TTL_DAYS = 90
    credentials = {"username": "annotator_a", "password": PASSWORD}
    first = APIClient().post(reverse("api:token"), credentials, format="json").json()
    created = Token.objects.get(user=annotator_a).created
    assert first["expires"] == (created + timedelta(days=90)).isoformat().replace("+00:00", "Z")
    age(Token.objects.get(user=annotator_a), 91)
    second = APIClient().post(reverse("api:token"), credentials, format="json").json()
    assert second["token"] != first["token"]
    assert Token.objects.get(user=annotator_a).key == second["token"]
    assert api_with(second["token"]).get(reverse("api:trait-list")).status_code == 200
