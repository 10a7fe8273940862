"""The Prolific tests' fixtures: the loopback fake of Prolific's API (tests/prolific/fake_prolific.py) and a
light live study (no artworks: the Prolific side reads only its codes, quota, groups and package)."""

import pytest

from study.models import Participant, ParticipantStatus, Study, StudyStatus
from tests.prolific.fake_prolific import fake_prolific  # noqa: F401 - a fixture

SITE = "https://studies.example.org"


def light_study(slug: str = "prolific-study", **fields) -> Study:
    defaults = {
        "title": "Artwork descriptions",
        "groups": ["american", "chinese"],
        "quota_per_group": 3,
        "completion_code": "C0MPLETE",
        "screenout_code": "SCREEN0UT",
        "no_consent_code": "N0CONSENT",
        "status": StudyStatus.LIVE,
        "package": {"estimated_minutes": 20, "reward": "£3.00", "contact": "team@example.org"},
    }
    return Study.objects.create(slug=slug, **{**defaults, **fields})


def session(study: Study, pid: str, submission_id: str, *, group: str = "american", status=ParticipantStatus.COMPLETED):
    """A local session opened by Prolific's link (PROLIFIC_PID, SESSION_ID = the submission id)."""
    return Participant.objects.create(
        study=study,
        prolific_pid=pid,
        prolific_session_id=submission_id,
        prolific_study_id="",
        group=group,
        status=status,
        plan=["instructions"] if status != ParticipantStatus.ENTERED else [],
    )


@pytest.fixture
def study_for_prolific(db, settings):
    settings.PROLIFIC_SITE_URL = SITE
    return light_study()
