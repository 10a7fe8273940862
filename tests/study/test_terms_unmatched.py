"""Confirmed terms that reach participants in their inflected forms, and those that occur in no
description: listed on the Terms page, warned about on the launch checklist, by the API and by
import_study."""

import io
import random
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from study.models import StudyStatus, Term, TermStatus
from study.selectors.prep import study_terms_unmatched
from study.selectors.studies import study_checklist, study_launch_blockers
from study.services import prep
from study.services.participants import prolific_id_for
from study.services.simulation import DjangoClientTransport, SyntheticParticipant, answer_key, entry_url
from study.services.studies import study_launch

from .factories import make_study, package_dict, write_package

pytestmark = pytest.mark.django_db

CN1_TEXTS = {
    "base": "Two mandarin ducks swim between the lotus leaves. Red crowned cranes fly above.",
    "pragmatic": (
        "A pair of Mandarin Ducks\u2019 feathers shine: in China they stand for a faithful couple. "
        "The red-crowned cranes above wish the couple a long life. Cranesbill grows on the bank."
    ),
}


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _inflected_package(slug="inflected", n_qc=0) -> dict:
    """The factory's package with cn1's descriptions in the plural and its terms in the singular."""
    package = package_dict(slug=slug, n_american=1, n_chinese=2, n_qc=n_qc)
    cn1 = next(a for a in package["artworks"] if a["id"] == "cn1")
    for description in cn1["descriptions"]:
        description["text"] = CN1_TEXTS[description["speaker"]]
    cn1["terms"] = [
        {"term": "mandarin duck", "zh": "鸳鸯", "wikidata": ""},
        {"term": "red-crowned crane", "zh": "丹顶鹤", "wikidata": ""},
        {"term": "crane's-bill geranium", "zh": "老鹳草", "wikidata": ""},
        {"term": "phoenix", "zh": "凤凰", "wikidata": ""},
    ]
    return package


@pytest.fixture
def study():
    study = make_study(_inflected_package(), status=StudyStatus.DRAFT)
    # A rejected term is never glossed, whether it occurs or not.
    Term.objects.filter(artwork__study=study, term="phoenix").update(status=TermStatus.REJECTED)
    return study


def test_it_finds_the_confirmed_terms_that_occur_in_no_description(study):
    assert [t.term for t in study_terms_unmatched(study=study)] == ["crane's-bill geranium"]

    Term.objects.filter(artwork__study=study, term="mandarin duck").update(term="mandarin drake")
    assert [t.term for t in study_terms_unmatched(study=study)] == ["crane's-bill geranium", "mandarin drake"]


def test_it_lists_them_on_the_terms_page_and_marks_the_inflected_forms(study, researcher_client):
    html = researcher_client.get(reverse("study:terms", args=[study.slug])).content.decode()

    warning = re.search(r'data-testid="unmatched-terms">(.*?)</ul>', html, re.S).group(1)
    assert "1 confirmed term occurs in no description" in warning
    unmatched = Term.objects.get(term="crane's-bill geranium")
    assert f'href="#term-{unmatched.pk}"' in warning and "老鹳草" in warning and "Artwork cn1" in warning
    assert "mandarin duck" not in warning and "red-crowned crane" not in warning and "phoenix" not in warning
    # The descriptions mark the plural, possessive and spaced forms, and nothing inside "Cranesbill".
    duck = Term.objects.get(term="mandarin duck")
    crane = Term.objects.get(term="red-crowned crane")
    assert f'title="鸳鸯" data-term="{duck.pk}">mandarin ducks</mark>' in html
    assert f'title="鸳鸯" data-term="{duck.pk}">Mandarin Ducks\u2019</mark>' in html
    assert f'title="丹顶鹤" data-term="{crane.pk}">Red crowned cranes</mark>' in html
    assert f'title="丹顶鹤" data-term="{crane.pk}">red-crowned cranes</mark>' in html
    assert "Cranesbill grows" in html
    # Each row says whether its term occurs.
    flagged = re.findall(r'<tr id="term-(\d+)"(?:(?!</tr>).)*data-testid="term-unmatched"', html, re.S)
    assert flagged == [str(unmatched.pk)]


