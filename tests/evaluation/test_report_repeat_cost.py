"""A judge run repeated from the judge-versus-human report is estimated like any run: above
EVAL_COST_CONFIRM_USD it starts only with the page's confirmation, and nothing is stored without it."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from evaluation.models import Run
from llm.models import ModelConfig

from . import test_judge_agreement as data

corpus, models_, generation, raters, rated = data.corpus, data.models_, data.generation, data.raters, data.rated
JUDGE, make_judge = data.JUDGE, data.make_judge

pytestmark = pytest.mark.django_db


@pytest.fixture
def priced_judge(rated, settings):
    settings.EVAL_COST_CONFIRM_USD = 0.000001
    judge = make_judge(rated, JUDGE, seed=0)
    ModelConfig.objects.filter(pk=judge.model_id).update(price_input=2.0, price_output=10.0)
    return judge


def test_it_asks_for_the_cost_confirmation_before_repeating_a_judge_run(rated, priced_judge, researcher_client):
    url = reverse("evaluation:human_report_repeat", args=[rated.pk])
    page = researcher_client.get(reverse("evaluation:human_report", args=[rated.pk])).content.decode()
    assert 'name="confirm_cost"' in page

    refused = researcher_client.post(url, {"judge_run": priced_judge.pk})

    said = " ".join(str(m) for m in get_messages(refused.wsgi_request))
    assert refused.status_code == 302 and f"#{priced_judge.pk}" in said and "Confirm the cost" in said
    assert "US$" in said and Run.objects.filter(kind="judge").count() == 1

    started = researcher_client.post(url, {"judge_run": priced_judge.pk, "confirm_cost": "on"})

    repeat = Run.objects.filter(kind="judge").order_by("-id").first()
    assert started.status_code == 302 and repeat.pk != priced_judge.pk
    assert repeat.estimate["needs_confirmation"] and repeat.estimate["confirmed"] is True
    assert repeat.estimate["price_input"] == 2.0 and repeat.estimate["n_requests"] == repeat.items.count()
    said = " ".join(str(m) for m in get_messages(started.wsgi_request))
    assert "Estimated" in said


def test_it_repeats_a_judge_run_below_the_threshold_without_asking(rated, researcher_client, settings):
    settings.EVAL_COST_CONFIRM_USD = 1000.0
    judge = make_judge(rated, JUDGE, seed=0)
    ModelConfig.objects.filter(pk=judge.model_id).update(price_input=2.0, price_output=10.0)

    researcher_client.post(reverse("evaluation:human_report_repeat", args=[rated.pk]), {"judge_run": judge.pk})

    repeat = Run.objects.filter(kind="judge").order_by("-id").first()
    assert repeat.pk != judge.pk and repeat.estimate["confirmed"] is False and repeat.estimate["cost"] > 0
