"""Every operation of /api/schema/ fuzzed as a researcher and as an annotator: no 5xx, every answer in the schema.

Bounded for CI (a few derandomized examples per operation and mode, no
shrinking, and per body field an object or a list where it wants something
else); `make fuzz` runs the same with VIVID_FUZZ_EXAMPLES=200 and every case
of schemathesis' coverage phase.
"""

import os

import pytest
from rest_framework.authtoken.models import Token

from annotation.services.demo import demo_dataset_load, demo_round_ensure
from tests.study.factories import make_study

from .fuzzing import fuzz_api, fuzz_coverage, fuzz_examples, in_process_requests

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(annotator_a, annotator_b, adjudicator, researcher):
    """A dataset, a suggestion set, an open round and a study, so ids the fuzzer draws sometimes exist
    (the study's slug is the schema's example)."""
    demo_dataset_load(user=researcher)
    demo_round_ensure(user=researcher)
    make_study()


@pytest.fixture(autouse=True)
def _no_background_work(settings):
    # The fuzz runs inside one rolled-back transaction: on_commit tasks never fire,
    # and model endpoints stay on loopback, so nothing waits on a worker or the network.
    settings.CELERY_TASK_ALWAYS_EAGER = False
    # Production mode, as pytest-django sets it anyway: a 500 is the plain page a client would get.
    settings.DEBUG = False


def test_it_answers_every_operation_within_the_schema(seeded, researcher, annotator_a):
    tokens = {
        persona: Token.objects.create(user=user).key
        for persona, user in (("researcher", researcher), ("annotator_a", annotator_a))
    }
    with in_process_requests() as app:
        reports = fuzz_api(tokens=tokens, max_examples=fuzz_examples(), app=app, coverage=fuzz_coverage())
    for report in reports:
        print(report.summary())
    for report in reports:
        # Every operation of the schema, unless VIVID_FUZZ_ONLY narrows the run to reproduce a finding.
        assert report.operations > 50 or os.environ.get("VIVID_FUZZ_ONLY")
        assert report.server_errors == 0, report.summary()
        assert report.failures == 0, report.summary()
