"""Freezing refuses while any item of the round is undecided, on the page, the API and the CLI;
the funnel adds up: in round = unanimous + adjudicated + removed + undecided."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import DatasetVersion, ItemStatus, LabelChange, RoundStatus
from annotation.selectors import adjudication_queue, round_funnel, version_funnel
from annotation.services import (
    adjudication_remove,
    adjudication_resolve,
    assignment_submit,
    round_lock,
    version_freeze,
)

from .factories import api_client_for, client_for, make_dataset, make_round, numbered_csv, text_of

pytestmark = pytest.mark.django_db

NOT_DECIDED = "2 items of round “R” are not decided yet (1 awaiting reviews, 1 needing adjudication)"


def adds_up(funnel: dict) -> bool:
    return funnel["in_round"] == funnel["unanimous"] + funnel["adjudicated"] + funnel["removed"] + funnel["undecided"]


@pytest.fixture
def mixed_round(annotator_a, annotator_b, adjudicator, researcher):
    """A locked round with every state: 2 unanimous, 1 adjudicated, 1 removed (while still
    awaiting a review), 1 needing adjudication and 1 nobody reviewed."""
    dataset = make_dataset(name="Khóa", csv=numbered_csv(6, text="Câu khóa {n}"), filename="k.csv")
    round_ = make_round(dataset, [annotator_a, annotator_b], name="R", seed=2)
    items = list(round_.items.order_by("id"))
    for n, item in enumerate(items[:5]):
        for assignment in item.assignments.select_related("annotator"):
            if n == 4 and assignment.annotator != annotator_a:
                continue  # item 4: only one of the two answers
            theme = "other" if n in (2, 3) and assignment.annotator == annotator_b else "love"
            assignment_submit(assignment=assignment, user=assignment.annotator, theme=theme)
    round_lock(round=round_)
    adjudication_resolve(item=items[2], user=adjudicator, traits=[], theme="love", revision=items[2].revision)
    adjudication_remove(item=items[4], user=adjudicator, reason="inaccurate", revision=items[4].revision)
    return round_


def settle(round_, adjudicator):
    for item in round_.items.filter(status__in=[ItemStatus.PENDING, ItemStatus.NEEDS_ADJUDICATION]):
        adjudication_resolve(item=item, user=adjudicator, traits=["pragmatic"], theme="other", revision=item.revision)


def test_it_counts_every_item_of_a_round_in_mixed_states_once(mixed_round):
    funnel = round_funnel(round=mixed_round)
    assert {
        key: funnel[key]
        for key in ("in_round", "unanimous", "adjudicated", "removed", "pending", "needs_adjudication", "undecided")
    } == {
        "in_round": 6,
        "unanimous": 2,
        "adjudicated": 1,
        "removed": 1,
        "pending": 1,
        "needs_adjudication": 1,
        "undecided": 2,
    }
    assert adds_up(funnel)
    # The removed item lacked a review: it is not counted as reviewed by all.
    assert funnel["reviewed_by_all"] == 4 and funnel["final"] == 3


def test_it_refuses_to_freeze_naming_the_undecided_count(mixed_round, adjudicator, researcher):
    with pytest.raises(ValidationError) as refused:
        version_freeze(round=mixed_round, name="v1", user=researcher)
    assert NOT_DECIDED in refused.value.messages[0] and "adjudicate or remove them first" in refused.value.messages[0]
    mixed_round.refresh_from_db()
    assert mixed_round.status == RoundStatus.LOCKED and not DatasetVersion.objects.exists()
    settle(mixed_round, adjudicator)
    version = version_freeze(round=mixed_round, name="v1", user=researcher)
    assert version.funnel["undecided"] == 0 and adds_up(version.funnel)
    assert version.items.count() == version.funnel["final"] == 5


def test_it_lets_an_adjudicator_decide_an_item_that_still_awaited_a_review(mixed_round, adjudicator):
    waiting = mixed_round.items.get(status=ItemStatus.PENDING)
    assert waiting in adjudication_queue(round=mixed_round)
    adjudication_remove(
        item=waiting, user=adjudicator, reason="other", note="nobody reviewed it", revision=waiting.revision
    )
    waiting.refresh_from_db()
    assert waiting.status == ItemStatus.REMOVED
    change = LabelChange.objects.get(item=waiting, field="status")
    assert (change.old_value, change.new_value) == (ItemStatus.PENDING, ItemStatus.REMOVED)


def test_it_refuses_on_the_round_page_and_shows_what_is_left(mixed_round, adjudicator, researcher):
    client = client_for(researcher)
    url = reverse("annotation:round_detail", args=[mixed_round.pk])
    freeze_url = reverse("annotation:round_freeze", args=[mixed_round.pk])
    page = client.get(url)
    html = page.content.decode()
    assert freeze_url not in html and "2 items are not decided yet" in text_of(page)
    assert re.search(
        r'data-stage="undecided">\s*<th scope="row">Not decided yet</th>\s*<td class="numeric">2</td>', html
    )
    response = client.post(freeze_url, {"name": "v1", "confirm": "on"})
    assert response.status_code == 400 and NOT_DECIDED in text_of(response)
    assert not DatasetVersion.objects.exists()
    settle(mixed_round, adjudicator)
    assert freeze_url in client.get(url).content.decode()


def test_it_refuses_over_the_api_and_freezes_once_everything_is_decided(mixed_round, adjudicator, researcher):
    client = api_client_for(researcher, session=False)
    funnel = client.get(reverse("api:round_detail", args=[mixed_round.pk])).json()["funnel"]
    assert funnel["undecided"] == 2 and funnel["pending"] == 1 and adds_up(funnel)
    url = reverse("api:version_list")
    response = client.post(url, {"round": mixed_round.pk, "name": "v1"}, format="json")
    assert response.status_code == 400 and NOT_DECIDED in str(response.json())
    settle(mixed_round, adjudicator)
    response = client.post(url, {"round": mixed_round.pk, "name": "v1"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (
        body["name"] == "v1" and body["n_items"] == 5 and body["funnel"]["undecided"] == 0 and adds_up(body["funnel"])
    )
    assert body["provenance"] == {"unanimous": 2, "adjudicated": 3}


def test_it_lets_only_researchers_freeze_over_the_api(mixed_round, adjudicator, annotator_a):
    for user in (adjudicator, annotator_a):
        client = api_client_for(user, session=False)
        assert (
            client.post(reverse("api:version_list"), {"round": mixed_round.pk, "name": "v1"}, format="json").status_code
            == 403
        )
    anonymous = api_client_for().post(
        reverse("api:version_list"), {"round": mixed_round.pk, "name": "v1"}, format="json"
    )
    assert anonymous.status_code == 401 and not DatasetVersion.objects.exists()


def test_it_refuses_from_the_command_line_with_the_count(mixed_round, adjudicator, capsys):
    with pytest.raises(CommandError, match=re.escape(NOT_DECIDED)):
        call_command("freeze_version", "v1", "--round", "R")
    with pytest.raises(CommandError, match="no round named 'nope'"):
        call_command("freeze_version", "v1", "--round", "nope")
    settle(mixed_round, adjudicator)
    call_command("freeze_version", "v1", "--round", "R")
    assert "froze 'v1': 5 items (2 unanimous, 3 adjudicated; 1 removed)" in capsys.readouterr().out
    assert DatasetVersion.objects.get().round == mixed_round


def test_it_exits_with_status_1_when_freezing_is_refused(mixed_round):
    from django.core.management import ManagementUtility

    with pytest.raises(SystemExit) as exit_info:
        ManagementUtility(["manage.py", "freeze_version", "v1", "--round", "R"]).execute()
    assert exit_info.value.code == 1


def test_it_completes_the_funnel_of_a_version_frozen_before_undecided_was_recorded(
    mixed_round, adjudicator, researcher
):
    settle(mixed_round, adjudicator)
    version = version_freeze(round=mixed_round, name="old", user=researcher)
    # As recorded before: a pending item was dropped silently and the funnel had no undecided key.
    version.funnel = {
        "imported": 6,
        "in_round": 6,
        "reviewed_by_all": 5,
        "unanimous": 2,
        "needs_adjudication": 0,
        "adjudicated": 2,
        "removed": 1,
        "final": 4,
    }
    version.save()
    funnel = version_funnel(version=version)
    assert funnel["pending"] == 1 and funnel["undecided"] == 1 and adds_up(funnel)
    client = api_client_for(researcher, session=False)
    assert client.get(reverse("api:version_detail", args=[version.pk])).json()["funnel"]["undecided"] == 1


def test_it_offers_an_item_that_still_awaited_a_review_on_the_adjudication_pages(mixed_round, adjudicator):
    client = client_for(adjudicator)
    waiting = mixed_round.items.get(status=ItemStatus.PENDING)
    queue = client.get(reverse("annotation:adjudication_queue", args=[mixed_round.pk]))
    item_url = reverse("annotation:adjudication_item", args=[mixed_round.pk, waiting.pk])
    assert queue.status_code == 200 and item_url in queue.content.decode()
    page = client.get(item_url)
    assert page.status_code == 200 and 'name="remove-revision"' in page.content.decode()
    api = api_client_for(adjudicator, session=False)
    listed = api.get(reverse("api:adjudication_list", args=[mixed_round.pk])).json()["results"]
    assert waiting.pk in {row["id"] for row in listed}
    response = api.post(
        reverse("api:adjudication_resolve", args=[waiting.pk]),
        {"action": "remove", "reason": "inaccurate", "revision": waiting.revision},
        format="json",
    )
    assert response.status_code == 200 and response.json()["status"] == ItemStatus.REMOVED
