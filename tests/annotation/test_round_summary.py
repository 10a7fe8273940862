"""Cached figures are keyed by the round's change stamp, and the round page's drift warnings come
from a summary a Celery task stores after answers (issue 29): a draft retires nothing, an answer
retires everything, a burst of answers queues one refresh, and a real worker over Redis writes it."""

import uuid
from unittest import mock

import pytest
from django.urls import reverse

from annotation.models import RoundQualitySummary
from annotation.selectors.stats import round_agreement_stats
from annotation.selectors.workflow import round_stamp
from annotation.services import (
    assignment_draft_save,
    assignment_skip,
    round_lock,
    round_summary_refresh,
    round_summary_schedule,
)
from annotation.tasks import round_summary_refresh_task
from tests.conftest import celery_overrides, redis_test_url, skip_or_fail, start_worker, stop_worker, worker_log
from tests.waiting import wait_until

from .factories import (
    alternating_traits,
    client_for,
    make_dataset,
    make_round,
    make_suggestions,
    numbered_csv,
    queue_of,
    submit,
    submit_disagreeing,
)

REDIS_URL = redis_test_url("broker")


@pytest.fixture
def world(db, annotator_a, annotator_b, researcher, settings):
    # Windows of 5 shared items may warn here (20 by default).
    settings.QUALITY_MIN_WINDOW_ITEMS = 5
    dataset = make_dataset(name="Summary corpus", csv=numbered_csv(10))
    suggestions = make_suggestions(dataset, traits=alternating_traits)
    round_ = make_round(dataset, [annotator_a, annotator_b], suggestion_set=suggestions, user=researcher, seed=4)
    round_.quality_window, round_.quality_threshold = 5, 0.99
    round_.save(update_fields=["quality_window", "quality_threshold"])
    return round_, researcher, annotator_a, annotator_b


def _disagree(round_, a, b):
    submit_disagreeing(round_, a, b)


def test_it_keeps_the_stamp_through_a_draft_and_changes_it_on_an_answer(world):
    round_, _researcher, a, _b = world
    first = queue_of(round_, a)[0]
    before = round_stamp(round_id=round_.pk)
    assignment_draft_save(assignment=first, user=a, data={"theme": "love", "note": "nháp"})
    assert round_stamp(round_id=round_.pk) == before
    submit(first, a, theme="love")
    after_answer = round_stamp(round_id=round_.pk)
    assert after_answer != before
    assignment_skip(assignment=queue_of(round_, a)[1], user=a)
    assert round_stamp(round_id=round_.pk) != after_answer


def test_it_serves_the_statistics_from_the_cache_until_an_answer(world, django_assert_num_queries):
    round_, _researcher, a, b = world
    _disagree(round_, a, b)
    first = round_agreement_stats(round=round_)
    with django_assert_num_queries(1):  # the round's status; the figures come from the cache
        assert round_agreement_stats(round=round_) == first
    assignment_draft_save(assignment=queue_of(round_, a)[0], user=a, data={"note": "a draft changes no figure"})
    with django_assert_num_queries(1):
        round_agreement_stats(round=round_)
    submit(queue_of(round_, a)[0], a, theme="virtues")
    assert round_agreement_stats(round=round_) != first


def test_it_queues_one_refresh_for_a_burst_of_answers(world, settings):
    round_, *_ = world
    with mock.patch.object(round_summary_refresh_task, "apply_async") as queued:
        assert [round_summary_schedule(round_id=round_.pk) for _ in range(5)] == [True] + [False] * 4
        assert queued.call_count == 1
        assert queued.call_args.kwargs["countdown"] == settings.ROUND_SUMMARY_DELAY_SECONDS
        # The task clears the flag before it reads: an answer during the refresh queues the next one.
        round_summary_refresh(round_id=round_.pk)
        assert round_summary_schedule(round_id=round_.pk) is True
        assert queued.call_count == 2


def test_it_forgets_the_flag_when_the_broker_refuses(world):
    round_, *_ = world
    with mock.patch.object(round_summary_refresh_task, "apply_async", side_effect=OSError("broker down")):
        assert round_summary_schedule(round_id=round_.pk) is False
    with mock.patch.object(round_summary_refresh_task, "apply_async") as queued:
        assert round_summary_schedule(round_id=round_.pk) is True
        assert queued.call_count == 1


def test_it_shows_stored_warnings_and_says_when_answers_came_since(world):
    round_, researcher, a, b = world
    _disagree(round_, a, b)
    page = client_for(researcher)
    url = reverse("annotation:round_detail", args=[round_.pk])
    assert "Drift warnings are being computed" in page.get(url).content.decode()
    summary = round_summary_refresh(round_id=round_.pk)
    assert summary.warnings and summary.stamp == round_stamp(round_id=round_.pk)
    html = page.get(url).content.decode()
    assert 'data-testid="round-quality-warning"' in html and 'data-testid="round-quality-stale"' not in html
    round_lock(round=round_, user=researcher)
    html = page.get(url).content.decode()
    # Still the stored warnings, said to be from before the latest change.
    assert 'data-testid="round-quality-warning"' in html and "Drift warnings as of" in html


