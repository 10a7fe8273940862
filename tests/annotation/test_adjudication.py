"""Adjudication pages (workflow step 5) and the item history page (step 7)."""

import re

import pytest
from django.urls import reverse

from annotation.models import ItemStatus, LabelChange
from annotation.services import (
    adjudication_resolve,
    assignment_submit,
)
from core.roles import ADJUDICATOR

from .factories import A_NOTE, B_NOTE, add_role, client_for, make_adjudication_round, make_adjudicator, make_annotator

pytestmark = pytest.mark.django_db


@pytest.fixture
def open_round(annotator_a, annotator_b, researcher):
    return make_adjudication_round(annotator_a, annotator_b, researcher, lock=False)


@pytest.fixture
def locked_round(annotator_a, annotator_b, researcher):
    return make_adjudication_round(annotator_a, annotator_b, researcher)


def queue_url(round_):
    return reverse("annotation:adjudication_queue", args=[round_.pk])


def item_url(round_, item):
    return reverse("annotation:adjudication_item", args=[round_.pk, item.pk])


def detail_url(round_, item):
    return reverse("annotation:item_detail", args=[round_.pk, item.pk])


def revision_of(html: str) -> str:
    match = re.search(r'name="resolve-revision" value="(\d+)"', html)
    assert match, "the resolve form carries the revision"
    return match.group(1)


def rows(html: str) -> dict[str, str]:
    """The comparison table's rows keyed by data-trait / data-row, with their opening tag and cells."""
    found = {}
    for match in re.finditer(r'<tr(?: class="([^"]*)")? data-(?:trait|row)="([^"]+)">(.*?)</tr>', html, re.S):
        found[match.group(2)] = (match.group(1) or "", match.group(3))
    return found


# --- Permissions ------------------------------------------------------------------


def test_it_sends_anonymous_visitors_to_the_login_page(locked_round, anonymous_client):
    round_, items = locked_round
    for url in (queue_url(round_), item_url(round_, items[0]), detail_url(round_, items[0])):
        response = anonymous_client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
    response = anonymous_client.post(item_url(round_, items[0]), {"action": "resolve"})
    assert response.status_code == 302
    assert type(items[0]).objects.get(pk=items[0].pk).status == ItemStatus.NEEDS_ADJUDICATION


@pytest.mark.parametrize("persona", ["annotator_client", "researcher_client", "outsider_client"])
def test_it_lets_only_adjudicators_adjudicate(locked_round, persona, request):
    round_, items = locked_round
    client = request.getfixturevalue(persona)
    assert client.get(queue_url(round_)).status_code == 403
    assert client.get(item_url(round_, items[0])).status_code == 403
    response = client.post(
        item_url(round_, items[0]),
        {"action": "resolve", "resolve-theme": "love", "resolve-revision": items[0].revision},
    )
    assert response.status_code == 403
    assert type(items[0]).objects.get(pk=items[0].pk).status == ItemStatus.NEEDS_ADJUDICATION


def test_it_lets_an_annotator_who_also_holds_the_adjudicator_role_adjudicate(locked_round, annotator_a):
    """As in the paper, annotators can resolve together: give them the Adjudicator role too."""
    add_role(annotator_a, ADJUDICATOR)
    round_, items = locked_round
    response = client_for(annotator_a).get(item_url(round_, items[0]))
    assert response.status_code == 200 and B_NOTE in response.content.decode()


def test_it_shows_item_history_to_researchers_adjudicators_and_assigned_annotators_only(
    locked_round, annotator_client, researcher_client, adjudicator_client, outsider_client
):
    round_, items = locked_round
    url = detail_url(round_, items[0])
    for client in (annotator_client, researcher_client, adjudicator_client):
        assert client.get(url).status_code == 200
    assert outsider_client.get(url).status_code == 403
    stranger = make_annotator("annotator_c")
    assert client_for(stranger).get(url).status_code == 404
    other_round_url = reverse("annotation:item_detail", args=[round_.pk + 1000, items[0].pk])
    assert researcher_client.get(other_round_url).status_code == 404


def test_it_answers_404_for_an_unknown_round_or_an_item_of_another_round(locked_round, adjudicator_client):
    round_, items = locked_round
    assert adjudicator_client.get(reverse("annotation:adjudication_queue", args=[round_.pk + 1000])).status_code == 404
    assert (
        adjudicator_client.get(
            reverse("annotation:adjudication_item", args=[round_.pk + 1000, items[0].pk])
        ).status_code
        == 404
    )
    assert adjudicator_client.get(reverse("annotation:adjudication_item", args=[round_.pk, 999999])).status_code == 404


