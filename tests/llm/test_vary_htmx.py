"""Pages of the llm and evaluation apps that answer htmx with a fragment say so in ``Vary``: a cache in
between must not hand the fragment to a page load, or the page to a poll."""

import pytest
from django.urls import reverse

from tests.evaluation.factories import make_model, make_run

pytestmark = pytest.mark.django_db


def test_it_varies_the_models_page_on_htmx(researcher_client):
    model = make_model("vary-model")
    page = researcher_client.get(reverse("llm:model_list"))
    row = researcher_client.get(reverse("llm:model_list"), {"model": model.pk}, HTTP_HX_REQUEST="true")
    assert page.status_code == row.status_code == 200 and page.content != row.content
    assert "HX-Request" in page["Vary"] and "HX-Request" in row["Vary"]


def test_it_varies_the_run_progress_on_htmx(researcher_client, dataset):
    run = make_run(dataset, make_model("vary-run"))
    url = reverse("evaluation:run_progress", args=[run.pk])
    plain, live = researcher_client.get(url), researcher_client.get(url, HTTP_HX_REQUEST="true")
    assert plain.status_code == live.status_code == 200 and plain.content != live.content
    assert "HX-Request" in plain["Vary"] and "HX-Request" in live["Vary"]
