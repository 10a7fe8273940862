"""Prolific rules: one session per PID, resume anywhere, quotas of valid completes, stale pages, previews."""

import random
import re
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from core.roles import ANNOTATOR
from study.models import (
    Answer,
    Assignment,
    PageVisit,
    Participant,
    ParticipantStatus,
    Preference,
    StudyStatus,
    Term,
)
from study.selectors.participants import artwork_draw_counts, participant_places_taken
from study.services.participants import prolific_id_for
from study.services.simulation import SyntheticParticipant, answer_key, entry_url, parse_form
from tests.concurrency import at_the_same_instant
from tests.conftest import make_user

from .factories import make_study, package_dict

pytestmark = pytest.mark.django_db
COMPLETE = "https://app.prolific.com/submissions/complete?cc="


def enter(client, study, label, *, group="american", session=""):
    """Prolific's link for the participant ``label`` names: its ids are Prolific-shaped, made from the labels."""
    session = prolific_id_for(session) if session else ""
    return client.get(entry_url("", study.slug, pid=prolific_id_for(label), group=group, session=session))


def run_url(study):
    return reverse("study:run", args=[study.slug])


def page_step(client, study):
    response = client.get(run_url(study))
    return response, parse_form(response.content.decode())


def answer(study, spec, *, rng=None, fail_qc=False):
    bot = SyntheticParticipant(None, key=answer_key(study=study), rng=rng or random.Random(0), fail_qc=fail_qc)
    return bot.answer(spec)


def advance(client, study, steps, **kwargs):
    """Answer the current page ``steps`` times; returns the last response."""
    response = None
    for _ in range(steps):
        _page, spec = page_step(client, study)
        response = client.post(run_url(study), answer(study, spec, **kwargs))
    return response


def finish(client, study, **kwargs):
    for _ in range(200):
        page, spec = page_step(client, study)
        if spec is None:
            return page
        response = client.post(run_url(study), answer(study, spec, **kwargs))
        if response.status_code == 303 and response["Location"].startswith("https://"):
            return response
    raise AssertionError("session did not finish")


@pytest.fixture
def study():
    return make_study()


# Entry and malformed links


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?STUDY_ID=x&SESSION_ID=y",
        "?PROLIFIC_PID=&STUDY_ID=x",
        "?PROLIFIC_PID=bad%20pid!",
        "?PROLIFIC_PID=" + "a" * 65,
        "?PROLIFIC_PID=abc&SESSION_ID=<script>",
        "?PROLIFIC_PID=abc&group=martian",
    ],
)
def test_it_answers_a_malformed_entry_link_with_a_clear_page(client, study, query):
    response = client.get(f"/s/{study.slug}/{query}")
    assert response.status_code == 400
    assert b"Prolific" in response.content
    assert not Participant.objects.exists()


def test_it_answers_an_unknown_study_with_404(client):
    assert client.get("/s/nope/?PROLIFIC_PID=abc").status_code == 404


def test_it_asks_for_the_prolific_link_when_the_run_page_has_no_session(client, study):
    response = client.get(run_url(study))
    assert response.status_code == 400
    assert b"open the study again" in response.content


@pytest.mark.parametrize("status", [StudyStatus.DRAFT, StudyStatus.PAUSED, StudyStatus.CLOSED])
def test_it_turns_away_new_participants_unless_the_study_is_live(client, status):
    study = make_study(status=status)
    response = enter(client, study, "PIDX")
    assert response.status_code == 400
    assert not Participant.objects.exists()


def test_it_asks_for_the_group_when_the_link_has_none(client, study):
    client.get(entry_url("", study.slug, pid=prolific_id_for("PIDG")))
    _page, spec = page_step(client, study)
    assert spec.step == "group" and sorted(spec.radios["group"]) == ["american", "chinese"]
    client.post(run_url(study), {"step": "group", "group": "chinese"})
    response, spec = page_step(client, study)
    assert spec.step == "consent"
    assert response["Content-Language"] == "zh-hans"