# --- Before the lock --------------------------------------------------------------


def test_it_shows_nothing_before_the_round_is_locked(open_round, adjudicator_client):
    round_, items = open_round
    queue = adjudicator_client.get(queue_url(round_))
    html = queue.content.decode()
    assert queue.status_code == 200 and 'id="not-locked"' in html
    assert items[0].expression.text not in html and "need adjudication" not in html
    page = adjudicator_client.get(item_url(round_, items[0]))
    html = page.content.decode()
    assert page.status_code == 200 and 'id="not-locked"' in html
    for secret in (A_NOTE, B_NOTE, "annotator_a", "annotator_b", 'id="resolve-form"', "differs", "Virtues"):
        assert secret not in html, secret
    history = adjudicator_client.get(detail_url(round_, items[0])).content.decode()
    for secret in (A_NOTE, B_NOTE, "annotator_a", "annotator_b", 'id="outcome"'):
        assert secret not in history, secret


def test_it_refuses_a_decision_posted_before_the_lock_without_showing_labels(open_round, adjudicator_client):
    round_, items = open_round
    response = adjudicator_client.post(
        item_url(round_, items[0]),
        {
            "action": "resolve",
            "resolve-theme": "love",
            "resolve-note": "my reasoning",
            "resolve-revision": items[0].revision,
        },
    )
    html = response.content.decode()
    assert response.status_code == 400 and "locked" in html and "my reasoning" in html
    assert A_NOTE not in html and B_NOTE not in html and "annotator_b" not in html
    items[0].refresh_from_db()
    assert items[0].status == ItemStatus.NEEDS_ADJUDICATION


# --- The queue --------------------------------------------------------------------


def test_it_lists_the_items_that_need_adjudication_with_what_differs(locked_round, adjudicator_client):
    round_, items = locked_round
    response = adjudicator_client.get(queue_url(round_))
    html = response.content.decode()
    assert response.status_code == 200
    assert "3 items need adjudication." in html
    assert items[2].expression.text not in html  # unanimous
    body = html.split("<tbody>")[1]
    entries = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    assert [items[i].expression.text in entry for i, entry in zip((0, 1, 3), entries, strict=True)] == [True] * 3
    assert ">theme<" in entries[0] and "Folk knowledge" in entries[0] and "flagged" not in entries[0]
    assert ">theme<" not in entries[1] and "unsure:" in entries[1] and "flagged" in entries[1]
    assert "Pragmatic nuance" in entries[2] and "Literal" not in entries[2]
    assert f'href="{item_url(round_, items[0])}" role="button" id="next-item"' in html


# --- The side-by-side page ----------------------------------------------------------


def test_it_shows_both_annotators_side_by_side_with_the_differing_rows_marked(locked_round, adjudicator_client):
    round_, items = locked_round
    response = adjudicator_client.get(item_url(round_, items[0]))
    html = response.content.decode()
    assert response.status_code == 200
    assert items[0].expression.text in html and items[0].expression.explanation in html
    assert A_NOTE in html and B_NOTE in html
    header = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    assert re.findall(r'<th scope="col">([^<]+)</th>', header)[1:4] == ["LLM suggestion", "annotator_a", "annotator_b"]
    table = rows(html)
    assert table["folk_knowledge"][0] == "differs" and "⚠ differs" in table["folk_knowledge"][1]
    assert "✗ Reject" in table["folk_knowledge"][1] and "✓ Accept" in table["folk_knowledge"][1]
    assert "Suggested" in table["folk_knowledge"][1]
    assert table["literal"][0] == "" and "= same" in table["literal"][1]
    assert table["theme"][0] == "differs" and "1. Love" in table["theme"][1] and "2. Virtues" in table["theme"][1]
    assert table["flagged"][0] == ""
    assert A_NOTE in table["note"][1] and B_NOTE in table["note"][1]
    assert table["pragmatic"][0] == "" and "Suggested" not in table["pragmatic"][1]


