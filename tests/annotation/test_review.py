"""The annotator's review queue pages: each persona, htmx and plain POST, drafts, two tabs, blindness."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.models import Assignment, AssignmentStatus, LabelChange
from annotation.services import (
    adjudication_remove,
    assignment_submit,
    round_lock,
    suggested_codes,
)
from annotation.views import review as review_views

from .factories import (
    alternating_traits,
    client_for,
    make_annotator,
    make_dataset,
    make_round,
    make_suggestions,
    numbered_csv,
    queue_of,
    text_of,
)

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
SECRET_NOTE = "GHI-CHÚ-BÍ-MẬT-của-A-7731"


@pytest.fixture
def numbered_dataset(db):
    """Six unlabelled expressions."""
    return make_dataset(name="Review corpus", csv=numbered_csv(6, explanation="Giải nghĩa số {n}"))


@pytest.fixture
def suggestions(numbered_dataset):
    return make_suggestions(numbered_dataset, traits=alternating_traits)


@pytest.fixture
def review_round(numbered_dataset, suggestions, annotator_a, annotator_b, researcher):
    return make_round(numbered_dataset, [annotator_a, annotator_b], suggestion_set=suggestions, user=researcher, seed=7)


@pytest.fixture
def client_a(annotator_a):
    return client_for(annotator_a)


@pytest.fixture
def client_b(annotator_b):
    return client_for(annotator_b)


def item_url(assignment) -> str:
    return reverse("annotation:review_item", args=[assignment.item.round_id, assignment.pk])


def draft_url(assignment) -> str:
    return reverse("annotation:review_draft", args=[assignment.item.round_id, assignment.pk])


def skip_url(assignment) -> str:
    return reverse("annotation:review_skip", args=[assignment.item.round_id, assignment.pk])


def answer(
    assignment, *, theme="criticism", decision="accept", added=(), flagged=False, note="", revision=None
) -> dict:
    data = {"theme": theme, "note": note, "revision": assignment.revision if revision is None else revision}
    for code in suggested_codes(assignment.item):
        data[f"decision_{code}"] = decision
    if added:
        data["added_traits"] = list(added)
    if flagged:
        data["flagged"] = "on"
    return data


def checked(response, name: str) -> set[str]:
    """Values of the checked inputs called ``name``."""
    values = set()
    for tag in re.findall(r"<input\b[^>]*>", response.content.decode()):
        if f'name="{name}"' in tag and re.search(r"\bchecked\b", tag):
            value = re.search(r'value="([^"]*)"', tag)
            values.add(value.group(1) if value else "on")
    return values


# --- Who may open what ---------------------------------------------------------------


def test_it_sends_the_annotator_from_the_queue_to_the_first_item(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    response = client_a.get(reverse("annotation:review_queue", args=[review_round.pk]))
    assert response.status_code == 302 and response["Location"] == item_url(first)
    page = client_a.get(item_url(first))
    assert page.status_code == 200
    html = page.content.decode()
    assert f'<h1 id="review-expression" lang="vi" tabindex="-1">{first.item.expression.text}</h1>' in html
    assert f'<p lang="vi" class="review-explanation">{first.item.expression.explanation}</p>' in html
    assert '<progress id="review-progress-bar" value="0" max="6">' in html
    assert "Item 1 of 6" in text_of(page)
    assert 'name="revision" value="0"' in html
    assert "js/review.js" in html and "Keyboard shortcuts" in text_of(page)


def test_it_refuses_every_review_page_to_people_outside_the_round(review_round, annotator_a, outsider, researcher):
    mine = queue_of(review_round, annotator_a)[0]
    urls = {
        "get": [
            reverse("annotation:review_queue", args=[review_round.pk]),
            item_url(mine),
            reverse("annotation:review_outcomes", args=[review_round.pk]),
        ],
        "post": [item_url(mine), draft_url(mine), skip_url(mine)],
    }
    stranger = make_annotator("annotator_c")
    for user, expected in ((stranger, 404), (outsider, 403), (researcher, 403)):
        client = client_for(user)
        for url in urls["get"]:
            assert client.get(url).status_code == expected, (user, url)
        for url in urls["post"]:
            assert client.post(url, answer(mine)).status_code == expected, (user, url)
    anonymous = client_for()
    for url in urls["get"] + urls["post"]:
        response = anonymous.get(url) if url in urls["get"] else anonymous.post(url, answer(mine))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
    mine.refresh_from_db()
    assert mine.status == AssignmentStatus.PENDING and mine.draft == {}


def test_it_hides_another_annotators_assignment_behind_a_404(client_b, review_round, annotator_a):
    theirs = queue_of(review_round, annotator_a)[0]
    assert client_b.get(item_url(theirs)).status_code == 404
    assert client_b.post(item_url(theirs), answer(theirs)).status_code == 404
    assert client_b.post(draft_url(theirs), answer(theirs, note="x")).status_code == 404
    assert client_b.post(skip_url(theirs), {}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == AssignmentStatus.PENDING and theirs.draft == {}
    # The right assignment under the wrong round is not found either.
    other = make_round(review_round.dataset, review_round.annotators.all(), name="R-other")
    assert client_b.get(reverse("annotation:review_item", args=[other.pk, theirs.pk])).status_code == 404


# --- Submitting ------------------------------------------------------------------------


def test_it_answers_an_htmx_submit_with_the_next_item_and_pushes_its_url(client_a, review_round, annotator_a):
    first, second = queue_of(review_round, annotator_a)[:2]
    response = client_a.post(item_url(first), answer(first, theme="love", note="dễ hiểu"), headers=HTMX)
    assert response.status_code == 200
    assert response["HX-Push-Url"] == item_url(second)
    html = response.content.decode()
    assert "<html" not in html and 'id="review-form"' in html
    assert f">{second.item.expression.text}</h1>" in html
    assert f"Saved “{first.item.expression.text}”" in text_of(response)
    assert '<progress id="review-progress-bar" value="1" max="6">' in html
    first.refresh_from_db()
    assert first.status == AssignmentStatus.SUBMITTED and first.theme.code == "love" and first.note == "dễ hiểu"
    assert first.revision == 1 and first.trait_decisions == {c: "accept" for c in suggested_codes(first.item)}


def test_it_submits_without_javascript_by_post_redirect_get(client_a, review_round, annotator_a):
    first, second = queue_of(review_round, annotator_a)[:2]
    response = client_a.post(item_url(first), answer(first, decision="reject", flagged=True))
    assert response.status_code == 302 and response["Location"] == item_url(second)
    page = client_a.get(response["Location"])
    assert f"Saved “{first.item.expression.text}”" in text_of(page)
    first.refresh_from_db()
    assert first.flagged and set(first.trait_decisions.values()) == {"reject"}


def test_it_keeps_the_input_when_the_answer_is_incomplete(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    codes = suggested_codes(first.item)
    data = answer(first, theme="", note="chưa chắc về chủ đề", flagged=True)
    data.pop(f"decision_{codes[0]}")
    response = client_a.post(item_url(first), data, headers=HTMX)
    assert response.status_code == 200 and "HX-Push-Url" not in response
    page = text_of(response)
    assert "Choose one theme." in page and "Accept, reject or mark unsure." in page
    assert "chưa chắc về chủ đề" in response.content.decode()
    assert checked(response, "flagged") == {"on"}
    for code in codes[1:]:
        assert checked(response, f"decision_{code}") == {"accept"}
    first.refresh_from_db()
    assert first.status == AssignmentStatus.PENDING and first.revision == 0


def test_it_refuses_to_add_a_suggested_trait(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    # Choices come from the form, so a suggested trait cannot be "added" through it.
    code = suggested_codes(first.item)[0]
    response = client_a.post(item_url(first), answer(first, added=[code]))
    assert response.status_code == 200
    assert "Select a valid choice" in text_of(response)
    first.refresh_from_db()
    assert first.status == AssignmentStatus.PENDING


def test_it_shows_a_service_refusal_on_the_field_it_names(client_a, review_round, annotator_a, monkeypatch):
    first = queue_of(review_round, annotator_a)[0]

    def refuse(**kwargs):
        raise ValidationError(
            {"added_traits": ["unknown trait zzz"], "trait_decisions": ["accept, reject or mark unsure: x"]}
        )

    monkeypatch.setattr(review_views.services, "assignment_submit", refuse)
    response = client_a.post(item_url(first), answer(first, note="giữ lại"), headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and "HX-Push-Url" not in response
    assert re.search(r'<ul class="errorlist" role="alert"><li>accept, reject or mark unsure: x</li>', html)
    assert re.search(
        r'<legend>Add a trait the model missed</legend>\s*<ul class="errorlist"><li>unknown trait zzz</li>', html
    )
    assert "giữ lại" in html


def test_it_tells_a_stale_tab_and_overwrites_nothing(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    stale_form = answer(first, theme="virtues", note="từ tab cũ")
    assert client_a.post(item_url(first), answer(first, theme="love", note="từ tab mới")).status_code == 302
    response = client_a.post(item_url(first), stale_form, headers=HTMX)
    assert response.status_code == 200 and "HX-Push-Url" not in response
    page = text_of(response)
    assert "This item was saved from another tab or window" in page and "Nothing was overwritten" in page
    assert "từ tab mới" in page  # the saved answer
    assert "từ tab cũ" in response.content.decode()  # the person's input, still in the form
    assert checked(response, "theme") == {"virtues"}
    assert 'name="revision" value="1"' in response.content.decode()
    first.refresh_from_db()
    assert first.theme.code == "love" and first.note == "từ tab mới" and first.revision == 1
    # Without htmx the same conflict is a 409 page; submitting again on purpose replaces the answer.
    assert client_a.post(item_url(first), stale_form).status_code == 409
    assert client_a.post(item_url(first), {**stale_form, "revision": 1}).status_code == 302
    first.refresh_from_db()
    assert first.theme.code == "virtues" and first.revision == 2


def test_it_treats_a_double_submit_as_one(client_a, review_round, annotator_a):
    first, second = queue_of(review_round, annotator_a)[:2]
    data = answer(first, note="một lần thôi")
    assert client_a.post(item_url(first), data, headers=HTMX)["HX-Push-Url"] == item_url(second)
    changes = LabelChange.objects.filter(assignment=first).count()
    again = client_a.post(item_url(first), data, headers=HTMX)
    assert again.status_code == 200 and again["HX-Push-Url"] == item_url(second)
    assert "another tab" not in text_of(again)
    first.refresh_from_db()
    assert first.revision == 1 and LabelChange.objects.filter(assignment=first).count() == changes
    assert client_a.post(item_url(first), data)["Location"] == item_url(second)


# --- Drafts, skipping, editing ------------------------------------------------------------


def test_it_autosaves_a_draft_that_survives_a_reload(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    codes = suggested_codes(first.item)
    data = {
        "revision": 0,
        "theme": "work_nature",
        f"decision_{codes[0]}": "unsure",
        "note": "đang nghĩ",
        "flagged": "on",
    }
    response = client_a.post(draft_url(first), data, headers=HTMX)
    assert response.status_code == 200 and response.content.decode().strip() == "Draft saved."
    first.refresh_from_db()
    assert first.status == AssignmentStatus.DRAFT and first.draft["note"] == "đang nghĩ"
    page = client_a.get(item_url(first))
    assert checked(page, "theme") == {"work_nature"}
    assert checked(page, f"decision_{codes[0]}") == {"unsure"} and checked(page, "flagged") == {"on"}
    assert "đang nghĩ" in page.content.decode() and "Draft restored." in text_of(page)
    html = page.content.decode()
    assert f'hx-post="{draft_url(first)}"' in html and 'hx-trigger="change delay:300ms from:#review-form' in html


def test_it_does_not_let_an_old_tab_autosave_over_a_submitted_answer(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    client_a.post(item_url(first), answer(first, note="đã nộp"))
    response = client_a.post(draft_url(first), {**answer(first, note="tab cũ"), "revision": 0}, headers=HTMX)
    assert "Not saved: this item was submitted from another tab" in text_of(response)
    first.refresh_from_db()
    assert first.draft == {} and first.note == "đã nộp"


def test_it_skips_an_item_keeping_its_input_and_brings_it_back_last(client_a, review_round, annotator_a):
    queue = queue_of(review_round, annotator_a)
    first, second = queue[:2]
    response = client_a.post(skip_url(first), {"revision": 0, "theme": "love", "note": "quay lại sau"}, headers=HTMX)
    assert response.status_code == 200 and response["HX-Push-Url"] == item_url(second)
    assert f">{second.item.expression.text}</h1>" in response.content.decode()
    first.refresh_from_db()
    assert first.status == AssignmentStatus.SKIPPED and first.draft["note"] == "quay lại sau"
    for assignment in queue[1:]:
        assignment_submit(
            assignment=assignment,
            user=annotator_a,
            theme="love",
            trait_decisions={c: "accept" for c in suggested_codes(assignment.item)},
        )
    back = client_a.get(reverse("annotation:review_queue", args=[review_round.pk]))
    assert back["Location"] == item_url(first)
    page = client_a.get(back["Location"])
    assert "quay lại sau" in page.content.decode() and checked(page, "theme") == {"love"}
    # Without JavaScript the skip button posts the form and redirects.
    plain = client_a.post(skip_url(first), {"revision": 0})
    assert plain.status_code == 302


def test_it_shows_a_finished_queue_with_progress(client_a, review_round, annotator_a):
    queue = queue_of(review_round, annotator_a)
    for assignment in queue[:-1]:
        assignment_submit(
            assignment=assignment,
            user=annotator_a,
            theme="love",
            trait_decisions={c: "accept" for c in suggested_codes(assignment.item)},
        )
    last = queue[-1]
    response = client_a.post(item_url(last), answer(last), headers=HTMX)
    assert response["HX-Push-Url"] == reverse("annotation:review_queue", args=[review_round.pk])
    assert "Queue finished" in text_of(response) and 'value="6" max="6"' in response.content.decode()
    page = client_a.get(reverse("annotation:review_queue", args=[review_round.pk]))
    assert page.status_code == 200 and "Queue finished" in text_of(page) and "6 of 6 submitted" in text_of(page)
    assert reverse("annotation:review_outcomes", args=[review_round.pk]) in page.content.decode()


def test_it_lets_an_annotator_edit_an_answer_until_the_round_is_locked(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    client_a.post(item_url(first), answer(first, theme="love", note="lần đầu"))
    outcomes = client_a.get(reverse("annotation:review_outcomes", args=[review_round.pk]))
    assert f'href="{item_url(first)}"' in outcomes.content.decode()
    page = client_a.get(item_url(first))
    assert checked(page, "theme") == {"love"} and "lần đầu" in page.content.decode()
    assert "you can change your answer until the round is locked" in text_of(page)
    first.refresh_from_db()
    assert client_a.post(item_url(first), answer(first, theme="virtues", note="sửa lại")).status_code == 302
    first.refresh_from_db()
    assert first.theme.code == "virtues" and first.revision == 2

    round_lock(round=review_round)
    refused = client_a.post(item_url(first), answer(first, theme="other", note="quá muộn"))
    assert refused.status_code == 409
    assert "This round is locked" in text_of(refused) and "quá muộn" in refused.content.decode()
    assert (
        "Submit and go on" not in text_of(refused)
        and '<fieldset class="review-fields" disabled>' in refused.content.decode()
    )
    draft = client_a.post(draft_url(first), answer(first, note="nháp"), headers=HTMX)
    assert "the round is locked" in text_of(draft)
    client_a.post(skip_url(first), answer(first))
    first.refresh_from_db()
    assert first.theme.code == "virtues" and first.note == "sửa lại" and first.draft == {}
    assert first.status == AssignmentStatus.SUBMITTED
    queue_page = client_a.get(reverse("annotation:review_queue", args=[review_round.pk]))
    assert queue_page.status_code == 200 and "This round is locked" in text_of(queue_page)
    outcomes = client_a.get(reverse("annotation:review_outcomes", args=[review_round.pk]))
    assert f'href="{item_url(first)}"' not in outcomes.content.decode()


def test_it_shows_a_locked_rounds_item_read_only_with_the_submitted_answer(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    client_a.post(item_url(first), answer(first, theme="love", note="đã nộp"))
    first.refresh_from_db()
    client_a.post(draft_url(first), answer(first, theme="virtues", note="nháp chưa nộp"), headers=HTMX)
    before = client_a.get(item_url(first))
    assert "unsubmitted changes" in text_of(before) and checked(before, "theme") == {"virtues"}

    round_lock(round=review_round)
    page = client_a.get(item_url(first))
    html, text = page.content.decode(), text_of(page)
    assert "This round is locked" in text and "Your submitted answer, read-only." in text
    assert "unsubmitted" not in text and "Submit" not in text and "nháp chưa nộp" not in html
    assert checked(page, "theme") == {"love"} and "đã nộp" in html
    assert '<fieldset class="review-fields" disabled>' in html and draft_url(first) not in html
    unanswered = queue_of(review_round, annotator_a)[1]
    assert "You did not answer this item before the round was locked." in text_of(client_a.get(item_url(unanswered)))


def test_it_asks_for_all_five_traits_when_suggestions_are_hidden(
    numbered_dataset, suggestions, annotator_a, annotator_b, client_a
):
    hidden = make_round(
        numbered_dataset,
        [annotator_a, annotator_b],
        name="Hidden",
        suggestion_set=suggestions,
        hide_suggestions_fraction=1.0,
    )
    first = queue_of(hidden, annotator_a)[0]
    page = client_a.get(item_url(first))
    html = page.content.decode()
    assert "No suggestions are shown for this item" in text_of(page)
    assert len(re.findall(r'<input type="checkbox" name="added_traits"', html)) == 5
    assert 'name="decision_' not in html and "Suggested traits" not in text_of(page)
    response = client_a.post(item_url(first), answer(first, added=["literal", "pragmatic"]))
    assert response.status_code == 302
    first.refresh_from_db()
    assert first.trait_decisions == {} and first.added_traits == ["literal", "pragmatic"]


def test_it_offers_the_suggested_traits_and_the_missed_ones(client_a, review_round, annotator_a):
    first = queue_of(review_round, annotator_a)[0]
    codes = suggested_codes(first.item)
    page = client_a.get(item_url(first))
    html = page.content.decode()
    for code in codes:
        assert len(re.findall(rf'name="decision_{code}"', html)) == 3
    added = set(re.findall(r'name="added_traits" value="([a-z_]+)"', html))
    assert added == {"literal", "sino_vietnamese", "uncommon_vocabulary", "folk_knowledge", "pragmatic"} - set(codes)
    assert len(re.findall(r'name="theme" value=', html)) == 7
    assert "Add a trait the model missed" in text_of(page)
    # No prefetch of the next page (the htmx submit brings the next panel); the link to it stays.
    second = queue_of(review_round, annotator_a)[1]
    assert 'rel="prefetch"' not in html and f'href="{item_url(second)}"' in html


# --- Blindness and outcomes ------------------------------------------------------------------


def test_it_never_shows_annotator_a_answer_to_annotator_b(client_a, client_b, review_round, annotator_a, annotator_b):
    for assignment in queue_of(review_round, annotator_a):
        client_a.post(
            item_url(assignment), answer(assignment, theme="love", decision="unsure", note=SECRET_NOTE, flagged=True)
        )
    assert Assignment.objects.filter(annotator=annotator_a, note=SECRET_NOTE).count() == 6

    mine = queue_of(review_round, annotator_b)
    responses = [
        client_b.get(reverse("annotation:review_queue", args=[review_round.pk]), follow=True),
        client_b.get(reverse("annotation:review_outcomes", args=[review_round.pk])),
        client_b.get(reverse("api:assignment_list", args=[review_round.pk])),
    ]
    for assignment in mine:
        responses.append(client_b.get(item_url(assignment)))
        responses.append(client_b.get(item_url(assignment), headers=HTMX))
        responses.append(client_b.get(reverse("api:assignment_detail", args=[assignment.pk])))
        responses.append(client_b.post(draft_url(assignment), {"revision": 0, "note": "của B"}, headers=HTMX))
    responses.append(client_b.post(item_url(mine[0]), answer(mine[0], theme="virtues"), headers=HTMX))
    responses.append(client_b.post(item_url(mine[1]), answer(mine[1], theme=""), headers=HTMX))
    for response in responses:
        body = response.content.decode()
        assert response.status_code == 200, response
        assert SECRET_NOTE not in body
        assert checked(response, "theme") <= {"virtues"}
        assert checked(response, "flagged") == set()
    # B's own page for a shared item says nothing of A having answered it.
    shared = text_of(client_b.get(item_url(mine[2])))
    assert "You submitted this item" not in shared and "0 of 6 submitted" not in shared and "1 of 6 submitted" in shared


def test_it_shows_the_resolution_only_after_the_round_is_locked(
    client_a, client_b, review_round, annotator_a, annotator_b, adjudicator
):
    a_queue = {a.item_id: a for a in queue_of(review_round, annotator_a)}
    b_queue = {a.item_id: a for a in queue_of(review_round, annotator_b)}
    agreed, disputed = list(a_queue)[:2]
    client_a.post(item_url(a_queue[agreed]), answer(a_queue[agreed], theme="love"))
    client_b.post(item_url(b_queue[agreed]), answer(b_queue[agreed], theme="love"))
    client_a.post(item_url(a_queue[disputed]), answer(a_queue[disputed], theme="love", note=SECRET_NOTE))
    client_b.post(item_url(b_queue[disputed]), answer(b_queue[disputed], theme="criticism"))
    url = reverse("annotation:review_outcomes", args=[review_round.pk])

    before = client_b.get(url)
    assert before.status_code == 200
    assert "Outcome" not in text_of(before) and "Unanimous" not in text_of(before)
    assert SECRET_NOTE not in before.content.decode()

    round_lock(round=review_round)
    disputed_item = a_queue[disputed].item
    disputed_item.refresh_from_db()
    locked = text_of(client_b.get(url))
    assert "Unanimous" in locked and "Not resolved yet" in locked and "Removed" not in locked

    adjudication_remove(
        item=disputed_item, user=adjudicator, reason="inaccurate", note="nghĩa sai", revision=disputed_item.revision
    )
    after = client_b.get(url)
    page = text_of(after)
    assert "Removed — Inaccurate" in page and "nghĩa sai" in page
    assert SECRET_NOTE not in after.content.decode()
    assert "Criticism" in page  # B's own answer stays visible