def test_it_redirects_with_the_no_consent_code_when_consent_is_declined(client, study):
    enter(client, study, "PIDN")
    response = client.post(run_url(study), {"step": "consent", "consent": "no"})
    assert response.status_code == 303
    assert response["Location"] == COMPLETE + "N0C0NSENT"
    assert Participant.objects.get().status == ParticipantStatus.NO_CONSENT
    # Coming back does not reopen the consent page.
    assert enter(Client(), study, "PIDN").status_code == 302
    assert Client().get(run_url(study)).status_code == 400


# One session per PID


def test_it_resumes_a_returning_pid_exactly_where_it_left_off_in_a_new_browser(client, study):
    enter(client, study, "PIDR", session="S1")
    advance(client, study, 5)
    step_before = Participant.objects.get().step_index
    other = Client()
    enter(other, study, "PIDR", session="S1")
    _page, spec = page_step(other, study)
    assert Participant.objects.count() == 1
    assert Participant.objects.get().plan[step_before] == spec.step


def test_it_does_not_reopen_a_session_for_a_pid_from_another_prolific_session(client, study):
    enter(client, study, "PIDS", session="S1")
    response = enter(Client(), study, "PIDS", session="S2")
    assert response.status_code == 403
    assert b"another Prolific session" in response.content


def test_it_does_not_let_a_completed_pid_take_the_study_again(client, study):
    enter(client, study, "PIDC", session="S1")
    final = finish(client, study)
    assert final["Location"] == COMPLETE + "C0MPL3TE"
    count = Answer.objects.count()
    again = Client()
    enter(again, study, "PIDC", session="S1")
    response = again.get(run_url(study))
    # The same code again (the first redirect may have been lost), never a second session.
    assert response.status_code == 303 and response["Location"] == COMPLETE + "C0MPL3TE"
    assert Participant.objects.count() == 1 and Answer.objects.count() == count


def test_it_keeps_sessions_apart_in_one_browser_per_pid(study):
    a, b = Client(), Client()
    enter(a, study, "PIDA")
    enter(b, study, "PIDB", group="chinese")
    advance(a, study, 3)
    pa, pb = (
        Participant.objects.get(prolific_pid=prolific_id_for("PIDA")),
        Participant.objects.get(prolific_pid=prolific_id_for("PIDB")),
    )
    assert pa.step_index == 2 and pb.step_index == 0 and not pb.plan
    # B posting A's current page stores nothing for A.
    _page, spec = page_step(a, study)
    b.post(run_url(study), answer(study, spec))
    pa.refresh_from_db()
    assert pa.step_index == 2


# Stale pages: double submit, two tabs, back button


def test_it_stores_a_double_submit_once(client, study):
    enter(client, study, "PIDD")
    advance(client, study, 3)  # consent, instructions, first symbols page
    _page, spec = page_step(client, study)
    assert spec.step.endswith(":qa")
    data = answer(study, spec)
    first = client.post(run_url(study), data)
    second = client.post(run_url(study), data)
    # The first send gets the next page; the second finds the page already stored.
    assert first.status_code == 200 and parse_form(first.content.decode()).step != spec.step
    assert second.status_code == 303 and second["Location"] == run_url(study)
    assert Answer.objects.count() == 2
    assert Participant.objects.get().step_index == 3


def test_it_keeps_the_first_answers_when_a_second_tab_sends_the_same_page(client, study):
    enter(client, study, "PIDT")
    advance(client, study, 2)
    _page, spec = page_step(client, study)  # both tabs show the symbols page
    tab_one = {"step": spec.step, "symbols": [spec.checkboxes["symbols"][0]]}
    tab_two = {"step": spec.step, "none": "1"}
    client.post(run_url(study), tab_one)
    response = client.post(run_url(study), tab_two)
    assert response.status_code == 303 and response["Location"] == run_url(study)
    assignment = Assignment.objects.get(order=1)
    assert assignment.symbols_pre == tab_one["symbols"]


def test_it_ignores_an_old_page_sent_again_after_the_back_button(client, study):
    enter(client, study, "PIDB")
    advance(client, study, 3)
    _page, spec = page_step(client, study)
    before = Assignment.objects.get(order=1).symbols_pre
    element = Assignment.objects.get(order=1).artwork.elements[0]["name"]
    old = {"step": "1:symbols", "symbols": [element]} if not before else {"step": "1:symbols", "none": "1"}
    client.post(run_url(study), answer(study, spec))
    response = client.post(run_url(study), old)
    assert response.status_code == 303
    assert Assignment.objects.get(order=1).symbols_pre == before
    _page, now = page_step(client, study)
    assert now.step != "1:symbols"


