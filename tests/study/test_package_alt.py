"""Issue 27, part 2: an artwork's image text alternative comes from the package ("alt", and its
"zh-hans" translation); a package without it imports, and the launch checklist names the artworks."""

import re

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import escape

from study.demo import write_demo_package
from study.models import Artwork, Participant, PrepStatus, Study, StudyStatus, Term, TermStatus
from study.selectors.studies import study_checklist, study_launch_blockers
from study.selectors.translations import study_translations_missing
from study.services import participants as flow
from study.services.imports import StudyImportError, study_import
from study.services.participants import prolific_id_for
from study.services.simulation import entry_url
from study.steps import step_parse
from study.views.presenters import step_context

from .factories import package_dict, write_package

pytestmark = pytest.mark.django_db

# Messy real input: surrounding spaces, a quote and an ampersand the template must escape.
CN1_ALT = '  A crane stands on a pine by a "river" & two peaches beside it.  '
CN1_ALT_ZH = "  松树上站着一只鹤，旁边有两个桃子。 "


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _package(slug: str, *, alt: bool = True, **fields) -> dict:
    # Three described artworks and two checks; every session shows all of them.
    package = package_dict(slug=slug, n_american=2, n_chinese=1, n_qc=2, artworks_per_participant=5, **fields)
    if alt:
        for artwork in package["artworks"]:
            artwork["alt"] = f"A painting, {artwork['id']}."
        cn1 = next(a for a in package["artworks"] if a["id"] == "cn1")
        cn1["alt"] = CN1_ALT
        cn1["zh-hans"] = {"alt": CN1_ALT_ZH}
    return package


def _imported(tmp_path, package: dict, *, status: str = StudyStatus.LIVE) -> Study:
    """Through the importer (the factory's make_study skips it, and its translations with it)."""
    study = study_import(source=write_package(tmp_path / package["slug"], package), start_prepare=False)
    # The launch and its preparation are not under test here: a live study takes participants.
    Study.objects.filter(pk=study.pk).update(
        status=status, highlight_status=PrepStatus.READY, terms_status=PrepStatus.READY
    )
    Term.objects.filter(artwork__study=study).update(status=TermStatus.CONFIRMED)
    study.refresh_from_db()
    return study


def _first_artwork_page(client, study: Study, pid: str, group: str) -> tuple[str, Artwork]:
    client.get(entry_url("", study.slug, pid=prolific_id_for(pid), group=group))
    participant = Participant.objects.get(prolific_pid=prolific_id_for(pid))
    flow.consent_give(participant=participant)
    participant.refresh_from_db()
    flow.step_submit(participant=participant, step_key="instructions", data={})
    html = client.get(reverse("study:run", args=[study.slug])).content.decode()
    return html, participant.assignments.get(order=1).artwork


def test_it_stores_the_alt_text_and_its_translation_trimmed(tmp_path):
    study = _imported(tmp_path, _package("alt-stored"))
    cn1 = study.artworks.get(key="cn1")
    assert cn1.alt == CN1_ALT.strip()
    assert cn1.translations["zh-hans"]["alt"] == CN1_ALT_ZH.strip()
    assert study.artworks.get(key="am1").alt == "A painting, am1."


@pytest.mark.parametrize(("group", "pid"), [("american", "PALTEN"), ("chinese", "PALTZH")])
def test_it_renders_the_alt_text_of_the_package_as_the_image_alt(client, tmp_path, group, pid):
    study = _imported(tmp_path, _package(f"alt-shown-{group}"))
    html, artwork = _first_artwork_page(client, study, pid, group)
    if artwork.key == "cn1":
        expected = CN1_ALT_ZH.strip() if group == "chinese" else CN1_ALT.strip()
        expected = expected.replace("&", "&amp;").replace('"', "&quot;")
    else:
        # No Chinese alt for this artwork: the Chinese group hears the English one, not nothing.
        expected = f"A painting, {artwork.key}."
    assert f'alt="{expected}"' in html


