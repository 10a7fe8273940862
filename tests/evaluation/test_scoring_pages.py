"""The human scoring pages: each persona, task creation, the rater's queue with htmx, drafts, two tabs, blindness."""

import re
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.models import HumanRating, RatingStatus, RunStatus, ScoringTask
from evaluation.services.scoring import rating_submit

from .factories import (
    GENERATION_MODEL,
    JUDGE_REPLY,
    make_generation_run,
    make_judge_run,
    make_scoring_task,
    numbered_dataset,
)

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def text_of(response) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", response.content.decode(), flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.fixture
def generation_run(db):
    return make_generation_run(numbered_dataset(220))


@pytest.fixture
def task(generation_run, annotator_a, annotator_b, researcher):
    return make_scoring_task(generation_run, [annotator_a, annotator_b], user=researcher)


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def client_a(annotator_a):
    return login(annotator_a)


@pytest.fixture
def client_b(annotator_b):
    return login(annotator_b)


def first_rating(task, user) -> HumanRating:
    return HumanRating.objects.filter(task=task, rater=user).order_by("position").first()


def item_url(rating) -> str:
    return reverse("evaluation:scoring_item", args=[rating.task_id, rating.pk])


def scores(**values) -> dict:
    data = {"accuracy": "4", "completeness": "3", "native_alignment": "4", "score": "4", "note": "", "revision": "0"}
    data.update({k: str(v) for k, v in values.items()})
    return data


# --- Permissions ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["scoring_task_list", "scoring_task_new"])
def test_it_keeps_the_researcher_pages_from_other_roles(
    name, client_a, adjudicator_client, outsider_client, anonymous_client
):
    url = reverse(f"evaluation:{name}")
    assert client_a.get(url).status_code == 403
    assert adjudicator_client.get(url).status_code == 403
    assert outsider_client.get(url).status_code == 403
    response = anonymous_client.get(url)
    assert response.status_code == 302 and "/login" in response["Location"]


def test_it_keeps_the_task_detail_from_raters(task, client_a, outsider_client, anonymous_client, researcher_client):
    url = reverse("evaluation:scoring_task_detail", args=[task.pk])
    assert client_a.get(url).status_code == 403
    assert outsider_client.get(url).status_code == 403
    assert anonymous_client.get(url).status_code == 302
    assert researcher_client.get(url).status_code == 200


def test_it_keeps_the_queue_from_non_annotators(
    task, adjudicator_client, outsider_client, researcher_client, anonymous_client
):
    url = reverse("evaluation:scoring_queue", args=[task.pk])
    assert adjudicator_client.get(url).status_code == 403
    assert outsider_client.get(url).status_code == 403
    assert researcher_client.get(url).status_code == 403
    assert anonymous_client.get(url).status_code == 302
    assert adjudicator_client.get(reverse("evaluation:scoring_mine")).status_code == 403


def test_it_hides_a_rating_of_someone_else(task, annotator_a, client_b):
    rating = first_rating(task, annotator_a)
    assert client_b.get(item_url(rating)).status_code == 404
    assert client_b.post(item_url(rating), scores()).status_code == 404
    draft_url = reverse("evaluation:scoring_draft", args=[task.pk, rating.pk])
    assert client_b.post(draft_url, scores()).status_code == 404
    rating.refresh_from_db()
    assert rating.status == RatingStatus.PENDING and rating.draft == {}


def test_it_hides_a_task_from_an_annotator_who_does_not_rate_it(task, db):
    from tests.conftest import make_user

    other = make_user("annotator_c", "Annotator")
    assert login(other).get(reverse("evaluation:scoring_queue", args=[task.pk])).status_code == 404


def test_it_keeps_the_draft_endpoint_from_other_roles(task, annotator_a, adjudicator_client, anonymous_client):
    rating = first_rating(task, annotator_a)
    url = reverse("evaluation:scoring_draft", args=[task.pk, rating.pk])
    assert adjudicator_client.post(url, scores()).status_code == 403
    assert anonymous_client.post(url, scores()).status_code == 302


# --- Task creation ----------------------------------------------------------------------------