def test_it_says_so_in_the_row_it_redraws(study, researcher_client):
    unmatched = Term.objects.get(term="crane's-bill geranium")
    row = researcher_client.post(
        reverse("study:terms", args=[study.slug]),
        {"action": "save", "term": unmatched.pk, "zh": "老鹳草"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert row.lstrip().startswith(f'<tr id="term-{unmatched.pk}"') and 'data-testid="term-unmatched"' in row

    duck = Term.objects.get(term="mandarin duck")
    row = researcher_client.post(
        reverse("study:terms", args=[study.slug]),
        {"action": "confirm", "term": duck.pk, "zh": "鸳鸯"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert "Confirmed." in row and 'data-testid="term-unmatched"' not in row


def test_the_launch_checklist_warns_without_blocking_the_launch(study, researcher_client, researcher):
    item = {i["key"]: i for i in study_checklist(study)}["glosses"]
    assert item["done"] is False
    assert item["detail"] == {
        "required": False,
        "unmatched": [{"artwork": "cn1", "title": "Artwork cn1", "term": "crane's-bill geranium", "zh": "老鹳草"}],
    }

    html = researcher_client.get(reverse("study:detail", args=[study.slug])).content.decode()
    assert 'data-item="glosses" data-done="no"' in html
    warning = re.search(r'data-testid="glosses-warning">(.*?)</p>', html, re.S).group(1)
    assert "1 confirmed term occurs in no description" in warning and "crane&#x27;s-bill geranium" in warning
    assert reverse("study:terms", args=[study.slug]) in warning

    api = APIClient()
    api.force_authenticate(researcher)
    detail = api.get(reverse("study_api:study-detail", args=[study.slug])).json()
    glosses = next(i for i in detail["checklist"] if i["key"] == "glosses")
    assert glosses["done"] is False and glosses["detail"]["unmatched"][0]["term"] == "crane's-bill geranium"

    assert study_launch_blockers(study=study) == []
    assert study_launch(study=study).status == StudyStatus.LIVE


def test_the_checklist_is_clear_once_every_confirmed_term_occurs(study, researcher_client):
    Term.objects.filter(term="crane's-bill geranium").update(status=TermStatus.REJECTED)
    item = {i["key"]: i for i in study_checklist(study)}["glosses"]
    assert item == {"key": "glosses", "done": True, "detail": {"required": False, "unmatched": []}}
    html = researcher_client.get(reverse("study:detail", args=[study.slug])).content.decode()
    assert 'data-item="glosses" data-done="yes"' in html and 'data-testid="glosses-warning"' not in html
    assert (
        'data-testid="unmatched-terms"'
        not in researcher_client.get(reverse("study:terms", args=[study.slug])).content.decode()
    )


def test_import_study_warns_about_them_and_still_prints_the_slug_last(tmp_path):
    folder = write_package(tmp_path / "pkg", _inflected_package(slug="cli-terms", n_qc=2))
    out, err = io.StringIO(), io.StringIO()
    call_command("import_study", str(folder), stdout=out, stderr=err)

    assert out.getvalue().strip().splitlines()[-1] == "cli-terms"
    warnings = err.getvalue().strip().splitlines()
    assert len(warnings) == 2, warnings  # the geranium, and the phoenix (confirmed at import)
    assert "“crane's-bill geranium” of artwork “cn1” occurs in no description" in warnings[0]
    assert "“phoenix”" in warnings[1]
    assert "mandarin duck" not in err.getvalue() and "red-crowned crane" not in err.getvalue()


def test_a_researcher_adds_a_term_in_the_singular_that_the_text_has_in_the_plural(study, researcher):
    cn1 = study.artworks.get(key="cn1")
    Term.objects.filter(artwork=cn1).delete()

    added = prep.term_add(artwork=cn1, term="Mandarin  duck", zh="鸳鸯", user=researcher)
    assert (added.term, added.status) == ("Mandarin duck", TermStatus.CONFIRMED)
    crane = prep.term_add(artwork=cn1, term="red crowned crane", zh="丹顶鹤", user=researcher)
    assert crane.term == "red crowned crane"
    # The text's own spelling where it differs only in case or hyphenation.
    lotus = prep.term_add(artwork=cn1, term="LOTUS", zh="莲", user=researcher)
    assert lotus.term == "lotus"

    for again in ("mandarin ducks", "MANDARIN-DUCKS", "red-crowned cranes"):
        with pytest.raises(prep.PrepError, match="already listed"):
            prep.term_add(artwork=cn1, term=again, zh="x", user=researcher)
    with pytest.raises(prep.PrepError, match="does not occur"):
        prep.term_add(artwork=cn1, term="cranesbill geranium", zh="x", user=researcher)
    assert Term.objects.filter(artwork=cn1).count() == 3


def test_participants_see_the_label_of_a_term_the_text_inflects():
    study = make_study(_inflected_package(slug="glossed"))
    pages = []

    class Recording(DjangoClientTransport):
        def _page(self, response, url):
            page = super()._page(response, url)
            pages.append(page.html)
            return page

    # Every participant sees both Chinese artworks (three artworks a session): cn1 is described to all.
    outcome = SyntheticParticipant(Recording(), key=answer_key(study=study), rng=random.Random(3)).run(
        entry_url("", study.slug, pid=prolific_id_for("PIDGLOSS"), group="chinese"), prolific_id_for("PIDGLOSS")
    )
    assert outcome.errors == []
    described = [html for html in pages if "Two mandarin ducks" in html or "Mandarin Ducks" in html]
    assert described, "no page showed cn1's description"
    glossed = "".join(described)
    assert re.search(
        r'<span class="term">(mandarin ducks|Mandarin Ducks\u2019)<span class="gloss" lang="zh-Hans">（鸳鸯）', glossed
    )
    assert re.search(
        r'<span class="term">(Red crowned|red-crowned) cranes<span class="gloss" lang="zh-Hans">（丹顶鹤）', glossed
    )
    assert "Cranesbill grows" in glossed or "Red crowned cranes fly" in glossed
    assert "Cranesbill<span" not in glossed and "老鹳草" not in glossed
