"""The Prolific client against the loopback fake: token, errors, retries, pagination, the call log."""

import pytest
from celery.exceptions import SoftTimeLimitExceeded

from prolific.client import ProlificApiError, ProlificClient, ProlificNotConfigured
from prolific.models import ApiCall
from tests.prolific.fake_prolific import TOKEN

pytestmark = pytest.mark.django_db


def test_it_says_which_variable_to_set_without_a_token(settings, monkeypatch):
    monkeypatch.delenv(settings.PROLIFIC_API_TOKEN_ENV, raising=False)
    with pytest.raises(ProlificNotConfigured, match=settings.PROLIFIC_API_TOKEN_ENV):
        ProlificClient()


def test_it_sends_the_token_in_the_header_and_never_stores_it(fake_prolific):
    study_id = fake_prolific.add_study(name="A study")
    answer = ProlificClient().get(f"studies/{study_id}/")
    assert answer["id"] == study_id
    assert fake_prolific.requests[-1]["authorization"] == f"Token {TOKEN}"
    call = ApiCall.objects.get()
    assert (call.method, call.status_code, call.attempt) == ("GET", 200, 1)
    stored = " ".join(str(value) for value in ApiCall.objects.values_list())
    assert TOKEN not in stored


def test_it_redacts_the_token_wherever_it_would_appear(fake_prolific):
    with pytest.raises(ProlificApiError):
        ProlificClient().post("studies/", {"name": f"leak {TOKEN}", "description": TOKEN})
    call = ApiCall.objects.get()
    assert TOKEN not in str(call.request_body) and "[redacted]" in str(call.request_body)


def test_it_says_the_token_is_wrong_on_401(fake_prolific, monkeypatch, settings):
    monkeypatch.setenv(settings.PROLIFIC_API_TOKEN_ENV, "not-the-token")
    with pytest.raises(ProlificApiError) as caught:
        ProlificClient().get("studies/")
    assert caught.value.status == 401
    assert "wrong" in str(caught.value) and settings.PROLIFIC_API_TOKEN_ENV in str(caught.value)
    assert len(fake_prolific.requests) == 1  # a refused token is not retried


def test_it_says_the_token_lacks_permission_on_403(fake_prolific):
    fake_prolific.fail(status=403)
    with pytest.raises(ProlificApiError, match="permission") as caught:
        ProlificClient().get("studies/")
    assert caught.value.status == 403


def test_it_retries_429_honouring_retry_after(fake_prolific, settings, monkeypatch):
    settings.PROLIFIC_RETRY_AFTER_CAP_S = 120
    slept = []
    monkeypatch.setattr("prolific.client.time.sleep", slept.append)
    fake_prolific.fail(status=429, times=2, retry_after="7")
    assert ProlificClient().get("studies/")["results"] == []
    assert slept == [7.0, 7.0]
    assert list(ApiCall.objects.order_by("pk").values_list("status_code", "attempt")) == [(429, 1), (429, 2), (200, 3)]


def test_it_caps_retry_after(fake_prolific, settings, monkeypatch):
    settings.PROLIFIC_RETRY_AFTER_CAP_S = 3
    slept = []
    monkeypatch.setattr("prolific.client.time.sleep", slept.append)
    fake_prolific.fail(status=429, retry_after="3600")
    ProlificClient().get("studies/")
    assert slept == [3]


def test_it_backs_off_exponentially_without_retry_after(fake_prolific, settings, monkeypatch):
    settings.PROLIFIC_BACKOFF_BASE = 0.5
    slept = []
    monkeypatch.setattr("prolific.client.time.sleep", slept.append)
    fake_prolific.fail(status=503, times=3)
    ProlificClient().get("studies/")
    assert slept == [0.5, 1.0, 2.0]


def test_it_gives_up_after_the_configured_attempts(fake_prolific, settings):
    settings.PROLIFIC_MAX_ATTEMPTS = 3
    fake_prolific.fail(status=429, times=5, retry_after="0")
    with pytest.raises(ProlificApiError) as caught:
        ProlificClient().get("studies/")
    assert caught.value.status == 429
    assert ApiCall.objects.count() == 3


def test_it_never_retries_a_5xx_of_an_unsafe_write(fake_prolific):
    fake_prolific.fail(status=502)
    with pytest.raises(ProlificApiError) as caught:
        ProlificClient().post("bulk-bonus-payments/bb1/pay/")
    assert caught.value.status == 502 and not caught.value.definite
    assert len(fake_prolific.calls("POST")) == 1


def test_it_retries_429_even_for_an_unsafe_write(fake_prolific):
    study_id = fake_prolific.add_study()
    fake_prolific.bonuses["bb1"] = {"id": "bb1", "study": study_id}
    fake_prolific.fail(status=429, retry_after="0")
    ProlificClient().post("bulk-bonus-payments/bb1/pay/")
    assert fake_prolific.pay_counts["bb1"] == 1


def test_it_reports_prolifics_own_message(fake_prolific):
    with pytest.raises(ProlificApiError) as caught:
        ProlificClient().post("studies/", {"name": "x"})
    assert caught.value.status == 400 and caught.value.definite
    assert "description: This field is required." in caught.value.message


def test_it_follows_every_page(fake_prolific):
    fake_prolific.page_size = 2
    study_id = fake_prolific.add_study()
    ids = [fake_prolific.add_submission(study_id, f"P{n}") for n in range(5)]
    seen = [item["id"] for item in ProlificClient().paginate(f"studies/{study_id}/submissions/")]
    assert seen == ids
    assert len(fake_prolific.calls("GET", "/submissions/")) == 3


def test_it_never_sends_the_token_to_another_host(fake_prolific):
    client = ProlificClient()
    with pytest.raises(ProlificApiError, match="Refusing"):
        client.get("https://elsewhere.example.org/api/v1/studies/")
    assert fake_prolific.requests == []


def test_it_logs_the_call_with_the_study(fake_prolific, study_for_prolific):
    ProlificClient(study=study_for_prolific).get("studies/")
    assert ApiCall.objects.get().study == study_for_prolific


def test_it_reports_an_unreachable_prolific(settings, monkeypatch):
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1/"
    settings.PROLIFIC_MAX_ATTEMPTS = 2
    settings.PROLIFIC_BACKOFF_BASE = 0.001
    monkeypatch.setenv(settings.PROLIFIC_API_TOKEN_ENV, TOKEN)
    with pytest.raises(ProlificApiError, match="could not be reached") as caught:
        ProlificClient().get("studies/")
    assert caught.value.status is None
    assert ApiCall.objects.count() == 2
    assert all(TOKEN not in call.error for call in ApiCall.objects.all())


def test_it_carries_on_when_the_log_fails_but_lets_a_time_limit_through(fake_prolific, monkeypatch):
    """A broken log never stops a payment's bookkeeping; Celery's soft time limit is not the log's to swallow."""

    def broken(**fields):
        raise RuntimeError("the log table is gone")

    monkeypatch.setattr(ApiCall.objects, "create", broken)
    assert ProlificClient().get("workspaces/")["results"]

    def out_of_time(**fields):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(ApiCall.objects, "create", out_of_time)
    with pytest.raises(SoftTimeLimitExceeded):
        ProlificClient().get("workspaces/")