def test_it_creates_the_papers_design_from_the_form(researcher_client, annotator_a, annotator_b):
    run = make_generation_run(numbered_dataset(240))
    response = researcher_client.get(reverse("evaluation:scoring_task_new"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'value="200"' in html and 'value="50"' in html
    response = researcher_client.post(
        reverse("evaluation:scoring_task_new"),
        {
            "name": "Table 1",
            "run": run.pk,
            "raters": [annotator_a.pk, annotator_b.pk],
            "n_items": 200,
            "n_shared": 50,
            "seed": 42,
        },
    )
    task = ScoringTask.objects.get(name="Table 1")
    assert response.status_code == 302 and response["Location"] == reverse(
        "evaluation:scoring_task_detail", args=[task.pk]
    )
    assert (task.n_items, task.n_shared, task.seed) == (200, 50, 42)
    a = set(HumanRating.objects.filter(task=task, rater=annotator_a).values_list("item_id", flat=True))
    b = set(HumanRating.objects.filter(task=task, rater=annotator_b).values_list("item_id", flat=True))
    # 200 sampled, 50 shared, the other 150 split: 125 each (150 each with 50 shared would need 250 items).
    assert (len(a | b), len(a & b), len(a - b), len(b - a)) == (200, 50, 75, 75)
    assert (len(a), len(b)) == (125, 125)
    assert a | b == set(task.sample) and a & b == set(task.sample[:50])
    assert sorted(HumanRating.objects.filter(task=task, rater=annotator_a).values_list("position", flat=True)) == list(
        range(1, 126)
    )

    detail = text_of(researcher_client.get(reverse("evaluation:scoring_task_detail", args=[task.pk])))
    assert "annotator_a 0/125" in detail and "annotator_b 0/125" in detail
    assert "Sample size 200" in detail and "Shared items (every rater) 50" in detail and "Seed 42" in detail


def test_it_gives_each_rater_150_with_50_shared_out_of_250(researcher_client, annotator_a, annotator_b):
    """The paper's per-rater load (150 each, 50 overlap) is a sample of 250."""
    run = make_generation_run(numbered_dataset(260))
    researcher_client.post(
        reverse("evaluation:scoring_task_new"),
        {
            "name": "Paper",
            "run": run.pk,
            "raters": [annotator_a.pk, annotator_b.pk],
            "n_items": 250,
            "n_shared": 50,
            "seed": 1,
        },
    )
    task = ScoringTask.objects.get(name="Paper")
    a = set(HumanRating.objects.filter(task=task, rater=annotator_a).values_list("item_id", flat=True))
    b = set(HumanRating.objects.filter(task=task, rater=annotator_b).values_list("item_id", flat=True))
    assert (len(a | b), len(a), len(b), len(a & b)) == (250, 150, 150, 50)


def test_it_offers_only_done_generation_runs_and_annotators(
    researcher_client, generation_run, adjudicator, annotator_a
):
    queued = make_generation_run(numbered_dataset(5), status=RunStatus.QUEUED)
    judge = make_judge_run(generation_run, 3, reply=JUDGE_REPLY)
    form = researcher_client.get(reverse("evaluation:scoring_task_new")).context["form"]
    runs = set(form.fields["run"].queryset)
    assert generation_run in runs and queued not in runs and judge not in runs
    raters = set(form.fields["raters"].queryset)
    assert annotator_a in raters and adjudicator not in raters
    response = researcher_client.post(
        reverse("evaluation:scoring_task_new"),
        {"name": "x", "run": queued.pk, "raters": [adjudicator.pk], "n_items": 10, "n_shared": 20},
    )
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert {"run", "raters", "n_shared"} <= set(errors)
    assert not ScoringTask.objects.exists()


def test_it_lists_tasks_with_progress(task, researcher_client, annotator_a):
    rating_submit(rating=first_rating(task, annotator_a), user=annotator_a, values={"score": 2}, revision=0)
    text = text_of(researcher_client.get(reverse("evaluation:scoring_task_list")))
    assert "Đợt chấm 1" in text and "annotator_a: 1/13" in text and "annotator_b: 0/13" in text


# --- The rater's queue ------------------------------------------------------------------------


def test_it_redirects_the_queue_to_the_first_unscored_item_by_position(task, annotator_a, client_a):
    ratings = list(HumanRating.objects.filter(task=task, rater=annotator_a).order_by("position"))
    rating_submit(rating=ratings[0], user=annotator_a, values={"score": 5}, revision=0)
    response = client_a.get(reverse("evaluation:scoring_queue", args=[task.pk]))
    assert response.status_code == 302 and response["Location"] == item_url(ratings[1])


def test_it_shows_the_expression_the_reference_and_the_explanation_with_the_rubric(task, annotator_a, client_a):
    rating = first_rating(task, annotator_a)
    response = client_a.get(item_url(rating))
    assert response.status_code == 200
    html = response.content.decode()
    expression = rating.item.expression
    assert f'<h1 id="scoring-expression" lang="vi" tabindex="-1">{expression.text}</h1>' in html
    assert expression.explanation in html and rating.item.response in html
    assert '<details class="scoring-rubric">' in html and "Độ chính xác" in html
    for field in ("accuracy", "completeness", "native_alignment", "score"):
        assert f'data-dimension="{field}"' in html
        for value in range(6):
            assert f'name="{field}" value="{value}"' in html
    assert 'name="revision"' in html and "Keyboard shortcuts" in html
    assert 'hx-trigger="change delay:300ms from:#scoring-form' in html
    text = text_of(response)
    assert f"Item {rating.position} of 13" in text and "0 of 13 submitted" in text


def test_it_answers_an_htmx_submit_with_the_next_item_and_pushes_its_url(task, annotator_a, client_a):
    ratings = list(HumanRating.objects.filter(task=task, rater=annotator_a).order_by("position"))
    response = client_a.post(item_url(ratings[0]), scores(), headers=HTMX)
    assert response.status_code == 200
    assert response["HX-Push-Url"] == item_url(ratings[1])
    html = response.content.decode()
    assert "<html" not in html and ratings[1].item.expression.text in html
    assert "1 of 13 submitted" in text_of(response)
    ratings[0].refresh_from_db()
    assert (ratings[0].status, ratings[0].score, ratings[0].accuracy, ratings[0].revision) == (
        RatingStatus.SUBMITTED,
        4,
        4,
        1,
    )


def test_it_redirects_a_plain_submit_and_ends_on_the_rater_list(task, annotator_a, client_a):
    ratings = list(HumanRating.objects.filter(task=task, rater=annotator_a).order_by("position"))
    for rating in ratings[:-1]:
        rating_submit(rating=rating, user=annotator_a, values={"score": 1}, revision=0)
    response = client_a.post(item_url(ratings[-1]), scores(score=0))
    assert response.status_code == 302 and response["Location"] == reverse("evaluation:scoring_queue", args=[task.pk])
    page = client_a.get(response["Location"])
    assert page.status_code == 200 and "every item" in text_of(page)
    response = client_a.post(item_url(ratings[0]), scores(score=2, revision=1), headers=HTMX)
    assert response["HX-Push-Url"] == reverse("evaluation:scoring_queue", args=[task.pk])


def test_it_requires_the_overall_score(task, annotator_a, client_a):
    rating = first_rating(task, annotator_a)
    response = client_a.post(item_url(rating), scores(score=""), headers=HTMX)
    assert response.status_code == 200 and "overall score" in text_of(response)
    assert client_a.post(item_url(rating), scores(score="9")).status_code == 400
    rating.refresh_from_db()
    assert rating.status == RatingStatus.PENDING


def test_it_keeps_a_draft_across_a_reload(task, annotator_a, client_a):
    rating = first_rating(task, annotator_a)
    draft_url = reverse("evaluation:scoring_draft", args=[task.pk, rating.pk])
    response = client_a.post(
        draft_url, {"accuracy": "2", "score": "", "note": "chưa chắc", "revision": "0"}, headers=HTMX
    )
    assert response.status_code == 200 and "Draft saved" in response.content.decode()
    page = client_a.get(item_url(rating)).content.decode()
    assert re.search(r'name="accuracy" value="2"[^>]*checked', page)
    assert "chưa chắc" in page and "Draft restored" in page
    rating.refresh_from_db()
    assert rating.status == RatingStatus.DRAFT and rating.revision == 0
    # The queue comes back to the draft.
    assert client_a.get(reverse("evaluation:scoring_queue", args=[task.pk]))["Location"] == item_url(rating)


def test_it_refuses_a_draft_from_a_stale_tab(task, annotator_a, client_a):
    rating = first_rating(task, annotator_a)
    client_a.post(item_url(rating), scores(score=5))
    response = client_a.post(
        reverse("evaluation:scoring_draft", args=[task.pk, rating.pk]), scores(score=1, revision=0)
    )
    assert "another tab" in response.content.decode()
    rating.refresh_from_db()
    assert rating.draft == {} and rating.score == 5


def test_it_keeps_the_input_of_a_second_tab_on_conflict(task, annotator_a, client_a):
    rating = first_rating(task, annotator_a)
    client_a.post(item_url(rating), scores(score=5, note="tab một"))
    response = client_a.post(item_url(rating), scores(score=1, accuracy=0, note="tab hai"))
    assert response.status_code == 409
    html = response.content.decode()
    assert "saved from another tab" in html
    assert "tab một" in html  # the saved scores are shown
    assert re.search(r'name="score" value="1"[^>]*checked', html) and "tab hai" in html  # the input is kept
    assert 'name="revision" value="1"' in html
    rating.refresh_from_db()
    assert (rating.score, rating.revision) == (5, 1)
    # Under htmx the same conflict is a 200 panel; submitting again on purpose replaces the scores.
    assert client_a.post(item_url(rating), scores(score=1, revision=0), headers=HTMX).status_code == 200
    client_a.post(item_url(rating), scores(score=1, accuracy=0, note="tab hai", revision=1))
    rating.refresh_from_db()
    assert (rating.score, rating.note, rating.revision) == (1, "tab hai", 2)


def test_it_treats_a_double_submit_as_saved_once(task, annotator_a, client_a):
    ratings = list(HumanRating.objects.filter(task=task, rater=annotator_a).order_by("position"))
    first = client_a.post(item_url(ratings[0]), scores(score=3), headers=HTMX)
    second = client_a.post(item_url(ratings[0]), scores(score=3), headers=HTMX)
    assert first.status_code == second.status_code == 200
    assert second["HX-Push-Url"] == item_url(ratings[1])
    assert "saved from another tab" not in second.content.decode()
    ratings[0].refresh_from_db()
    assert ratings[0].revision == 1
    # Submitting the same scores again from the current revision is no new revision either.
    client_a.post(item_url(ratings[0]), scores(score=3, revision=1))
    ratings[0].refresh_from_db()
    assert ratings[0].revision == 1


# --- Blindness --------------------------------------------------------------------------------


def test_it_never_shows_rater_b_another_raters_score_the_model_or_a_judge_score(
    task, annotator_a, annotator_b, client_b
):
    make_judge_run(task.run, 3, reply=JUDGE_REPLY)
    shared = HumanRating.objects.filter(task=task, rater=annotator_a, item_id__in=task.sample[: task.n_shared])
    for rating in shared:
        rating_submit(rating=rating, user=annotator_a, values={"score": 5}, note="GHI-CHU-CUA-A", revision=0)
    b_shared = HumanRating.objects.get(task=task, rater=annotator_b, item_id=task.sample[0])
    pages = [
        client_b.get(reverse("evaluation:scoring_mine")),
        client_b.get(reverse("evaluation:scoring_queue", args=[task.pk]), follow=True),
        client_b.get(item_url(b_shared)),
        client_b.post(item_url(b_shared), scores(score=2), headers=HTMX),
        client_b.get(item_url(b_shared)),
    ]
    for response in pages:
        assert response.status_code == 200
        html = response.content.decode()
        assert "GHI-CHU-CUA-A" not in html
        assert GENERATION_MODEL not in html
        assert "JUDGE-REPLY-7f3a" not in html
        assert "annotator_a" not in html
    assert "1 of 13 submitted" in text_of(pages[-1])  # B's own progress, not A's
