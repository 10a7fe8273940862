"""The scoring POST (issue 14): a query budget for the htmx submit; the same scores stored, the same next item."""

import pytest

from evaluation.models import HumanRating, RatingStatus

from .test_scoring_pages import HTMX, client_a, generation_run, item_url, scores, task  # noqa: F401

pytestmark = pytest.mark.django_db

# 13 queries measured when this test was written (the form's inputs are written by core.forms.InputTagRenderer).
SCORING_POST_MAX_QUERIES = 13


def test_the_htmx_submit_stores_the_scores_and_shows_the_next_item(
    client_a,  # noqa: F811
    task,  # noqa: F811
    annotator_a,
    django_assert_max_num_queries,
):
    queue = list(HumanRating.objects.filter(task=task, rater=annotator_a).order_by("position", "id"))
    with django_assert_max_num_queries(SCORING_POST_MAX_QUERIES):
        response = client_a.post(item_url(queue[0]), scores(score=4, accuracy=2), headers=HTMX)
    assert response.status_code == 200 and response["HX-Push-Url"] == item_url(queue[1])
    html = response.content.decode()
    # No prefetch of the page after (the htmx flow never used it); the plain link to it stays.
    assert 'rel="prefetch"' not in html and f'href="{item_url(queue[2])}"' in html
    stored = HumanRating.objects.get(pk=queue[0].pk)
    assert (stored.status, stored.score, stored.accuracy) == (RatingStatus.SUBMITTED, 4, 2)
