"""The site-wide Content-Security-Policy, Referrer-Policy and Permissions-Policy,
and the templates that must stay runnable under them (no inline script or handler)."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from annotation.models import Dataset
from study.services.participants import prolific_id_for
from study.services.simulation import entry_url
from tests.study.factories import make_study

pytestmark = pytest.mark.django_db

TEMPLATES = Path(settings.BASE_DIR) / "templates"


def policy(response) -> dict[str, list[str]]:
    header = response.get("Content-Security-Policy")
    assert header, f"{response.status_code} answer without a Content-Security-Policy"
    directives = {}
    for part in header.split(";"):
        name, *sources = part.split()
        directives[name] = sources
    return directives


def assert_hardened(response) -> None:
    directives = policy(response)
    assert directives["default-src"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'self'"]
    script = directives.get("script-src", directives["default-src"])
    assert "'unsafe-inline'" not in script and "'unsafe-eval'" not in script
    assert "'unsafe-inline'" not in directives.get("style-src", directives["default-src"])
    assert response["Referrer-Policy"] == "same-origin"
    features = response["Permissions-Policy"]
    for feature in ("camera", "microphone", "geolocation", "payment", "usb"):
        assert f"{feature}=()" in features, features


def test_it_sends_the_policy_with_a_staff_page(researcher_client):
    response = researcher_client.get(reverse("annotation:dataset_list"))
    assert response.status_code == 200
    assert_hardened(response)


def test_it_sends_the_policy_with_the_login_page(anonymous_client):
    response = anonymous_client.get(reverse("login"))
    assert response.status_code == 200
    assert_hardened(response)


def test_it_sends_the_policy_with_an_htmx_fragment(annotator_client):
    dataset = Dataset.objects.create(name="Fragment corpus")
    response = annotator_client.get(reverse("annotation:dataset_detail", args=[dataset.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and b"<html" not in response.content
    assert_hardened(response)


def test_it_sends_the_policy_with_an_api_answer(researcher_client, anonymous_client):
    assert_hardened(researcher_client.get(reverse("api:round_list")))
    # Refusals too: an error page is a page.
    assert_hardened(anonymous_client.get(reverse("api:round_list")))


def test_it_sends_the_policy_with_a_participant_page():
    study = make_study()
    client = Client()
    entry = client.get(entry_url("", study.slug, pid=prolific_id_for("CSPPID01"), group="american"))
    assert_hardened(entry)
    page = client.get(reverse("study:run", args=[study.slug]))
    assert page.status_code == 200 and b'name="step"' in page.content
    assert_hardened(page)


def test_it_lets_the_participant_form_redirect_to_prolific(anonymous_client):
    # Chrome applies form-action to where a form submission is redirected.
    form_action = policy(anonymous_client.get(reverse("login")))["form-action"]
    assert form_action == ["'self'", "https://app.prolific.com"]


def test_it_serves_swagger_ui_under_the_policy(annotator_client):
    page = annotator_client.get(reverse("api-docs"))
    assert page.status_code == 200
    assert_hardened(page)
    html = page.content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and "<style" not in html
    script = annotator_client.get(reverse("api-docs"), {"script": ""})
    assert script.status_code == 200 and "SwaggerUIBundle(" in script.content.decode()


def test_it_sends_the_policy_with_the_admin(client, django_user_model):
    admin = django_user_model.objects.create_superuser("csp-admin", "csp@example.org", "pw-not-used")
    client.force_login(admin)
    response = client.get(reverse("admin:index"))
    assert response.status_code == 200
    assert_hardened(response)


def test_it_sends_the_policy_with_a_not_found_page(researcher_client):
    response = researcher_client.get("/no-such-page/")
    assert response.status_code == 404
    assert_hardened(response)


def _templates():
    return sorted(TEMPLATES.rglob("*.html"))


def test_it_finds_templates_to_scan():
    assert len(_templates()) > 50


@pytest.mark.parametrize("path", _templates(), ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_it_keeps_script_and_handlers_out_of_a_template(path):
    text = path.read_text()
    # Template comments may mention tags; they never reach a browser.
    text = re.sub(r"{#.*?#}", "", text)
    text = re.sub(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}", "", text, flags=re.S)
    inline_scripts = re.findall(r"<script\b(?![^>]*\bsrc=)[^>]*>", text, flags=re.I)
    assert not inline_scripts, f"{path}: inline <script> (the CSP blocks it; move it to static/js)"
    handlers = re.findall(r"\son[a-z]+\s*=", text, flags=re.I)
    assert not handlers, f"{path}: inline event handler {handlers} (the CSP blocks it; add a listener in static/js)"
    assert not re.search(r"\bhx-on\b|\bhx-on[:-]", text), f"{path}: hx-on needs eval, which the CSP forbids"
    assert "javascript:" not in text.lower(), f"{path}: javascript: URL"
    assert not re.search(r"\sstyle\s*=", text, flags=re.I), f"{path}: style attribute (the CSP blocks it; use a class)"
    assert not re.search(r"<style\b", text, flags=re.I), f"{path}: <style> element (move it to static/css)"
