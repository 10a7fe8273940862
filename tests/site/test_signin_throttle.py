"""Sign-in abuse: the login page and POST /api/token/ lock out after repeated failures (django-axes)."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOCKED = "Too many failed sign-in attempts"


def sign_in(client, username, password):
    return client.post(reverse("login"), {"username": username, "password": password})


def token(client, username, password):
    return client.post(reverse("api:token"), {"username": username, "password": password}, format="json")


def fail(client, username, times, *, via=sign_in):
    for _ in range(times):
        response = via(client, username, "wrong-password")
    return response


def test_it_locks_the_login_page_after_five_wrong_passwords_with_a_clear_page(researcher, settings):
    client = Client(REMOTE_ADDR="198.51.100.7")
    fourth = fail(client, "researcher", 4)
    assert fourth.status_code == 200 and b"Please enter a correct username and password" in fourth.content
    fifth = sign_in(client, "researcher", "wrong-password")
    assert fifth.status_code == 429
    assert "registration/locked_out.html" in [t.name for t in fifth.templates]
    html = fifth.content.decode()
    assert LOCKED in html and "(in 15 minutes)" in html and "Try again after" in html
    assert int(fifth["Retry-After"]) == 15 * 60
    # Locked: even the right password is refused, and nobody is signed in.
    right = sign_in(client, "researcher", PASSWORD)
    assert right.status_code == 429
    assert "_auth_user_id" not in client.session


def test_it_locks_the_token_endpoint_after_five_wrong_passwords_with_a_json_detail(researcher):
    api = APIClient(REMOTE_ADDR="198.51.100.8")
    fourth = fail(api, "researcher", 4, via=token)
    assert fourth.status_code == 400
    fifth = token(api, "researcher", "wrong-password")
    assert fifth.status_code == 429
    body = fifth.json()
    assert body["detail"].startswith(LOCKED) and "Try again after" in body["detail"] and body["retry_at"]
    assert int(fifth["Retry-After"]) == 15 * 60
    right = token(api, "researcher", PASSWORD)
    assert right.status_code == 429
    assert not Token.objects.exists()


def test_it_counts_the_login_page_and_the_token_endpoint_together(researcher):
    fail(Client(REMOTE_ADDR="198.51.100.9"), "researcher", 3)
    api = APIClient(REMOTE_ADDR="198.51.100.9")
    assert token(api, "researcher", "wrong-password").status_code == 400
    assert token(api, "researcher", "wrong-password").status_code == 429


def test_it_follows_the_failure_limit_and_cool_off_settings(researcher, settings):
    settings.AXES_FAILURE_LIMIT = 2
    settings.AXES_ADDRESS_FAILURE_LIMIT = 2
    settings.AXES_COOLOFF_TIME = timedelta(minutes=1)
    client = Client(REMOTE_ADDR="198.51.100.10")
    assert sign_in(client, "researcher", "x").status_code == 200
    locked = sign_in(client, "researcher", "x")
    assert locked.status_code == 429 and "(in 1 minute)" in locked.content.decode()


def test_it_locks_only_that_user_from_that_address(researcher, annotator_a):
    fail(Client(REMOTE_ADDR="198.51.100.11"), "researcher", 5)
    # The same user from another address, and another user from the same address, still sign in.
    assert sign_in(Client(REMOTE_ADDR="203.0.113.5"), "researcher", PASSWORD).status_code == 302
    assert sign_in(Client(REMOTE_ADDR="198.51.100.11"), "annotator_a", PASSWORD).status_code == 302


def test_it_locks_an_address_that_tries_many_accounts(researcher):
    client = Client(REMOTE_ADDR="198.51.100.12")
    for n in range(19):
        assert sign_in(client, f"guess{n}", "wrong-password").status_code == 200
    assert sign_in(client, "guess19", "wrong-password").status_code == 429
    # Every account from that address, even one never tried...
    assert sign_in(Client(REMOTE_ADDR="198.51.100.12"), "researcher", PASSWORD).status_code == 429
    # ...but not from elsewhere.
    assert sign_in(Client(REMOTE_ADDR="203.0.113.6"), "researcher", PASSWORD).status_code == 302


def test_a_correct_sign_in_before_the_limit_works_and_resets_nothing_wrongly(researcher, annotator_a):
    client = Client(REMOTE_ADDR="198.51.100.13")
    fail(client, "researcher", 4)
    assert sign_in(client, "researcher", PASSWORD).status_code == 302
    assert sign_in(Client(REMOTE_ADDR="198.51.100.13"), "researcher", "wrong-password").status_code == 429

    # An attacker who knows one password cannot clear the address count with it.
    attacker = Client(REMOTE_ADDR="198.51.100.14")
    for n in range(18):
        sign_in(attacker, f"victim{n}", "wrong-password")
    assert sign_in(Client(REMOTE_ADDR="198.51.100.14"), "annotator_a", PASSWORD).status_code == 302
    assert sign_in(attacker, "victim18", "wrong-password").status_code == 200
    assert sign_in(attacker, "victim19", "wrong-password").status_code == 429


def test_the_axes_reset_username_command_lifts_the_lock(researcher):
    client = Client(REMOTE_ADDR="198.51.100.15")
    fail(client, "researcher", 5)
    assert sign_in(client, "researcher", PASSWORD).status_code == 429
    call_command("axes_reset_username", "researcher")
    assert sign_in(client, "researcher", PASSWORD).status_code == 302


def test_an_admin_lifts_the_lock_in_the_admin(researcher):
    client = Client(REMOTE_ADDR="198.51.100.16")
    fail(client, "researcher", 5)
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", "root@example.org", PASSWORD))
    attempt = AccessAttempt.objects.get(username="researcher")
    listing = admin.get(reverse("admin:axes_accessattempt_changelist"))
    assert listing.status_code == 200 and b"researcher" in listing.content
    deleted = admin.post(reverse("admin:axes_accessattempt_delete", args=[attempt.pk]), {"post": "yes"})
    assert deleted.status_code == 302
    assert sign_in(client, "researcher", PASSWORD).status_code == 302


def test_it_ignores_x_forwarded_for_unless_a_setting_trusts_a_proxy_header(researcher, settings):
    # A client rotating a forged X-Forwarded-For is still one address.
    for n in range(5):
        response = Client(REMOTE_ADDR="198.51.100.17", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}").post(
            reverse("login"), {"username": "researcher", "password": "wrong-password"}
        )
    assert response.status_code == 429

    # Behind a proxy that sets X-Real-IP, the header names the client.
    settings.AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_REAL_IP", "REMOTE_ADDR")
    for _ in range(5):
        behind = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_REAL_IP="192.0.2.50")
        response = sign_in(behind, "researcher", "wrong-password")
    assert response.status_code == 429
    assert AccessAttempt.objects.filter(ip_address="192.0.2.50").exists()
    # Another client behind the same proxy is not locked with it.
    other = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_REAL_IP="192.0.2.51")
    assert sign_in(other, "researcher", PASSWORD).status_code == 302


def test_force_login_in_tests_is_not_throttled(researcher):
    fail(Client(), "researcher", 5)
    client = Client()
    client.force_login(researcher)
    assert client.get(reverse("home")).status_code == 200