def test_it_rejects_an_incomplete_page_and_shows_the_answers_given(client, study):
    enter(client, study, "PIDI")
    advance(client, study, 3)
    _page, spec = page_step(client, study)
    data = answer(study, spec)
    missing = next(name for name in data if name.endswith("-knew"))
    del data[missing]
    response = client.post(run_url(study), data)
    assert response.status_code == 422
    html = response.content.decode()
    assert "Please answer all three parts" in html
    chosen = next(name for name in data if name.endswith("-choice"))
    assert f'value="{data[chosen]}" required checked' in html
    assert Answer.objects.count() == 0


def test_it_rejects_options_that_were_not_offered(client, study):
    enter(client, study, "PIDO")
    advance(client, study, 3)
    _page, spec = page_step(client, study)
    data = answer(study, spec)
    chosen = next(name for name in data if name.endswith("-choice"))
    data[chosen] = "something else"
    assert client.post(run_url(study), data).status_code == 422
    assert Answer.objects.count() == 0


def test_it_sends_a_participant_back_to_a_missing_page_instead_of_issuing_the_code(client, study):
    enter(client, study, "PIDM")
    participant = Participant.objects.get()
    for _ in range(300):
        participant.refresh_from_db()
        if participant.plan and participant.step_index == len(participant.plan) - 1:
            break
        advance(client, study, 1)
    Answer.objects.filter(assignment__participant=participant, phase="pre").first().delete()
    response = advance(client, study, 1)
    assert response.status_code == 200 and b"C0MPL3TE" not in response.content
    assert parse_form(response.content.decode()).step.endswith(":qa")
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.IN_PROGRESS
    assert participant.plan[participant.step_index].endswith(":qa")


# Timing, language, options


def test_it_records_the_time_on_each_page(client, study):
    enter(client, study, "PIDW")
    client.get(run_url(study))
    client.get(run_url(study))
    visit = PageVisit.objects.get(step="consent")
    assert visit.views == 2 and visit.submitted_at is None
    PageVisit.objects.filter(pk=visit.pk).update(shown_at=timezone.now() - timedelta(seconds=30))
    client.post(run_url(study), {"step": "consent", "consent": "yes"})
    visit.refresh_from_db()
    assert 29 < visit.seconds < 60


def test_it_times_a_page_sent_without_being_shown_and_counts_the_next_page_as_shown(client, study):
    # A POST stores the page, stops its timer and starts the next page's in one statement.
    enter(client, study, "PIDV")
    client.post(run_url(study), {"step": "consent", "consent": "yes"})
    consent = PageVisit.objects.get(step="consent")
    assert consent.views == 1 and consent.submitted_at == consent.shown_at
    instructions = PageVisit.objects.get(step="instructions")
    assert instructions.views == 1 and instructions.submitted_at is None
    client.get(run_url(study))
    response = client.post(run_url(study), {"step": "instructions"})
    instructions.refresh_from_db()
    assert instructions.views == 2 and instructions.submitted_at is not None
    first = parse_form(response.content.decode()).step
    assert PageVisit.objects.get(step=first).views == 1
    # The same form sent again stores nothing and keeps the first time.
    submitted = instructions.submitted_at
    client.post(run_url(study), {"step": "instructions"})
    instructions.refresh_from_db()
    assert (instructions.views, instructions.submitted_at) == (2, submitted)


def test_it_shows_glosses_as_stored_now_while_the_imported_content_is_read_once(client, study):
    # Artworks, questions and descriptions are read once per process; terms can change while a
    # study is paused, so a changed gloss shows on the next page.
    enter(client, study, "PIDGL", group="american")
    client.post(run_url(study), {"step": "consent", "consent": "yes"})
    for _ in range(60):
        page, spec = page_step(client, study)
        if "长寿" in page.content.decode():
            break
        client.post(run_url(study), answer(study, spec))
    else:
        raise AssertionError("no page showed a gloss")
    Term.objects.filter(term="long life").update(zh="长生")
    again = client.get(run_url(study)).content.decode()
    assert "长生" in again and "长寿" not in again
    # Apart from the gloss (and the masked CSRF token), the same page.
    token = re.compile(r"[A-Za-z0-9]{64}")
    assert token.sub("", again.replace("长生", "长寿")) == token.sub("", page.content.decode())


