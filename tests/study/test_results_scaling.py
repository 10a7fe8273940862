"""Results that cost the same number of queries however many took part: every page, download and
API of a study's results asks the database as often for 60 participants as for 5.

The participants go through the participant pages' services (``synthetic_responses_generate``);
each answer is counted on a cold cache, so the results are computed, not read back.
"""

import numpy as np
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from core import statistics
from study import analysis
from study.services.simulation import synthetic_responses_generate

from .factories import make_study, package_dict
from .test_results import _media  # noqa: F401

pytestmark = pytest.mark.django_db


def urls(slug: str) -> dict[str, str]:
    results = reverse("study:results", args=[slug])
    export = reverse("study:export", args=[slug])
    responses = reverse("study_api:responses", args=[slug])
    return {
        "results page": results + "?include_test=1",
        "results fragment": results + "?include_test=1",
        "results json": results + "?format=json&include_test=1",
        "export csv": export + "?include_test=1",
        "export csv with ids": export + "?include_test=1&raw_pid=1",
        "figure svg": reverse("study:results_figure", args=[slug, "preferences", "svg"]) + "?include_test=1",
        "figure pdf": reverse("study:results_figure", args=[slug, "preferences", "pdf"]) + "?include_test=1",
        "api results": reverse("study_api:results", args=[slug]) + "?include_test=1",
        "api responses": responses + "?include_test=1",
        "api responses page 2": responses + "?include_test=1&page=2&page_size=10",
        "api responses csv": responses + "?include_test=1&format=csv",
    }


def queries(client, url: str, **headers) -> int:
    cache.clear()
    analysis.Draws.forget()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, **headers)
        assert response.status_code == 200, url
        if response.streaming:
            b"".join(response.streaming_content)
    return len(captured)


def small_study(slug: str, participants: int):
    # Four artworks and a quality check each: a session is a few pages, the study is quick to fill.
    study = make_study(package_dict(slug=slug, n_american=2, n_chinese=2, n_qc=1))
    outcomes = synthetic_responses_generate(study=study, n=participants, seed=5, qc_fail_rate=0.2)
    assert not [outcome.errors for outcome in outcomes if outcome.errors]
    return study


def test_it_asks_the_database_as_often_for_60_participants_as_for_5(_media, researcher_client):  # noqa: F811
    few, many = small_study("few", 5), small_study("many", 60)
    # Whatever a first request of the test run loads once (sessions, the user's roles) is loaded here.
    # The PDF figure takes the SVG's path to its data and 2 s more to embed its fonts: not drawn twice.
    for name, url in urls(few.slug).items():
        if name != "figure pdf":
            queries(researcher_client, url)
    counts = {}
    for (name, small), large in zip(urls(few.slug).items(), urls(many.slug).values(), strict=True):
        headers = {"HTTP_HX_REQUEST": "true"} if name == "results fragment" else {}
        counts[name] = (queries(researcher_client, small, **headers), queries(researcher_client, large, **headers))
    assert {name: pair for name, pair in counts.items() if pair[0] != pair[1]} == {}
    # And few of them: a handful for the figures, a few streams for the rows.
    assert max(small for small, _ in counts.values()) <= 15, counts


def test_it_draws_what_the_core_bootstrap_draws():
    draws = analysis.Draws(n_resamples=300, seed=9)
    for n in (1, 7, 250):
        rng = np.random.default_rng(9)
        expected = statistics.draw_counts(rng.integers(0, n, (300, n)), n)
        assert np.array_equal(draws.counts(n), expected)
        # Kept for the next computation, and the same again.
        assert np.array_equal(analysis.Draws(n_resamples=300, seed=9).counts(n), expected)
