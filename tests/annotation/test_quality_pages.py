"""The Quality tab, its API and its forms: who may see them (403 otherwise), the review page's timing,
and recalibration (pause, note with examples, a second review that keeps both answers)."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from annotation.models import AnnotatorPause, ControlItem, ItemStatus, LabelChange, RecalibrationNote
from annotation.services import (
    assignments_review_again,
    recalibration_note_create,
    round_lock,
)
from annotation.tasks import round_summary_refresh_task

from .factories import (
    add_role,
    api_client_for,
    client_for,
    make_adjudicator,
    make_annotator,
    make_dataset,
    make_researcher,
    make_round,
    make_version,
    numbered_csv,
    queue_of,
    submit,
    submit_disagreeing,
    text_of,
)


@pytest.fixture
def world(db):
    researcher = make_researcher()
    adjudicator = make_adjudicator()
    a = make_annotator("ann_a")
    b = add_role(make_annotator("ann_b"), "Adjudicator")
    dataset = make_dataset(name="Pages", csv=numbered_csv(20))
    round_ = make_round(dataset, [a, b], name="R-pages", seed=5)
    return round_, researcher, adjudicator, a, b


def _urls(round_):
    return {
        "page": reverse("annotation:round_quality", args=[round_.pk]),
        "settings": reverse("annotation:round_quality_settings", args=[round_.pk]),
        "controls": reverse("annotation:round_controls_add", args=[round_.pk]),
        "recalibrate": reverse("annotation:round_recalibrate", args=[round_.pk]),
        "api": f"/api/rounds/{round_.pk}/quality/",
    }


def test_it_shows_the_quality_tab_to_researchers_and_adjudicators(world):
    round_, researcher, adjudicator, a, _b = world
    submit(queue_of(round_, a)[0], a, seconds=1.2)
    page = client_for(researcher).get(_urls(round_)["page"])
    assert page.status_code == 200
    assert "ann_a" in text_of(page) and "Recalibrate an annotator" in text_of(page)
    seen = client_for(adjudicator).get(_urls(round_)["page"])
    assert seen.status_code == 200 and "Recalibrate an annotator" not in text_of(seen)
    assert api_client_for(researcher).get(_urls(round_)["api"]).status_code == 200


def test_it_refuses_the_quality_tab_to_annotators_of_the_open_round(world):
    round_, _researcher, _adjudicator, a, b = world
    urls = _urls(round_)
    # A plain annotator: no role for the tab; B adjudicates but annotates this open round (blind).
    for user in (a, b):
        assert client_for(user).get(urls["page"]).status_code == 403
        assert api_client_for(user).get(urls["api"]).status_code == 403
    round_lock(round=round_)
    assert client_for(b).get(urls["page"]).status_code == 200
    assert api_client_for(b).get(urls["api"]).status_code == 200


def test_it_refuses_the_researcher_tools_to_everyone_else(world):
    round_, _researcher, adjudicator, a, _b = world
    for name in ("settings", "controls", "recalibrate"):
        url = _urls(round_)[name]
        for user in (adjudicator, a):
            assert client_for(user).post(url, {}).status_code == 403
        assert client_for(adjudicator).get(url).status_code == 405
    assert not AnnotatorPause.objects.exists()


def test_it_saves_settings_and_adds_controls_from_the_page(world, db):
    round_, researcher, _adjudicator, a, b = world
    version = make_version(
        make_round(make_dataset(name="Src", csv=numbered_csv(6, text="Mẫu {n}")), [a, b], name="Src round"),
        a,
        b,
        name="src-v1",
    )
    client = client_for(researcher)
    urls = _urls(round_)
    saved = client.post(
        urls["settings"],
        {"control_percent": "10", "quality_window": "20", "quality_threshold": "0.3", "fast_seconds": "2"},
    )
    assert saved.status_code == 302
    round_.refresh_from_db()
    assert (round_.control_rate, round_.quality_window, round_.fast_seconds) == (0.1, 20, 2.0)
    bad = client.post(
        urls["settings"],
        {"control_percent": "90", "quality_window": "1", "quality_threshold": "2", "fast_seconds": "1"},
    )
    assert bad.status_code == 400
    added = client.post(urls["controls"], {"source": "version", "version": version.pk, "count": "3"})
    assert added.status_code == 302
    assert ControlItem.objects.filter(round=round_).count() == 3
    missing = client.post(urls["controls"], {"source": "hand", "expression": "", "theme": ""})
    assert missing.status_code == 400 and "Name the expression" in text_of(missing)


def test_it_records_the_page_timing_checked_and_capped(world):
    round_, _researcher, _adjudicator, a, _b = world
    client = client_for(a)
    first, second, third = queue_of(round_, a)[:3]

    def post(assignment, seconds):
        url = reverse("annotation:review_item", args=[round_.pk, assignment.pk])
        return client.post(url, {"theme": "love", "revision": assignment.revision, "seconds": seconds})

    assert post(first, "12.5").status_code == 302
    first.refresh_from_db()
    assert first.seconds == 12.5
    assert post(second, "99999").status_code == 302
    second.refresh_from_db()
    assert second.seconds == 1800.0
    refused = post(third, "-3")
    assert refused.status_code == 200 and "a number of seconds, 0 or more" in text_of(refused)
    third.refresh_from_db()
    assert third.submitted_at is None
    api = api_client_for(a)
    answer = api.post(
        f"/api/assignments/{third.pk}/submit/", {"theme": "love", "revision": 0, "seconds": -1}, format="json"
    )
    assert answer.status_code == 400 and "seconds" in answer.content.decode()


def test_it_pauses_one_queue(world):
    round_, researcher, _adjudicator, a, b = world
    client_for(researcher).post(_urls(round_)["recalibrate"], {"annotator": a.pk, "action": "pause"})
    assert AnnotatorPause.objects.filter(round=round_, annotator=a).exists()
    assignment = queue_of(round_, a)[0]
    page = client_for(a).get(reverse("annotation:review_item", args=[round_.pk, assignment.pk]))
    assert "paused your queue" in text_of(page)
    with pytest.raises(ValidationError, match="paused"):
        submit(assignment, a)
    submit(queue_of(round_, b)[0], b)  # the other queue goes on
    client_for(researcher).post(_urls(round_)["recalibrate"], {"annotator": a.pk, "action": "resume"})
    submit(assignment, a)


def test_it_shows_a_note_with_examples_once_on_the_next_item(world, db):
    round_, researcher, _adjudicator, a, _b = world
    response = client_for(researcher).post(
        _urls(round_)["recalibrate"], {"annotator": a.pk, "action": "note", "note": "Đọc kỹ giải nghĩa."}
    )
    assert response.status_code == 302
    client = client_for(a)
    first, second = queue_of(round_, a)[:2]
    page = client.get(reverse("annotation:review_item", args=[round_.pk, first.pk]))
    assert "Đọc kỹ giải nghĩa." in text_of(page)
    assert RecalibrationNote.objects.get().seen_at is not None
    again = client.get(reverse("annotation:review_item", args=[round_.pk, second.pk]))
    assert "Đọc kỹ giải nghĩa." not in text_of(again)
    with pytest.raises(ValidationError) as error:
        recalibration_note_create(round=round_, annotator=a, user=researcher, note="  ")
    assert "note" in error.value.message_dict


def test_it_sends_answers_back_and_keeps_both(world):
    round_, researcher, _adjudicator, a, b = world
    since = timezone.now() - timedelta(seconds=1)
    shared = next(x for x in queue_of(round_, a) if x.item.assignments.filter(annotator=b).exists())
    submit(shared, a, theme="love", seconds=4)
    submit(shared.item.assignments.get(annotator=b), b, theme="love")
    shared.item.refresh_from_db()
    assert shared.item.status == ItemStatus.UNANIMOUS
    assert assignments_review_again(round=round_, annotator=a, user=researcher, since=since) == 1
    shared.refresh_from_db()
    shared.item.refresh_from_db()
    assert shared.status == "pending" and shared.theme_id is None
    assert shared.item.status == ItemStatus.PENDING
    submit(shared, a, theme="virtues")
    history = list(
        LabelChange.objects.filter(assignment=shared).order_by("id").values_list("field", "old_value", "new_value")
    )
    answer_row = next(row for row in history if row[0] == "answer")
    assert answer_row[1]["theme"] == "love" and answer_row[1]["seconds"] == 4
    themes = [row[2] for row in history if row[0] == "theme"]
    assert themes == ["love", "virtues"]
    shared.item.refresh_from_db()
    assert shared.item.status == ItemStatus.NEEDS_ADJUDICATION


def test_it_warns_on_the_round_page_when_a_window_is_low(world, settings):
    round_, researcher, _adjudicator, a, b = world
    round_.quality_window = 5
    round_.quality_threshold = 0.99
    round_.save(update_fields=["quality_window", "quality_threshold"])
    # Windows of 5 shared items may warn here (20 by default: tests/annotation/test_quality_drift_warnings.py).
    settings.QUALITY_MIN_WINDOW_ITEMS = 5
    submit_disagreeing(round_, a, b)
    detail = reverse("annotation:round_detail", args=[round_.pk])
    # The page reads the stored summary, which the Celery task writes after the answers.
    page = client_for(researcher).get(detail)
    assert "below the quality threshold" not in text_of(page)
    assert "Drift warnings are being computed" in text_of(page)
    round_summary_refresh_task(round_.pk)
    page = client_for(researcher).get(detail)
    assert "below the quality threshold" in text_of(page) and "being" not in text_of(page)
    tab = client_for(researcher).get(_urls(round_)["page"])
    html = tab.content.decode()
    assert "below the threshold" in text_of(tab)
    # The pair chart draws its line; no item is decided yet, so the chart with the final labels says so.
    assert html.count("<polyline") == 1 and "quality-threshold" in html and "No window has a kappa yet." in html
