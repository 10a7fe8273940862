"""Researchers' pages: suggestion import, round creation with its preview, round list and detail, lock, freeze; home and nav."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import (
    AnnotationRound,
    Assignment,
    AssignmentStatus,
    Dataset,
    DatasetVersion,
    ItemStatus,
    RoundStatus,
    SuggestionSet,
)
from annotation.services import adjudication_remove, adjudication_resolve, assignment_skip, round_lock
from tests.conftest import make_user

from .factories import (
    client_for,
    make_adjudicator,
    make_annotator,
    make_round,
    make_suggestions,
    review_all,
    submit,
    text_of,
)

pytestmark = pytest.mark.django_db

SUGGESTIONS = (
    "expression,traits,raw_output\n"
    "Ăn cháo đá bát,pragmatic,{}\n"
    'ếch ngồi đáy giếng,"pragmatic,literal",\n'
    "Tấc đất tấc vàng,3,\n"
)


@pytest.fixture
def suggestions(dataset):
    return make_suggestions(dataset)


@pytest.fixture
def round_(dataset, suggestions, annotator_a, annotator_b, researcher):
    return make_round(
        dataset,
        [annotator_a, annotator_b],
        suggestion_set=suggestions,
        user=researcher,
        seed=11,
        hide_suggestions_fraction=0.5,
    )


def round_post(dataset, annotators, **extra) -> dict:
    data = {
        "name": "Vòng 1",
        "dataset": dataset.pk,
        "annotators": [a.pk for a in annotators],
        "annotators_per_item": 2,
        "hide_percent": 0,
        "seed": "",
    }
    data.update(extra)
    return data


# --- permissions ---------------------------------------------------------------------------------------------------


def page_urls(round_):
    return {
        "round_list": (reverse("annotation:round_list"), "get"),
        "round_new": (reverse("annotation:round_new"), "get"),
        "round_detail": (reverse("annotation:round_detail", args=[round_.pk]), "get"),
        "round_lock": (reverse("annotation:round_lock", args=[round_.pk]), "post"),
        "round_reopen": (reverse("annotation:round_reopen", args=[round_.pk]), "post"),
        "round_freeze": (reverse("annotation:round_freeze", args=[round_.pk]), "post"),
        "suggestion_import": (reverse("annotation:suggestion_import"), "get"),
        "version_list": (reverse("annotation:version_list"), "get"),
    }


RESEARCHER_ONLY = {"round_new", "round_lock", "round_reopen", "round_freeze", "suggestion_import"}
STAFF_ONLY = {"round_detail"}  # researchers and adjudicators


@pytest.mark.parametrize(
    "name",
    [
        "round_list",
        "round_new",
        "round_detail",
        "round_lock",
        "round_reopen",
        "round_freeze",
        "suggestion_import",
        "version_list",
    ],
)
def test_it_sends_anonymous_visitors_to_sign_in_and_refuses_the_wrong_roles(
    name, round_, outsider, annotator_a, adjudicator
):
    url, method = page_urls(round_)[name]
    response = getattr(client_for(), method)(url)
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
    assert getattr(client_for(outsider), method)(url).status_code == 403
    if name in RESEARCHER_ONLY or name in STAFF_ONLY:
        assert getattr(client_for(annotator_a), method)(url).status_code == 403
    if name in RESEARCHER_ONLY:
        assert getattr(client_for(adjudicator), method)(url).status_code == 403
    round_.refresh_from_db()
    assert round_.status == RoundStatus.OPEN and not DatasetVersion.objects.exists()


def test_it_refuses_get_on_the_state_changing_urls(round_, researcher):
    client = client_for(researcher)
    for name in ("round_lock", "round_reopen", "round_freeze"):
        assert client.get(reverse(f"annotation:{name}", args=[round_.pk])).status_code == 405


# --- suggestions ---------------------------------------------------------------------------------------------------


def upload(text: str, name="goi-y.csv"):
    return SimpleUploadedFile(name, text.encode("utf-8"), content_type="text/csv")


def test_it_imports_suggestions_from_the_page_and_offers_a_round_with_them(dataset, researcher):
    client = client_for(researcher)
    assert client.get(reverse("annotation:suggestion_import")).status_code == 200
    response = client.post(
        reverse("annotation:suggestion_import"),
        {
            "dataset": dataset.pk,
            "name": " run 1 ",
            "model_name": "gpt-4.1",
            "prompt_version": "B.2 v1",
            "file": upload(SUGGESTIONS),
        },
    )
    suggestion_set = SuggestionSet.objects.get()
    assert (suggestion_set.name, suggestion_set.model_name, suggestion_set.prompt_version) == (
        "run 1",
        "gpt-4.1",
        "B.2 v1",
    )
    assert suggestion_set.source == "goi-y.csv" and suggestion_set.created_by == researcher
    assert response.status_code == 302
    assert response.url == f"{reverse('annotation:round_new')}?dataset={dataset.pk}&suggestion_set={suggestion_set.pk}"
    codes = {s.expression.text: sorted(t.code for t in s.traits.all()) for s in suggestion_set.suggestions.all()}
    assert codes == {
        "Ăn cháo đá bát": ["pragmatic"],
        "Ếch ngồi đáy giếng": ["literal", "pragmatic"],
        "Tấc đất tấc vàng": ["uncommon_vocabulary"],
    }
    page = client.get(response.url)
    assert f'<option value="{suggestion_set.pk}" selected>' in page.content.decode()


def test_it_lists_suggestion_errors_by_row_and_column_and_writes_nothing(dataset, researcher):
    bad = 'expression,traits\nĂn cháo đá bát,pragmatic\nKhông có câu này,literal\nTấc đất tấc vàng,"literal,bogus"\n'
    response = client_for(researcher).post(
        reverse("annotation:suggestion_import"),
        {"dataset": dataset.pk, "name": "bad", "model_name": "m", "file": upload(bad)},
    )
    assert response.status_code == 400
    page = text_of(response)
    assert "The file cannot be imported" in page
    assert "3 expression 'Không có câu này' is not in the dataset" in page
    assert "4 traits unknown trait 'bogus'" in page
    # What was typed is kept for the next try.
    assert 'value="bad"' in response.content.decode()
    assert not SuggestionSet.objects.exists()


def test_it_shows_a_taken_suggestion_set_name_next_to_the_field(dataset, suggestions, researcher):
    response = client_for(researcher).post(
        reverse("annotation:suggestion_import"),
        {"dataset": dataset.pk, "name": "gpt", "model_name": "m", "file": upload(SUGGESTIONS)},
    )
    assert response.status_code == 200
    assert "already has a suggestion set named" in text_of(response)
    assert SuggestionSet.objects.count() == 1


def test_it_refuses_an_unsupported_suggestion_file(dataset, researcher):
    response = client_for(researcher).post(
        reverse("annotation:suggestion_import"),
        {"dataset": dataset.pk, "name": "x", "model_name": "m", "file": upload("a", name="goi-y.txt")},
    )
    assert "is not a supported file" in text_of(response)
    assert not SuggestionSet.objects.exists()


# --- round creation ------------------------------------------------------------------------------------------------


def test_it_creates_a_round_over_all_items_with_the_chosen_settings(
    dataset, suggestions, researcher, annotator_a, annotator_b
):
    make_annotator("inactive_annotator", is_active=False)
    client = client_for(researcher)
    page = client.get(reverse("annotation:round_new")).content.decode()
    assert "annotator_a" in page and "annotator_b" in page and "inactive_annotator" not in page
    response = client.post(
        reverse("annotation:round_new"),
        round_post(dataset, [annotator_a, annotator_b], suggestion_set=suggestions.pk, hide_percent=50, seed=42),
    )
    round_ = AnnotationRound.objects.get(name="Vòng 1")
    assert response.status_code == 302 and response.url == reverse("annotation:round_detail", args=[round_.pk])
    assert round_.items.count() == 6 and round_.seed == 42 and round_.hide_suggestions_fraction == 0.5
    assert round_.items.filter(suggestions_hidden=True).count() == 3
    assert round_.suggestion_set == suggestions and round_.created_by == researcher and round_.item_filter == {}
    assert all(item.assignments.count() == 2 for item in round_.items.all())


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"theme": "criticism"}, {"Ăn cháo đá bát", "Ếch ngồi đáy giếng"}),
        ({"trait": "uncommon_vocabulary"}, {"Tấc đất tấc vàng"}),
        ({"kind": "proverb"}, {"Tấc đất tấc vàng", "Có công mài sắt có ngày nên kim"}),
        ({"search": "ĐỒNG CAM"}, {"Đồng cam cộng khổ"}),
        ({"theme": "criticism", "kind": "idiom", "search": "ếch"}, {"Ếch ngồi đáy giếng"}),
    ],
)
def test_it_creates_a_round_over_the_filtered_items_and_records_the_filter(
    dataset, researcher, annotator_a, annotator_b, filters, expected
):
    client_for(researcher).post(
        reverse("annotation:round_new"), round_post(dataset, [annotator_a, annotator_b], **filters)
    )
    round_ = AnnotationRound.objects.get(name="Vòng 1")
    assert set(round_.items.values_list("expression__text", flat=True)) == expected
    assert round_.item_filter == filters


def test_it_leaves_out_items_already_in_another_round_when_asked(dataset, researcher, annotator_a, annotator_b):
    make_round(
        dataset, [annotator_a, annotator_b], name="Old", expressions=dataset.expressions.filter(theme__code="criticism")
    )
    client_for(researcher).post(
        reverse("annotation:round_new"), round_post(dataset, [annotator_a, annotator_b], not_in_other_round="on")
    )
    round_ = AnnotationRound.objects.get(name="Vòng 1")
    assert round_.items.count() == 4 and round_.item_filter == {"not_in_other_round": True}
    assert not round_.items.filter(expression__theme__code="criticism").exists()


def test_it_previews_the_items_and_each_annotators_load_with_htmx(
    dataset, researcher, annotator_a, annotator_b, suggestions
):
    annotator_c = make_annotator("annotator_c")
    client = client_for(researcher)
    url = reverse("annotation:round_new")
    params = {
        "preview": "1",
        "dataset": dataset.pk,
        "annotators": [annotator_a.pk, annotator_b.pk, annotator_c.pk],
        "annotators_per_item": 2,
        "hide_percent": 50,
        "suggestion_set": suggestions.pk,
    }
    response = client.get(url, params, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    page = text_of(response)
    assert "6 items of 6 in the dataset" in page
    assert "12 reviews to do in all (2 per item)" in page
    assert "4 items for each of the 3 annotators" in page
    assert "3 items will show no suggestions" in page
    page = text_of(
        client.get(url, {**params, "theme": "criticism", "annotators": [annotator_a.pk]}, HTTP_HX_REQUEST="true")
    )
    assert "2 items of 6 in the dataset" in page and "Pick at least 2 annotators." in page
    page = text_of(client.get(url, {**params, "search": "không có"}, HTTP_HX_REQUEST="true"))
    assert "No item matches: the round would be empty." in page
    assert not AnnotationRound.objects.exists()
    # Without htmx the full page comes back, its preview computed from the initial values.
    full = client.get(url)
    assert "<html" in full.content.decode() and "6 items of 6 in the dataset" in text_of(full)


def test_it_keeps_the_input_and_names_the_problem_when_a_round_cannot_be_created(
    dataset, researcher, annotator_a, annotator_b, suggestions
):
    make_round(dataset, [annotator_a, annotator_b], name="Taken")
    client = client_for(researcher)
    response = client.post(
        reverse("annotation:round_new"), round_post(dataset, [annotator_a, annotator_b], name="Taken", seed=5)
    )
    assert response.status_code == 400 and "a round named 'Taken' already exists" in text_of(response)
    assert 'value="5"' in response.content.decode()
    response = client.post(reverse("annotation:round_new"), round_post(dataset, [annotator_a], annotators_per_item=2))
    assert response.status_code == 400 and "Pick at least 2 annotators" in text_of(response)
    response = client.post(
        reverse("annotation:round_new"), round_post(dataset, [annotator_a, annotator_b], hide_percent=10)
    )
    assert "Hiding suggestions needs a suggestion set." in text_of(response)
    response = client.post(
        reverse("annotation:round_new"),
        round_post(dataset, [annotator_a, annotator_b], suggestion_set=suggestions.pk, hide_percent=60),
    )
    assert response.status_code == 400
    response = client.post(
        reverse("annotation:round_new"), round_post(dataset, [annotator_a, annotator_b], search="không có")
    )
    assert "the round would have no items" in text_of(response)
    other = Dataset.objects.create(name="Khác")
    response = client.post(
        reverse("annotation:round_new"), round_post(other, [annotator_a, annotator_b], suggestion_set=suggestions.pk)
    )
    assert "This suggestion set belongs to another dataset." in text_of(response)
    assert AnnotationRound.objects.count() == 1


def test_it_creates_a_round_once_when_the_form_is_submitted_twice(dataset, researcher, annotator_a, annotator_b):
    client = client_for(researcher)
    # Both posts carry the key the one rendered form held.
    posted = round_post(dataset, [annotator_a, annotator_b], idempotency_key="double-submit-1")
    first = client.post(reverse("annotation:round_new"), posted)
    second = client.post(reverse("annotation:round_new"), posted, follow=True)
    round_ = AnnotationRound.objects.get()
    assert first.url == reverse("annotation:round_detail", args=[round_.pk])
    assert second.redirect_chain[-1][0] == first.url
    assert "was already created" in text_of(second)
    assert Assignment.objects.count() == 12


# --- list, detail, progress ------------------------------------------------------------------------------------------


def test_it_lists_only_an_annotators_own_rounds_with_their_progress_and_a_review_button(
    round_, dataset, annotator_a, annotator_b
):
    carol, dave = make_annotator("carol"), make_annotator("dave")
    other = make_round(dataset, [carol, dave], name="Not mine")
    mine = Assignment.objects.filter(item__round=round_, annotator=annotator_a).order_by("position")
    submit(mine[0], annotator_a)
    assignment_skip(assignment=mine[1], user=annotator_a)
    for assignment in Assignment.objects.filter(item__round=round_, annotator=annotator_b):
        submit(assignment, annotator_b)
    response = client_for(annotator_a).get(reverse("annotation:round_list"))
    html, page = response.content.decode(), text_of(response)
    assert "R1" in page and "Not mine" not in page
    total = mine.count()
    assert f"You: 1 of {total} done, 1 skipped" in page
    assert reverse("annotation:review_queue", args=[round_.pk]) in html
    assert f'href="{reverse("annotation:round_detail", args=[round_.pk])}"' not in html
    # Nothing about annotator B, who finished everything.
    assert "annotator_b" not in page and f"{total} of {total}" not in page
    assert reverse("annotation:review_queue", args=[other.pk]) not in html


def test_it_offers_outcomes_instead_of_review_once_a_round_is_locked(round_, annotator_a):
    round_lock(round=round_)
    html = client_for(annotator_a).get(reverse("annotation:round_list")).content.decode()
    assert reverse("annotation:review_outcomes", args=[round_.pk]) in html
    assert reverse("annotation:review_queue", args=[round_.pk]) not in html


def test_it_lists_every_round_with_overall_progress_for_researchers_and_adjudicators(
    round_, dataset, researcher, adjudicator, annotator_a
):
    carol, dave = make_annotator("carol"), make_annotator("dave")
    make_round(dataset, [carol, dave], name="Other")
    submit(round_.items.first().assignments.first(), round_.items.first().assignments.first().annotator)
    for user in (researcher, adjudicator):
        page = text_of(client_for(user).get(reverse("annotation:round_list")))
        assert "R1" in page and "Other" in page
        assert "1 of 12 reviews" in page and "0 of 12 reviews" in page


def test_it_shows_settings_progress_and_funnel_on_the_round_page(
    round_, researcher, adjudicator, annotator_a, annotator_b
):
    mine = Assignment.objects.filter(item__round=round_, annotator=annotator_a).order_by("position")
    for assignment in mine[:2]:
        submit(assignment, annotator_a)
    assignment_skip(assignment=mine[2], user=annotator_a)
    response = client_for(researcher).get(reverse("annotation:round_detail", args=[round_.pk]))
    assert response.status_code == 200
    html, page = response.content.decode(), text_of(response)
    assert 'data-testid="seed"><code>11</code>' in html
    assert "50% · 3 items" in page
    assert "gpt (gpt-4.1)" in page and "annotator_a, annotator_b" in page
    row_a = re.search(r'<tr data-annotator="annotator_a">(.*?)</tr>', html, re.S).group(1)
    assert [int(n) for n in re.findall(r'class="numeric">(\d+)<', row_a)] == [2, mine.count(), 1]
    assert 'data-stage="in_round"' in html and 'data-stage="final"' in html
    assert re.search(
        r'data-stage="imported">\s*<th scope="row">Imported into the dataset</th>\s*<td class="numeric">6</td>', html
    )
    assert reverse("annotation:round_stats", args=[round_.pk]) in html
    assert reverse("annotation:round_lock", args=[round_.pk]) in html
    # Adjudicators read it but get no buttons that change the round.
    adjudicator_html = (
        client_for(adjudicator).get(reverse("annotation:round_detail", args=[round_.pk])).content.decode()
    )
    assert reverse("annotation:round_lock", args=[round_.pk]) not in adjudicator_html


def test_it_answers_404_for_a_missing_round(researcher):
    assert client_for(researcher).get(reverse("annotation:round_detail", args=[999])).status_code == 404


# --- lock, reopen, freeze ------------------------------------------------------------------------------------------


def test_it_locks_and_reopens_a_round_and_says_so(round_, researcher):
    client = client_for(researcher)
    response = client.post(reverse("annotation:round_lock", args=[round_.pk]), {"confirm": "on"}, follow=True)
    round_.refresh_from_db()
    assert round_.status == RoundStatus.LOCKED and "is locked" in text_of(response)
    assert reverse("annotation:adjudication_queue", args=[round_.pk]) in response.content.decode()
    # A second click (or tab) finds it already locked and says so without an error.
    again = client.post(reverse("annotation:round_lock", args=[round_.pk]), {"confirm": "on"}, follow=True)
    assert "message-info" in again.content.decode() and "message-error" not in again.content.decode()
    response = client.post(reverse("annotation:round_reopen", args=[round_.pk]), follow=True)
    round_.refresh_from_db()
    assert round_.status == RoundStatus.OPEN and "open again" in text_of(response)


def test_it_locks_only_once_the_researcher_confirms_and_says_how_to_undo_it(
    round_, researcher, annotator_a, annotator_b
):
    submit(Assignment.objects.filter(item__round=round_, annotator=annotator_a).first(), annotator_a)
    total = Assignment.objects.filter(item__round=round_).count()
    client = client_for(researcher)
    page = text_of(client.get(reverse("annotation:round_detail", args=[round_.pk])))
    assert "I understand: annotators can no longer submit or change their answers in “R1”." in page
    assert f"1 of {total} answers are in." in page and "Reopen for annotators" in page
    refused = client.post(reverse("annotation:round_lock", args=[round_.pk]), {})
    round_.refresh_from_db()
    assert refused.status_code == 400 and round_.status == RoundStatus.OPEN
    assert "Tick “I understand” to lock the round." in text_of(refused)
    client.post(reverse("annotation:round_lock", args=[round_.pk]), {"confirm": "on"})
    round_.refresh_from_db()
    assert round_.status == RoundStatus.LOCKED


def test_it_freezes_only_once_confirmed_naming_what_enters_and_what_is_left_out(
    round_, researcher, adjudicator, annotator_a, annotator_b
):
    review_all(round_, annotator_a, annotator_b, disagree=1)
    round_lock(round=round_)
    item = round_.items.get(status=ItemStatus.NEEDS_ADJUDICATION)
    adjudication_remove(item=item, user=adjudicator, reason="other", note="Không rõ.", revision=item.revision)
    client = client_for(researcher)
    page = text_of(client.get(reverse("annotation:round_detail", args=[round_.pk])))
    assert "I understand: freezing closes “R1” for good. 5 decided items enter the version;" in page
    assert "1 removed item is left out. This cannot be undone." in page
    freeze_url = reverse("annotation:round_freeze", args=[round_.pk])
    refused = client.post(freeze_url, {"name": "v1"})
    assert refused.status_code == 400 and "Tick “I understand” to freeze the round for good." in text_of(refused)
    round_.refresh_from_db()
    assert round_.status == RoundStatus.LOCKED and not DatasetVersion.objects.exists()
    assert client.post(freeze_url, {"name": "v1", "confirm": "on"}).status_code == 302
    assert DatasetVersion.objects.get().items.count() == 5


def test_it_shows_a_service_refusal_as_a_message(round_, researcher):
    round_.status = RoundStatus.FROZEN
    round_.save()
    response = client_for(researcher).post(reverse("annotation:round_reopen", args=[round_.pk]), follow=True)
    assert "message-error" in response.content.decode() and "not locked" in text_of(response)
    round_.refresh_from_db()
    assert round_.status == RoundStatus.FROZEN


def test_it_offers_the_freeze_form_only_when_locked_with_nothing_waiting(
    round_, researcher, adjudicator, annotator_a, annotator_b
):
    client = client_for(researcher)
    url = reverse("annotation:round_detail", args=[round_.pk])
    freeze_url = reverse("annotation:round_freeze", args=[round_.pk])
    assert freeze_url not in client.get(url).content.decode()
    review_all(round_, annotator_a, annotator_b, disagree=1)
    round_lock(round=round_)
    page = client.get(url)
    assert freeze_url not in page.content.decode() and "1 item is not decided yet" in text_of(page)
    response = client.post(freeze_url, {"name": "v1", "confirm": "on"})
    assert response.status_code == 400 and "1 item of round “R1” is not decided yet" in text_of(response)
    assert not DatasetVersion.objects.exists()
    item = round_.items.get(status=ItemStatus.NEEDS_ADJUDICATION)
    adjudication_resolve(item=item, user=adjudicator, traits=[], theme="love", revision=item.revision)
    assert freeze_url in client.get(url).content.decode()


def test_it_freezes_a_version_from_the_round_page_once(round_, researcher, adjudicator, annotator_a, annotator_b):
    review_all(round_, annotator_a, annotator_b, disagree=1)
    round_lock(round=round_)
    item = round_.items.get(status=ItemStatus.NEEDS_ADJUDICATION)
    adjudication_resolve(item=item, user=adjudicator, traits=["literal"], theme="love", revision=item.revision)
    client = client_for(researcher)
    freeze_url = reverse("annotation:round_freeze", args=[round_.pk])
    response = client.post(freeze_url, {"name": "  ", "confirm": "on"})
    assert response.status_code == 400 and not DatasetVersion.objects.exists()
    response = client.post(freeze_url, {"name": " v1.0 ", "idempotency_key": "freeze-form-1", "confirm": "on"})
    version = DatasetVersion.objects.get()
    assert version.name == "v1.0" and version.created_by == researcher and version.items.count() == 6
    assert response.url == reverse("annotation:version_detail", args=[version.pk])
    round_.refresh_from_db()
    assert round_.status == RoundStatus.FROZEN
    # The double submit lands on the same version; another name cannot freeze the round again.
    assert (
        client.post(freeze_url, {"name": " v1.0 ", "idempotency_key": "freeze-form-1", "confirm": "on"}).url
        == response.url
    )
    again = client.post(freeze_url, {"name": "v2", "idempotency_key": "freeze-form-2", "confirm": "on"})
    assert again.status_code == 400 and "already frozen as 'v1.0'" in text_of(again)
    assert DatasetVersion.objects.count() == 1


# --- home and navigation -------------------------------------------------------------------------------------------


def test_it_shows_an_annotator_their_rounds_on_the_home_page_and_nothing_of_others(
    round_, dataset, annotator_a, annotator_b
):
    carol, dave = make_annotator("carol"), make_annotator("dave")
    make_round(dataset, [carol, dave], name="Not mine")
    for assignment in Assignment.objects.filter(item__round=round_, annotator=annotator_b):
        submit(assignment, annotator_b)
    response = client_for(annotator_a).get(reverse("home"))
    html, page = response.content.decode(), text_of(response)
    total = Assignment.objects.filter(item__round=round_, annotator=annotator_a).count()
    assert f"R1 0 of {total} done Review" in page
    assert reverse("annotation:review_queue", args=[round_.pk]) in html
    assert "Not mine" not in page and "annotator_b" not in page
    assert f'href="{reverse("annotation:round_list")}"' in html
    assert reverse("annotation:version_list") not in html


def test_it_shows_an_adjudicator_the_rounds_waiting_for_them(round_, adjudicator, annotator_a, annotator_b):
    review_all(round_, annotator_a, annotator_b, disagree=2)
    client = client_for(adjudicator)
    assert "No locked round has items waiting for adjudication." in text_of(client.get(reverse("home")))
    round_lock(round=round_)
    response = client.get(reverse("home"))
    assert "R1 2 items to adjudicate" in text_of(response)
    assert reverse("annotation:adjudication_queue", args=[round_.pk]) in response.content.decode()


def test_it_gives_a_researcher_the_links_to_the_whole_workflow(round_, researcher):
    response = client_for(researcher).get(reverse("home"))
    html = response.content.decode()
    for name in ("round_list", "round_new", "suggestion_import", "version_list"):
        assert f'href="{reverse(f"annotation:{name}")}"' in html, name
    assert f'href="{reverse("annotation:round_stats", args=[round_.pk])}"' in html


def test_it_adds_rounds_and_versions_to_the_menu_for_the_right_roles(db):
    annotator, adjudicator = make_annotator("ann"), make_adjudicator("adj")
    rounds, versions = reverse("annotation:round_list"), reverse("annotation:version_list")
    html = client_for(annotator).get(reverse("annotation:dataset_list")).content.decode()
    assert f'href="{rounds}"' in html and f'href="{versions}"' not in html
    html = client_for(adjudicator).get(reverse("annotation:dataset_list")).content.decode()
    assert f'href="{rounds}"' in html and f'href="{versions}"' in html
    html = client_for(make_user("nobody")).get(reverse("home")).content.decode()
    assert rounds not in html and versions not in html


def test_it_keeps_progress_counts_right_after_a_skip_and_a_submit(round_, annotator_a):
    mine = list(Assignment.objects.filter(item__round=round_, annotator=annotator_a).order_by("position"))
    assignment_skip(assignment=mine[0], user=annotator_a)
    submit(mine[0], annotator_a)
    mine[0].refresh_from_db()
    assert mine[0].status == AssignmentStatus.SUBMITTED
    page = text_of(client_for(annotator_a).get(reverse("annotation:round_list")))
    assert f"You: 1 of {len(mine)} done" in page and "skipped" not in page