@pytest.mark.parametrize(
    ("group", "pid", "expected"), [("american", "PCN1EN", CN1_ALT), ("chinese", "PCN1ZH", CN1_ALT_ZH)]
)
def test_it_gives_each_group_the_alt_text_in_its_language(client, tmp_path, group, pid, expected):
    study = _imported(tmp_path, _package(f"alt-cn1-{group}"))
    _first_artwork_page(client, study, pid, group)
    participant = Participant.objects.get(prolific_pid=prolific_id_for(pid))
    # cn1's page wherever the random order put it: the same presenter and template the run view uses.
    order = participant.assignments.get(artwork__key="cn1").order
    context = step_context(participant, step_parse(f"{order}:symbols"))
    html = render_to_string("study/participant/_artwork.html", {**context, "study": study})
    assert f'alt="{escape(expected.strip())}"' in html


def test_it_falls_back_to_the_title_when_the_package_has_no_alt_text(client, tmp_path):
    study = _imported(tmp_path, _package("alt-fallback", alt=False))
    html, artwork = _first_artwork_page(client, study, "PALTNONE", "american")
    assert f'alt="Artwork: {artwork.title}"' in html


def test_it_imports_a_package_without_alt_text_and_warns_on_the_checklist_naming_the_artworks(
    researcher_client, tmp_path
):
    package = _package("alt-missing")
    for artwork in package["artworks"]:
        if artwork["id"] in ("am2", "qc1"):
            del artwork["alt"]
    study = _imported(tmp_path, package, status=StudyStatus.DRAFT)

    item = {i["key"]: i for i in study_checklist(study)}["alt_text"]
    assert item["done"] is False
    assert item["detail"] == {
        "required": False,
        "missing": [{"artwork": "am2", "title": "Artwork am2"}, {"artwork": "qc1", "title": "Artwork qc1"}],
    }
    assert study_launch_blockers(study=study) == []
    html = researcher_client.get(reverse("study:detail", args=[study.slug])).content.decode()
    warning = re.search(r'data-testid="alt-text-warning">(.*?)</p>', html, re.S)
    assert warning, "no alt text warning on the study page"
    named = re.findall(r'data-artwork="([^"]+)"', warning.group(1))
    assert named == ["am2", "qc1"]
    assert "2 artworks have no “alt” text" in warning.group(1)


def test_it_marks_the_checklist_done_when_every_artwork_has_alt_text(researcher_client, tmp_path):
    study = _imported(tmp_path, _package("alt-complete"), status=StudyStatus.DRAFT)
    assert {i["key"]: i for i in study_checklist(study)}["alt_text"]["done"] is True
    html = researcher_client.get(reverse("study:detail", args=[study.slug])).content.decode()
    assert 'data-testid="alt-text-warning"' not in html


def test_it_lists_an_english_alt_text_without_its_chinese_translation(tmp_path):
    study = _imported(tmp_path, _package("alt-untranslated"))
    rows = [(r["group"], r["artwork"], r["english"]) for r in study_translations_missing(study) if r["field"] == "alt"]
    # cn1's alt is translated; the others are in English only, in package order.
    assert rows == [("chinese", key, f"A painting, {key}.") for key in ("am1", "am2", "qc1", "qc2")]


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        ("alt", 42, 'artwork "am1", alt: expected a string, got int'),
        ("alt", "x" * 1001, 'artwork "am1", alt: at most 1000 characters, got 1001'),
        ("zh-hans", {"alt": "  "}, 'artwork "am1".zh-hans.alt: must not be empty'),
        ("zh-hans", {"alt": ["鹤"]}, 'artwork "am1".zh-hans.alt: expected a string, got list'),
    ],
)
def test_it_refuses_a_bad_alt_text_naming_the_artwork_and_imports_nothing(tmp_path, where, value, message):
    package = _package("alt-bad")
    am1 = next(a for a in package["artworks"] if a["id"] == "am1")
    am1[where] = value
    with pytest.raises(StudyImportError) as caught:
        study_import(source=write_package(tmp_path / "alt-bad", package), start_prepare=False)
    assert message in caught.value.errors
    assert Study.objects.count() == 0 and Artwork.objects.count() == 0


def test_it_gives_every_demo_artwork_an_alt_text_in_english_and_chinese(tmp_path):
    study = study_import(source=write_demo_package(tmp_path / "demo"), start_prepare=False)
    assert {i["key"]: i for i in study_checklist(study)}["alt_text"]["done"] is True
    for artwork in study.artworks.all():
        assert artwork.alt and artwork.translations["zh-hans"]["alt"], artwork.key