def test_it_shows_the_same_option_order_on_every_visit_and_stores_it(client, study):
    enter(client, study, "PIDQ")
    advance(client, study, 3)
    _page, first = page_step(client, study)
    _page, again = page_step(client, study)
    assert first.radios == again.radios
    client.post(run_url(study), answer(study, first))
    stored = Answer.objects.first()
    assert stored.options == first.radios[f"q{stored.question_id}-choice"]
    assert sorted(stored.options) == sorted([stored.question.answer, *stored.question.distractors])


def test_it_shows_chinese_participants_simplified_chinese_pages(client, study):
    enter(client, study, "PIDZ", group="chinese")
    response = client.get(run_url(study))
    assert response["Content-Language"] == "zh-hans"
    assert 'lang="zh-Hans"' in response.content.decode()


def test_it_locks_the_first_answers_on_the_described_pages(client, study):
    enter(client, study, "PIDL")
    participant = Participant.objects.get()
    while True:
        page, spec = page_step(client, study)
        if spec.step.endswith("post_qa"):
            break
        client.post(run_url(study), answer(study, spec))
    html = page.content.decode()
    assert "first answer (locked)" in html
    pre = Answer.objects.filter(assignment__participant=participant, phase="pre").last()
    assert pre.choice in html
    assert 'class="description"' in html


# Assignment balance and quotas


def test_it_balances_artworks_speakers_and_sides_across_participants():
    study = make_study(package_dict(n_american=6, n_chinese=6, n_qc=2, artworks_per_participant=8))
    for n in range(6):
        client = Client()
        enter(client, study, f"PIDBAL{n}")
        client.post(run_url(study), {"step": "consent", "consent": "yes"})
    regular = Assignment.objects.filter(is_qc=False)
    counts = {}
    for artwork_id in regular.values_list("artwork_id", flat=True):
        counts[artwork_id] = counts.get(artwork_id, 0) + 1
    assert max(counts.values()) - min(counts.values()) <= 1
    assert abs(regular.filter(shown__speaker="base").count() - regular.filter(shown__speaker="pragmatic").count()) <= 2
    assert abs(regular.filter(left__speaker="base").count() - regular.filter(left__speaker="pragmatic").count()) <= 2
    for participant in Participant.objects.all():
        cultures = list(participant.assignments.filter(is_qc=False).values_list("artwork__culture", flat=True))
        assert cultures.count("american") == cultures.count("chinese") == 3
        assert participant.assignments.get(order=1).is_qc is False


def test_it_draws_from_exposure_and_speaker_counts_read_in_one_query(django_assert_max_num_queries):
    study = make_study()
    for n in range(6):
        client = Client()
        enter(client, study, f"PIDDC{n}", group="american")
        client.post(run_url(study), {"step": "consent", "consent": "yes"})
    Participant.objects.filter(prolific_pid=prolific_id_for("PIDDC0")).update(status=ParticipantStatus.RETURNED)
    live = Assignment.objects.filter(participant__study=study, participant__group="american").exclude(
        participant__status=ParticipantStatus.RETURNED
    )
    exposures, speakers = {}, {}
    for a in live.select_related("shown", "left"):
        exposures[a.artwork_id] = exposures.get(a.artwork_id, 0) + 1
        if a.shown is not None:
            c = speakers.setdefault(a.artwork_id, {})
            c[a.shown.speaker] = c.get(a.shown.speaker, 0) + 1
            side = "pragmatic_left" if a.left.speaker == "pragmatic" else "pragmatic_right"
            c[side] = c.get(side, 0) + 1
    with django_assert_max_num_queries(1):
        assert artwork_draw_counts(study=study, group="american") == (exposures, speakers)


