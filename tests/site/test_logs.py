"""Issue 23, item 12: what the logs say about an ordinary refusal, and at start-up."""

import logging

import pytest
from django.urls import reverse

from tests.site.test_settings import run_manage

# A PermissionDenied as the handler turns it into a 403 (no database: a fresh VAR_DIR has none).
RAISE_403 = """
from django.core.exceptions import PermissionDenied
from django.core.handlers.exception import response_for_exception
from django.test import RequestFactory
try:
    raise PermissionDenied("not a researcher")
except PermissionDenied as exc:
    print(response_for_exception(RequestFactory().get("/studies/"), exc).status_code)
"""


@pytest.mark.django_db
def test_it_logs_a_refused_page_as_one_warning_line(outsider_client, caplog):
    with caplog.at_level(logging.INFO, logger="django.request"):
        response = outsider_client.get(reverse("study:list"))
    assert response.status_code == 403
    refusals = [record for record in caplog.records if record.name == "django.request"]
    assert len(refusals) == 1
    assert refusals[0].levelno == logging.WARNING
    assert refusals[0].exc_info is None
    line = caplog.handler.format(refusals[0])
    assert line.count("\n") == 0 and "Traceback" not in line
    assert "/studies/" in line


def test_it_prints_a_403_once_and_no_axes_banner_in_development(tmp_path):
    """The configuration `make demo` runs with: DEBUG on, Django's own console handler and the root's."""
    result = run_manage("shell", "-c", RAISE_403, DJANGO_ENV="development", VIVID_VAR_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "403"
    lines = result.stderr.splitlines()
    assert lines == ["Forbidden (Permission denied): /studies/ (not a researcher)"], result.stderr
    assert "AXES: BEGIN" not in result.stderr


def test_it_still_prints_the_traceback_of_a_server_error(caplog):
    with caplog.at_level(logging.ERROR, logger="django.request"):
        try:
            raise ValueError("broken")
        except ValueError:
            logging.getLogger("django.request").error("Internal Server Error: /x/", exc_info=True)
    assert "Traceback" in caplog.text and "ValueError: broken" in caplog.text
