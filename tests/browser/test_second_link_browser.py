"""A participant who opens a second link of the same PROLIFIC_PID with another SESSION_ID, in a
second tab of the same browser: the second tab is refused, and the first one goes on to the end."""

from urllib.parse import urlencode

import pytest

from study.models import Participant, ParticipantStatus
from study.services.participants import prolific_id_for
from tests.study.factories import make_study, package_dict

from .study_helpers import click_next, current_step, entry_link, take_session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

COMPLETE = "https://app.prolific.com/submissions/complete?cc=C0MPL3TE"


@pytest.fixture
def study(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return make_study(
        package_dict(
            slug="second-link", n_american=1, n_chinese=1, n_qc=2, artworks_per_participant=3, qc_per_participant=1
        )
    )


def test_the_first_tab_goes_on_after_a_second_link_with_another_session_id_is_refused(
    open_page, prolific, live_server, study
):
    first = open_page()
    first.goto(entry_link(live_server.url, study.slug, pid="TWOTABS1", group="american"))
    assert current_step(first) == "consent"
    click_next(first)
    assert current_step(first) == "instructions"

    # The same PID with another SESSION_ID, in a second tab of the same browser (same cookies).
    second = first.context.new_page()
    query = urlencode(
        {
            "PROLIFIC_PID": prolific_id_for("TWOTABS1"),
            "STUDY_ID": prolific_id_for("prolific-study"),
            "SESSION_ID": prolific_id_for("another-session"),
            "group": "american",
        }
    )
    response = second.goto(f"{live_server.url}/s/{study.slug}/?{query}")
    assert response.status == 403
    assert "another Prolific session" in second.content()
    assert current_step(second) is None

    # The first tab sends the page it shows, and every page after it, to the completion code.
    # (Brought to the front as a person would: Chromium holds a background tab's animation
    # frames, and every click there waits seconds for one.)
    first.bring_to_front()
    steps = take_session(first)
    assert steps[0] == "instructions" and first.url == COMPLETE
    assert prolific.visits == [COMPLETE]
    participant = Participant.objects.get(study=study, prolific_pid=prolific_id_for("TWOTABS1"))
    assert participant.status == ParticipantStatus.COMPLETED
    assert participant.prolific_session_id == prolific_id_for("session-TWOTABS1")
    assert Participant.objects.filter(study=study).count() == 1

    # The second tab shares the session: its run page sends the finished participant to Prolific again.
    second.bring_to_front()
    second.goto(f"{live_server.url}/s/{study.slug}/run/")
    assert second.url == COMPLETE