def test_it_counts_only_valid_completions_and_live_sessions_towards_the_quota():
    study = make_study(package_dict(quota_per_group=1))
    first = Client()
    enter(first, study, "PIDQ1")
    first.post(run_url(study), {"step": "consent", "consent": "yes"})
    second = Client()
    enter(second, study, "PIDQ2")
    response = second.post(run_url(study), {"step": "consent", "consent": "yes"})
    assert response.status_code == 403 and b"full" in response.content
    # The other group has its own quota.
    third = Client()
    enter(third, study, "PIDQ3", group="chinese")
    assert third.post(run_url(study), {"step": "consent", "consent": "yes"}).status_code == 200
    # The first session goes idle: it counts as returned and frees its place.
    Participant.objects.filter(prolific_pid=prolific_id_for("PIDQ1")).update(
        last_seen_at=timezone.now() - timedelta(days=1)
    )
    assert second.post(run_url(study), {"step": "consent", "consent": "yes"}).status_code == 200
    assert Participant.objects.get(prolific_pid=prolific_id_for("PIDQ1")).status == ParticipantStatus.RETURNED
    # Coming back later, the returned participant finds the place taken.
    response = enter(Client(), study, "PIDQ1")
    assert response.status_code == 403 and b"full" in response.content


def test_it_frees_the_place_of_a_session_that_failed_quality_control():
    study = make_study(package_dict(quota_per_group=1))
    failing = Client()
    enter(failing, study, "PIDF1")
    assert finish(failing, study, fail_qc=True)["Location"] == COMPLETE + "SCR33N"
    late = Client()
    enter(late, study, "PIDF2")
    assert late.post(run_url(study), {"step": "consent", "consent": "yes"}).status_code == 200


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_never_lets_concurrent_arrivals_overfill_a_quota():
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memory", ":memory:")):
        pytest.skip("concurrent arrivals need a database file or PostgreSQL")
    study = make_study(package_dict(quota_per_group=3))
    arrivals = []
    for n in range(8):
        client = Client()
        enter(client, study, f"PIDCC{n}")
        arrivals.append(client)
    barrier = threading.Barrier(len(arrivals))
    statuses = []

    def arrive(client):
        barrier.wait()
        try:
            statuses.append(client.post(run_url(study), {"step": "consent", "consent": "yes"}).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=arrive, args=(c,)) for c in arrivals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] * 3 + [403] * 5
    assert Participant.objects.filter(status=ParticipantStatus.IN_PROGRESS).count() == 3


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_fills_every_place_and_no_more_when_many_more_arrive_than_there_are_places(settings):
    # Consent counts places under a lock of its own group only (PostgreSQL's advisory lock):
    # three times as many arrivals as places in two groups at once, each place taken exactly once.
    if connection.vendor != "postgresql":
        pytest.skip("the per-group lock is PostgreSQL's; SQLite runs one writer at a time")
    # The crowd comes from the test client's one address: the per-address limits are not tested here.
    settings.STUDY_ENTRY_RATE = settings.STUDY_CONSENT_RATE = "off"
    study = make_study(package_dict(quota_per_group=4))
    arrivals = []
    for n in range(24):
        client = Client()
        group = ("american", "chinese")[n % 2]
        enter(client, study, f"PIDMANY{n}", group=group)
        arrivals.append((client, group))
    results, errors = at_the_same_instant(
        *[
            lambda c=client, g=group: (g, c.post(run_url(study), {"step": "consent", "consent": "yes"}))
            for client, group in arrivals
        ]
    )
    assert errors == []
    for group in ("american", "chinese"):
        answers = [response for g, response in results if g == group]
        assert sorted(r.status_code for r in answers) == [200] * 4 + [403] * 8
        assert all(b'data-reason="full"' in r.content for r in answers if r.status_code == 403)
        holding = Participant.objects.filter(study=study, group=group, status=ParticipantStatus.IN_PROGRESS)
        assert holding.count() == participant_places_taken(study=study, group=group) == 4
        # A turned-away arrival keeps no assignment; an admitted one has its whole draw.
        for participant in Participant.objects.filter(study=study, group=group):
            artworks = {key.split(":", 1)[0] for key in participant.plan if ":" in key}
            assert participant.assignments.count() == len(artworks)
            assert bool(artworks) == (participant.status == ParticipantStatus.IN_PROGRESS)