def test_it_prefills_the_traits_both_marked_present_and_an_agreed_theme(locked_round, adjudicator_client):
    round_, items = locked_round
    html = adjudicator_client.get(item_url(round_, items[0])).content.decode()
    checked = set(re.findall(r'name="resolve-traits" value="(\w+)" id="[^"]+" checked', html))
    assert checked == {"literal"}
    assert not re.search(r'name="resolve-theme" value="\w+" id="[^"]+" checked', html)  # themes differ
    html = adjudicator_client.get(item_url(round_, items[1])).content.decode()
    assert set(re.findall(r'name="resolve-traits" value="(\w+)" id="[^"]+" checked', html)) == {"literal"}
    assert re.findall(r'name="resolve-theme" value="(\w+)" id="[^"]+" checked', html) == ["love"]
    table = rows(html)
    assert table["flagged"][0] == "differs" and "⚑ Flagged" in table["flagged"][1]
    assert table["folk_knowledge"][0] == "differs" and "? Unsure" in table["folk_knowledge"][1]
    html = adjudicator_client.get(item_url(round_, items[3])).content.decode()
    assert "+ Added" in rows(html)["pragmatic"][1] and rows(html)["pragmatic"][0] == "differs"


def test_it_offers_keyboard_shortcuts(locked_round, adjudicator_client):
    round_, items = locked_round
    html = adjudicator_client.get(item_url(round_, items[0])).content.decode()
    assert re.findall(r'aria-keyshortcuts="(\d)"', html) == [str(n) for n in range(1, 8)]
    assert 'aria-keyshortcuts="Enter"' in html and "js/adjudication.js" in html


