"""Pages that answer htmx with a fragment and everyone else with the whole page say ``Vary: HX-Request``,
so no cache hands the fragment to a reload or the back button (core.http.vary_on_htmx)."""

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from django.urls import reverse
from django.utils.cache import patch_vary_headers

from annotation.models import Assignment
from core.http import vary_on_htmx
from evaluation.models import HumanRating
from tests.annotation.factories import (
    client_for,
    make_adjudication_round,
    make_dataset,
    make_round,
    make_version,
    numbered_csv,
)
from tests.evaluation.factories import make_generation_run, make_scoring_task, numbered_dataset

HTMX = {"HX-Request": "true"}


def vary_of(response) -> set[str]:
    return {value.strip().lower() for value in response.get("Vary", "").split(",") if value.strip()}


def test_it_adds_the_header_to_what_the_view_already_varies_on():
    @vary_on_htmx
    def view(request):
        response = HttpResponse("page")
        patch_vary_headers(response, ("Cookie",))
        return response

    response = view(RequestFactory().get("/"))

    assert vary_of(response) == {"cookie", "hx-request"}
    assert view.__name__ == "view"


def _review(annotator_a, annotator_b, researcher, adjudicator):
    round_ = make_round(make_dataset(name="Vary", csv=numbered_csv(3)), [annotator_a, annotator_b], user=researcher)
    assignment = Assignment.objects.filter(item__round=round_, annotator=annotator_a).order_by("position").first()
    return annotator_a, [
        reverse("annotation:review_queue", args=[round_.pk]),
        reverse("annotation:review_item", args=[round_.pk, assignment.pk]),
    ]


def _adjudication(annotator_a, annotator_b, researcher, adjudicator):
    round_, items = make_adjudication_round(annotator_a, annotator_b, researcher)
    return adjudicator, [reverse("annotation:adjudication_item", args=[round_.pk, items[0].pk])]


def _corpus(annotator_a, annotator_b, researcher, adjudicator):
    dataset = make_dataset(name="Vary corpus", csv=numbered_csv(3))
    round_ = make_round(dataset, [annotator_a, annotator_b], user=researcher)
    version = make_version(round_, annotator_a, annotator_b, user=researcher)
    return researcher, [
        reverse("annotation:dataset_detail", args=[dataset.pk]),
        reverse("annotation:round_new"),
        reverse("annotation:version_detail", args=[version.pk]),
    ]


def _scoring(annotator_a, annotator_b, researcher, adjudicator):
    task = make_scoring_task(make_generation_run(numbered_dataset(30)), [annotator_a], user=researcher)
    rating = HumanRating.objects.filter(task=task, rater=annotator_a).order_by("position").first()
    return annotator_a, [
        reverse("evaluation:scoring_queue", args=[task.pk]),
        reverse("evaluation:scoring_item", args=[task.pk, rating.pk]),
    ]


def _token(annotator_a, annotator_b, researcher, adjudicator):
    return researcher, [reverse("core:api_token")]


@pytest.mark.django_db
@pytest.mark.parametrize("pages", [_review, _adjudication, _corpus, _scoring, _token], ids=lambda f: f.__name__[1:])
@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_pages_that_answer_htmx_differently_vary_on_it(
    pages, headers, annotator_a, annotator_b, researcher, adjudicator
):
    user, urls = pages(annotator_a, annotator_b, researcher, adjudicator)
    client = client_for(user)
    for url in urls:
        response = client.get(url, headers=headers)
        assert response.status_code in (200, 302), url
        assert "hx-request" in vary_of(response), url