def test_it_fixes_the_session_once_when_consent_is_sent_twice(client, study):
    enter(client, study, "PIDTWICE")
    first = client.post(run_url(study), {"step": "consent", "consent": "yes"})
    participant = Participant.objects.get(prolific_pid=prolific_id_for("PIDTWICE"))
    plan, assignments = participant.plan, list(participant.assignments.values_list("artwork_id", "order", "shown_id"))
    second = client.post(run_url(study), {"step": "consent", "consent": "yes"})
    assert first.status_code == 200 and second.status_code == 303
    participant.refresh_from_db()
    assert participant.plan == plan and plan[0] == "instructions"
    assert list(participant.assignments.values_list("artwork_id", "order", "shown_id")) == assignments
    assert participant_places_taken(study=study, group="american") == 1


# Pause, resume, close


def test_it_keeps_answers_while_paused_and_continues_after_resume(client, study):
    enter(client, study, "PIDP")
    advance(client, study, 4)
    study.status = StudyStatus.PAUSED
    study.save()
    _page, spec = page_step(client, study)
    assert spec is None
    response = client.get(run_url(study))
    assert b"paused" in response.content
    study.status = StudyStatus.LIVE
    study.save()
    _page, spec = page_step(client, study)
    participant = Participant.objects.get()
    assert participant.step_index == 3 and spec.step == participant.plan[3]


# Previews


def test_it_lets_a_researcher_preview_without_counting_anything(client, researcher):
    study = make_study(package_dict(quota_per_group=1), status=StudyStatus.DRAFT)
    client.force_login(researcher)
    response = client.post(reverse("study:preview", args=[study.slug]), {"group": "chinese"})
    assert response["Location"] == run_url(study)
    for _ in range(200):
        page, spec = page_step(client, study)
        if spec is None:
            break
        client.post(run_url(study), answer(study, spec))
    assert b"data-preview-done" in page.content and b"C0MPL3TE" in page.content
    preview = Participant.objects.get()
    assert preview.is_preview and preview.status == ParticipantStatus.COMPLETED
    assert participant_places_taken(study=study, group="chinese") == 0


@pytest.mark.parametrize("who", ["outsider", "annotator"])
def test_it_forbids_previews_to_non_researchers(client, outsider, who):
    study = make_study()
    user = outsider if who == "outsider" else make_user("ann", ANNOTATOR)
    client.force_login(user)
    assert client.post(reverse("study:preview", args=[study.slug]), {"group": "american"}).status_code == 403


def test_it_sends_anonymous_previewers_to_sign_in(client):
    study = make_study()
    response = client.post(reverse("study:preview", args=[study.slug]), {"group": "american"})
    assert response.status_code == 302 and "login" in response["Location"]


# Images and test responses


def test_it_serves_artwork_images_of_a_live_study_and_hides_a_draft_one(client):
    live = make_study()
    response = client.get(reverse("study:image", args=[live.slug, "am1"]))
    assert response.status_code == 200
    assert b"".join(response.streaming_content)[:4] == b"\x89PNG"
    draft = make_study(package_dict(slug="draft-study"), status=StudyStatus.DRAFT)
    assert client.get(reverse("study:image", args=[draft.slug, "am1"])).status_code == 404


def test_it_marks_synthetic_participants_as_test_data_and_keeps_them_out_of_quotas():
    from study.services.simulation import synthetic_responses_generate

    study = make_study(package_dict(quota_per_group=1))
    outcomes = synthetic_responses_generate(study=study, n=4, seed=3, qc_fail_rate=0.5)
    assert all(not o.errors for o in outcomes)
    statuses = sorted(Participant.objects.values_list("status", flat=True))
    assert statuses == ["completed", "completed", "excluded_qc", "excluded_qc"]
    assert Participant.objects.filter(is_test=True).count() == 4
    assert participant_places_taken(study=study, group="american") == 0
    assert Preference.objects.count() > 0


def test_it_does_not_accept_a_forged_test_token(client, study):
    client.get(entry_url("", study.slug, pid=prolific_id_for("PIDFORGE"), group="american") + "&test_token=forged")
    assert Participant.objects.get().is_test is False