def test_it_serves_only_the_fragment_to_htmx(locked_round, adjudicator_client):
    round_, items = locked_round
    response = adjudicator_client.get(item_url(round_, items[0]), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="adjudication"') and "<html" not in html
    assert "HX-Request" in response["Vary"]


# --- Resolving and removing ---------------------------------------------------------


def test_it_resolves_an_item_and_moves_to_the_next_one(locked_round, adjudicator_client, adjudicator):
    round_, items = locked_round
    response = adjudicator_client.post(
        item_url(round_, items[0]),
        {
            "action": "resolve",
            "resolve-traits": ["literal", "folk_knowledge"],
            "resolve-theme": "virtues",
            "resolve-note": "B is right",
            "resolve-revision": items[0].revision,
        },
    )
    assert response.status_code == 302 and response["Location"] == item_url(round_, items[1])
    items[0].refresh_from_db()
    assert items[0].status == ItemStatus.ADJUDICATED and items[0].resolved_by == adjudicator
    assert sorted(items[0].final_traits.values_list("code", flat=True)) == ["folk_knowledge", "literal"]
    assert items[0].final_theme.code == "virtues" and items[0].resolution_note == "B is right"
    page = adjudicator_client.get(response["Location"]).content.decode()
    assert "was resolved" in page and items[0].expression.text in page
    # The resolved item now shows its decision and no live form.
    html = adjudicator_client.get(item_url(round_, items[0])).content.decode()
    assert 'id="current-resolution"' in html and "Adjudicated" in html and 'id="resolve-form"' not in html


def test_it_swaps_in_the_next_item_for_htmx_and_updates_the_address(locked_round, adjudicator_client):
    round_, items = locked_round
    response = adjudicator_client.post(
        item_url(round_, items[1]),
        {
            "action": "resolve",
            "resolve-traits": ["literal"],
            "resolve-theme": "love",
            "resolve-revision": items[1].revision,
        },
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert response.status_code == 200 and response["HX-Push-Url"] == item_url(round_, items[3])
    assert html.lstrip().startswith('<section id="adjudication"') and f'data-item="{items[3].pk}"' in html
    assert items[1].expression.text in html and "was resolved" in html and "autofocus" in html
    items[1].refresh_from_db()
    assert items[1].status == ItemStatus.ADJUDICATED


def test_it_removes_an_item_with_a_reason(locked_round, adjudicator_client):
    round_, items = locked_round
    response = adjudicator_client.post(
        item_url(round_, items[3]),
        {
            "action": "remove",
            "remove-reason": "culturally_inappropriate",
            "remove-note": "offensive",
            "remove-revision": items[3].revision,
        },
    )
    # Removing the last item in queue order wraps around to the first waiting one.
    assert response.status_code == 302 and response["Location"] == item_url(round_, items[0])
    items[3].refresh_from_db()
    assert items[3].status == ItemStatus.REMOVED and items[3].removal_reason == "culturally_inappropriate"
    assert items[3].resolution_note == "offensive"


def test_it_requires_a_reason_to_remove_and_keeps_the_input(locked_round, adjudicator_client):
    round_, items = locked_round
    response = adjudicator_client.post(
        item_url(round_, items[0]),
        {"action": "remove", "remove-reason": "", "remove-note": "kept text", "remove-revision": items[0].revision},
    )
    html = response.content.decode()
    assert response.status_code == 400 and "Say why the item is removed." in html and "kept text" in html
    response = adjudicator_client.post(
        item_url(round_, items[0]),
        {"action": "remove", "remove-reason": "other", "remove-note": "  ", "remove-revision": items[0].revision},
    )
    html = response.content.decode()
    assert response.status_code == 400 and "say why the item is removed" in html
    assert re.search(r'<option value="other" selected>', html)
    items[0].refresh_from_db()
    assert items[0].status == ItemStatus.NEEDS_ADJUDICATION


def test_it_keeps_the_input_when_the_theme_is_missing(locked_round, adjudicator_client):
    round_, items = locked_round
    response = adjudicator_client.post(
        item_url(round_, items[0]),
        {
            "action": "resolve",
            "resolve-traits": ["pragmatic"],
            "resolve-note": "half done",
            "resolve-revision": items[0].revision,
        },
    )
    html = response.content.decode()
    assert response.status_code == 400 and "Choose one theme." in html and "half done" in html
    assert set(re.findall(r'name="resolve-traits" value="(\w+)" id="[^"]+" checked', html)) == {"pragmatic"}
    items[0].refresh_from_db()
    assert items[0].status == ItemStatus.NEEDS_ADJUDICATION


def test_it_lets_one_of_two_adjudicators_win_and_tells_the_other_who(locked_round, adjudicator):
    round_, items = locked_round
    second = make_adjudicator("adjudicator_2")
    first_client, second_client = client_for(adjudicator), client_for(second)
    url = item_url(round_, items[0])
    first_revision = revision_of(first_client.get(url).content.decode())
    second_revision = revision_of(second_client.get(url).content.decode())
    assert first_revision == second_revision
    won = first_client.post(
        url,
        {
            "action": "resolve",
            "resolve-traits": ["literal"],
            "resolve-theme": "love",
            "resolve-revision": first_revision,
        },
    )
    assert won.status_code == 302
    lost = second_client.post(
        url,
        {
            "action": "resolve",
            "resolve-traits": ["folk_knowledge", "pragmatic"],
            "resolve-theme": "criticism",
            "resolve-note": "my careful reasoning",
            "resolve-revision": second_revision,
        },
    )
    html = lost.content.decode()
    assert lost.status_code == 409
    assert "adjudicator resolved this item first" in html and 'role="alert" id="conflict"' in html
    current = re.search(r'id="current-resolution".*?</section>', html, re.S).group(0)
    assert "Adjudicated" in current and "Love" in current and "Literal" in current and "adjudicator" in current
    assert "my careful reasoning" in html
    assert set(re.findall(r'name="resolve-traits" value="(\w+)" id="[^"]+" checked', html)) == {
        "folk_knowledge",
        "pragmatic",
    }
    assert re.findall(r'name="resolve-theme" value="(\w+)" id="[^"]+" checked', html) == ["criticism"]
    items[0].refresh_from_db()
    assert items[0].final_theme.code == "love" and items[0].resolved_by == adjudicator
    # A removal racing the same way loses too, and htmx still gets a swappable 200.
    lost = second_client.post(
        url,
        {"action": "remove", "remove-reason": "inaccurate", "remove-revision": second_revision},
        headers={"HX-Request": "true"},
    )
    assert lost.status_code == 200 and "adjudicator resolved this item first" in lost.content.decode()
    assert items[0].__class__.objects.get(pk=items[0].pk).status == ItemStatus.ADJUDICATED


def test_it_returns_to_the_queue_when_nothing_is_left(locked_round, adjudicator_client, adjudicator):
    round_, items = locked_round
    for item in (items[0], items[1]):
        adjudication_resolve(item=item, user=adjudicator, traits=[], theme="love", revision=item.revision)
    response = adjudicator_client.post(
        item_url(round_, items[3]),
        {"action": "resolve", "resolve-theme": "other", "resolve-revision": items[3].revision},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200 and response["HX-Redirect"] == queue_url(round_)
    html = adjudicator_client.get(queue_url(round_)).content.decode()
    assert "No item is waiting for adjudication." in html and "Nothing is waiting" in html


# --- History ----------------------------------------------------------------------------


def test_it_shows_the_history_with_old_and_new_values_actor_and_time(locked_round, adjudicator, researcher_client):
    round_, items = locked_round
    adjudication_resolve(
        item=items[0], user=adjudicator, traits=["literal"], theme="criticism", note="n", revision=items[0].revision
    )
    response = researcher_client.get(detail_url(round_, items[0]))
    html = response.content.decode()
    assert response.status_code == 200
    table = re.search(r'<table class="striped compact history" id="history">.*?</table>', html, re.S).group(0)
    history_rows = re.findall(
        r"<tr[^>]*>\s*<td><time datetime=\"([^\"]+)\">[^<]+</time></td>\s*<td>(.*?)</td>\s*<th scope=\"row\">(.*?)</th>\s*<td class=\"old-value\">(.*?)</td>\s*<td class=\"new-value\">(.*?)</td>",
        table,
        re.S,
    )
    assert len(history_rows) == LabelChange.objects.filter(item=items[0]).count()
    by_field = {
        (re.sub(r"<.*?>", "", actor).replace("(decision)", "").strip(), field): (old, new)
        for _at, actor, field, old, new in history_rows
    }
    assert by_field[("annotator_a", "Theme")] == ("—", "Love")
    assert by_field[("annotator_b", "Theme")] == ("—", "Virtues")
    assert by_field[("adjudicator", "Status")] == ("Needs adjudication", "Adjudicated")
    assert by_field[("adjudicator", "Final theme")] == ("—", "Criticism")
    assert by_field[("annotator_a", "Trait decisions")][1] == "Literal expression: Accept; Folk knowledge: Reject"
    assert all(re.match(r"\d{4}-\d\d-\d\dT", at) for at, *_ in history_rows)
    assert "Criticism" in re.search(r'id="outcome".*?</dl>', html, re.S).group(0)


def test_it_shows_an_edit_as_old_and_new_value(open_round, annotator_a):
    round_, items = open_round
    assignment = items[0].assignments.get(annotator=annotator_a)
    assignment_submit(
        assignment=assignment,
        user=annotator_a,
        theme="work_nature",
        trait_decisions={"literal": "accept", "folk_knowledge": "reject"},
        note=A_NOTE,
        revision=assignment.revision,
    )
    html = client_for(annotator_a).get(detail_url(round_, items[0])).content.decode()
    assert re.search(
        r'<th scope="row">Theme</th>\s*<td class="old-value">Love</td>\s*<td class="new-value">Work and nature</td>',
        html,
    )


def test_it_shows_an_annotator_only_their_own_changes_before_the_lock(open_round, annotator_client):
    round_, items = open_round
    response = annotator_client.get(detail_url(round_, items[0]))
    html = response.content.decode()
    assert response.status_code == 200
    assert A_NOTE in html and "annotator_a" in html
    for secret in (B_NOTE, "annotator_b", "Virtues", 'id="outcome"', "Needs adjudication", "Unanimous"):
        assert secret not in html, secret
    assert 'id="outcome-pending"' in html
    # Nor for the unanimous item: "unanimous" would tell A what B answered.
    html = annotator_client.get(detail_url(round_, items[2])).content.decode()
    assert "Unanimous" not in html and "annotator_b" not in html


def test_it_shows_annotators_the_outcome_once_resolved(locked_round, adjudicator, annotator_client):
    round_, items = locked_round
    adjudication_resolve(
        item=items[0],
        user=adjudicator,
        traits=["literal"],
        theme="criticism",
        note="final word",
        revision=items[0].revision,
    )
    html = annotator_client.get(detail_url(round_, items[0])).content.decode()
    outcome = re.search(r'id="outcome".*?</dl>', html, re.S).group(0)
    assert "Adjudicated" in outcome and "Criticism" in outcome and "Literal" in outcome and "final word" in outcome
    assert "adjudicator" in outcome
    # Their own answer beside it; the other annotator's labels stay theirs.
    assert "Your answer" in html and B_NOTE not in html and "annotator_b" not in html
    html = annotator_client.get(detail_url(round_, items[2])).content.decode()
    assert "Unanimous" in re.search(r'id="outcome".*?</dl>', html, re.S).group(0)