def test_it_reads_no_quality_figure_on_the_round_page(world):
    round_, researcher, a, b = world
    _disagree(round_, a, b)
    round_summary_refresh(round_id=round_.pk)
    client = client_for(researcher)
    url = reverse("annotation:round_detail", args=[round_.pk])
    client.get(url)
    with mock.patch("annotation.selectors.quality._round_quality") as computed:
        client.get(url)
        assert computed.call_count == 0


@pytest.mark.services
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_refreshes_the_summary_in_a_real_worker_over_redis(annotator_a, annotator_b, researcher, settings):
    import redis

    cache_url = redis_test_url("cache")
    try:
        redis.Redis.from_url(cache_url, socket_connect_timeout=2).flushdb()
    except redis.exceptions.ConnectionError:
        skip_or_fail(f"Redis is not reachable at {cache_url}")
    # The test process and the worker share the cache (stamps, the queued flag), as gunicorn and
    # the workers of a deployment do.
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": cache_url}}
    settings.ROUND_SUMMARY_DELAY_SECONDS = 0
    settings.CELERY_TASK_ALWAYS_EAGER = False
    queue = f"test-{uuid.uuid4().hex[:8]}"
    with celery_overrides(broker_url=REDIS_URL, task_default_queue=queue, task_always_eager=False):
        worker = start_worker(
            broker_url=REDIS_URL, queue=queue, env={"CACHE_URL": cache_url, "QUALITY_MIN_WINDOW_ITEMS": "5"}
        )
        try:
            dataset = make_dataset(name="Worker summary corpus", csv=numbered_csv(10))
            suggestions = make_suggestions(dataset, traits=alternating_traits)
            round_ = make_round(dataset, [annotator_a, annotator_b], suggestion_set=suggestions, user=researcher)
            round_.quality_window, round_.quality_threshold = 5, 0.99
            round_.save(update_fields=["quality_window", "quality_threshold"])
            _disagree(round_, annotator_a, annotator_b)

            def stored_summary():
                summary = RoundQualitySummary.objects.filter(round=round_).first()
                return summary if summary is not None and summary.stamp == round_stamp(round_id=round_.pk) else None

            wait_until(
                lambda: stored_summary() is not None,
                timeout=90,
                stopped=lambda: worker.poll() is not None,
                explain=lambda: f"the worker did not store the summary:\n{worker_log(worker)}",
            )
            summary = stored_summary()
        finally:
            stop_worker(worker)
    assert summary.warnings
    html = client_for(researcher).get(reverse("annotation:round_detail", args=[round_.pk])).content.decode()
    assert 'data-testid="round-quality-warning"' in html and 'data-testid="round-quality-stale"' not in html
    # A burst of 20 answers queued a handful of refreshes, not one each.
    assert worker_log(worker).count("annotation.round_summary_refresh") < 20 * 2


def test_it_shows_the_latest_figures_while_new_answers_are_counted(world, settings):
    round_, researcher, a, b = world
    _disagree(round_, a, b)
    client = client_for(researcher)
    stats_url = reverse("annotation:round_stats", args=[round_.pk])
    quality_url = reverse("annotation:round_quality", args=[round_.pk])
    for url in (stats_url, quality_url):
        assert 'data-testid="figures-refreshing"' not in client.get(url).content.decode()
    assignment_draft_save(assignment=queue_of(round_, a)[0], user=a, data={"note": "a draft"})
    for url in (stats_url, quality_url):
        assert 'data-testid="figures-refreshing"' not in client.get(url).content.decode()
    submit(queue_of(round_, a)[0], a, theme="virtues")
    with mock.patch.object(round_summary_refresh_task, "apply_async") as queued:
        for url in (stats_url, quality_url):
            assert "are being counted" in client.get(url).content.decode()
        assert queued.call_count == 1  # one refresh for both pages
    # A download is always the figures of every answer so far.
    download = client.get(stats_url + "?format=json").json()
    assert download == round_agreement_stats(round=round_)
    round_summary_refresh(round_id=round_.pk)
    for url in (stats_url, quality_url):
        assert 'data-testid="figures-refreshing"' not in client.get(url).content.decode()


def test_it_computes_the_figures_itself_when_the_latest_are_too_old(world, settings):
    round_, researcher, a, b = world
    _disagree(round_, a, b)
    client = client_for(researcher)
    url = reverse("annotation:round_stats", args=[round_.pk])
    client.get(url)
    submit(queue_of(round_, a)[0], a, theme="virtues")
    settings.ROUND_FIGURES_STALE_SECONDS = 0  # no worker ran: the page does not wait for one
    with mock.patch.object(round_summary_refresh_task, "apply_async") as queued:
        assert 'data-testid="figures-refreshing"' not in client.get(url).content.decode()
        assert queued.call_count == 0
