"""Human scoring services: sampling and overlap, ratings, and the import_ratings CLI."""

import io
import random
from collections import Counter

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import CommandError, call_command

from annotation.models import Expression
from evaluation.models import HumanRating, RatingStatus
from evaluation.services.scoring import RatingConflict, rating_draft_save, rating_submit, scoring_task_create

from .factories import make_generation_run, numbered_dataset

pytestmark = pytest.mark.django_db


def test_it_samples_200_items_with_50_shared_and_the_rest_split(annotator_a, annotator_b, researcher):
    # The paper's "200 items, 150 each, 50 shared" does not add up (150 + 150 - 50 = 250):
    # we keep the 200 items and the 50 shared, so each rater scores 50 + 75 = 125.
    run = make_generation_run(numbered_dataset(260))
    task = scoring_task_create(name="T1", run=run, raters=[annotator_a, annotator_b], seed=11, user=researcher)
    assert task.n_items == 200 and task.n_shared == 50 and len(task.sample) == 200
    per_rater = Counter(task.ratings.values_list("rater__username", flat=True))
    assert per_rater == {"annotator_a": 125, "annotator_b": 125}
    shared = Counter(task.ratings.values_list("item_id", flat=True))
    assert sum(1 for n in shared.values() if n == 2) == 50
    orders = [
        list(task.ratings.filter(rater=r).order_by("position").values_list("item_id", flat=True))
        for r in (annotator_a, annotator_b)
    ]
    assert orders[0][:50] != orders[1][:50]  # each rater has an own random order
    done = list(run.items.order_by("id").values_list("id", flat=True))
    assert task.sample == random.Random(11).sample(done, 200)  # the seed reproduces the sample
    with pytest.raises(ValidationError, match="already scoring this run"):
        scoring_task_create(name="T2", run=run, raters=[annotator_a], seed=11)


def test_it_refuses_a_bad_task(annotator_a):
    run = make_generation_run(numbered_dataset(5))
    with pytest.raises(ValidationError) as excinfo:
        scoring_task_create(name="", run=run, raters=[annotator_a], n_items=3, n_shared=4)
    assert {"name", "n_shared"} <= set(excinfo.value.message_dict)


def test_it_rates_with_drafts_validation_and_two_tab_safety(annotator_a, annotator_b):
    run = make_generation_run(numbered_dataset(3))
    task = scoring_task_create(name="T", run=run, raters=[annotator_a], n_items=3, n_shared=0, seed=1)
    rating = task.ratings.first()
    rating_draft_save(rating=rating, user=annotator_a, data={"score": "4", "note": "gần đúng", "evil": 1})
    rating.refresh_from_db()
    assert rating.draft == {"score": "4", "note": "gần đúng"} and rating.status == RatingStatus.DRAFT
    with pytest.raises(PermissionDenied):
        rating_draft_save(rating=rating, user=annotator_b, data={})
    with pytest.raises(ValidationError) as excinfo:
        rating_submit(rating=rating, user=annotator_a, values={"score": "7", "accuracy": "x"})
    assert set(excinfo.value.message_dict) == {"score", "accuracy"}
    rating_submit(rating=rating, user=annotator_a, values={"score": 4, "accuracy": 5}, revision=0)
    with pytest.raises(RatingConflict):
        rating_submit(rating=rating, user=annotator_a, values={"score": 1}, revision=0)
    rating.refresh_from_db()
    assert (rating.score, rating.accuracy, rating.status, rating.revision, rating.draft) == (4, 5, "submitted", 1, {})


def write(tmp_path, text):
    path = tmp_path / "ratings.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_it_imports_ratings_and_creates_inactive_raters(tmp_path):
    run = make_generation_run(numbered_dataset(3))
    path = write(
        tmp_path,
        "expression,rater,score,accuracy,completeness,native_alignment\n"
        "Câu số 0,lan,4,4,3,5\nCÂU SỐ  0,minh,3,,,\nCâu số 1,lan,0,0,0,0\n",
    )
    out = io.StringIO()
    call_command("import_ratings", str(path), "--run", str(run.pk), stdout=out)
    assert out.getvalue().strip() == f"run {run.pk}: ratings 3, raters lan, minh"
    minh = User.objects.get(username="minh")
    assert not minh.is_active and not minh.has_usable_password() and minh.groups.filter(name="Annotator").exists()
    lan = HumanRating.objects.get(rater__username="lan", item__expression__text="Câu số 0")
    assert (lan.score, lan.accuracy, lan.completeness, lan.native_alignment, lan.status) == (4, 4, 3, 5, "submitted")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("expression,rater,score\nKhông có,lan,3\n", "row 2, column 'expression': 'Không có' is not in the dataset"),
        ("expression,rater,score\nCâu số 0,lan,6\n", "row 2, column 'score'"),
        ("expression,rater,score\nCâu số 0,lan,3\nCâu số 0,lan,4\n", "row 3, column 'rater'"),
        ("expression,score\nCâu số 0,3\n", "column 'rater': required column is missing"),
    ],
)
def test_it_aborts_bad_rating_files_with_nothing_written(tmp_path, content, expected):
    run = make_generation_run(numbered_dataset(3))
    users_before = User.objects.count()
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command(
            "import_ratings", str(write(tmp_path, content)), "--run", str(run.pk), stdout=io.StringIO(), stderr=err
        )
    assert expected in err.getvalue()
    assert HumanRating.objects.count() == 0 and User.objects.count() == users_before


def test_it_refuses_ratings_for_a_run_that_is_not_a_generation_run(tmp_path):
    with pytest.raises(CommandError, match="no generation run 999"):
        call_command("import_ratings", str(write(tmp_path, "expression,rater,score\n")), "--run", "999")
    assert Expression.objects.count() == 0
