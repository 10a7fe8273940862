"""The demo study: a package made in code that imports cleanly, and the command that seeds and launches it."""

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from PIL import Image

from study.demo import LABEL, SLUG, demo_package, write_demo_package
from study.models import Description, PrepStatus, Study, StudyStatus, Term, TermStatus
from study.services.imports import study_import
from study.services.participants import prolific_id_for
from study.text import split_sentences

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.VAR_DIR = tmp_path / "var"


def test_the_demo_package_imports_cleanly(tmp_path):
    study = study_import(source=write_demo_package(tmp_path / "demo"), start_prepare=False)

    assert study.slug == SLUG and study.status == StudyStatus.DRAFT
    assert (study.artworks_per_participant, study.qc_per_participant, study.quota_per_group) == (6, 2, 10)
    regular = study.artworks.filter(is_qc=False)
    assert regular.filter(culture="american").count() == 4 and regular.filter(culture="chinese").count() == 4
    assert study.artworks.filter(is_qc=True).count() == 2
    assert Description.objects.filter(artwork__study=study).count() == 8 * 4
    terms = Term.objects.filter(artwork__study=study)
    assert terms.count() >= 8 and set(terms.values_list("status", flat=True)) == {TermStatus.CONFIRMED}
    assert set(terms.values_list("artwork__culture", flat=True)) == {"chinese"}


def test_every_demo_image_is_labelled_as_drawn_by_code(tmp_path):
    folder = write_demo_package(tmp_path / "demo")
    for artwork in demo_package()["artworks"]:
        with Image.open(folder / artwork["image"]) as image:
            assert image.format == "PNG" and image.size == (640, 440)
            band = image.convert("RGB").crop((0, 410, 640, 440))
            colours = {colour for _, colour in band.getcolors(maxcolors=100000)}
            # A dark band with the yellow label text on it.
            assert (20, 20, 20) in colours and (255, 235, 120) in colours, artwork["id"]
    assert LABEL == "DEMO ARTWORK – drawn by code"


def test_writing_the_demo_package_again_changes_nothing(tmp_path):
    folder = write_demo_package(tmp_path / "demo")
    before = {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in folder.rglob("*") if path.is_file()}
    write_demo_package(folder)
    after = {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in folder.rglob("*") if path.is_file()}
    assert before == after and len(before) == 11
    assert json.loads((folder / "study.json").read_text(encoding="utf-8")) == demo_package()


def test_the_demo_texts_give_highlighting_and_glosses_something_to_show():
    for artwork in demo_package()["artworks"]:
        texts = {(d["listener"], d["speaker"]): d["text"] for d in artwork["descriptions"]}
        if artwork["qc"]:
            assert texts == {}
            # Instructed-response or plainly visible answers only.
            continue
        for listener in ("american", "chinese"):
            base, pragmatic = (
                split_sentences(texts[(listener, "base")]),
                split_sentences(texts[(listener, "pragmatic")]),
            )
            assert 3 <= len(base) <= 5 and 3 <= len(pragmatic) <= 5
            assert set(base) & set(pragmatic), (artwork["id"], listener)
            assert texts[(listener, "base")] != texts[(listener, "pragmatic")]
        for description in artwork["descriptions"]:
            assert isinstance(description["self_eval_score"], float)
        chinese_texts = " ".join(texts.values()).lower()
        for term in artwork.get("terms", []):
            assert term["term"].lower() in chinese_texts, term
        assert {q["type"] for q in artwork["questions"]} == {"attuned", "agnostic"}


def _fake_prepare(monkeypatch, *, highlight=PrepStatus.READY, error=""):
    from study.services import prep

    calls = []

    def fake(*, study, term_model=None):
        calls.append(study.slug)
        Study.objects.filter(pk=study.pk).update(
            highlight_status=highlight, highlight_error=error, terms_status=PrepStatus.READY
        )
        study.refresh_from_db()
        return study

    monkeypatch.setattr(prep, "study_prepare", fake)
    return calls


def test_the_seed_command_imports_prepares_launches_and_prints_entry_links(monkeypatch, settings, researcher):
    calls = _fake_prepare(monkeypatch)
    out = io.StringIO()
    call_command("seed_demo_study", stdout=out)

    study = Study.objects.get(slug=SLUG)
    assert study.status == StudyStatus.LIVE and study.created_by == researcher
    assert calls == [SLUG]
    assert (settings.VAR_DIR / "demo-study" / "study.json").is_file()
    text = out.getvalue()
    # Prolific-shaped ids, the same at every start: the entry link refuses any other.
    study_id = prolific_id_for("demo")
    for group in ("american", "chinese"):
        link = (
            f"http://127.0.0.1:8000/s/demo-artworks/?PROLIFIC_PID={prolific_id_for(f'demo-{group}-1')}"
            f"&STUDY_ID={study_id}&SESSION_ID={prolific_id_for(f'demo-{group}-1-session')}&group={group}"
        )
        assert link in text
        assert Client().get(link.removeprefix("http://127.0.0.1:8000")).status_code == 302

    again = io.StringIO()
    call_command("seed_demo_study", stdout=again)
    assert Study.objects.count() == 1 and calls == [SLUG]
    assert "already exists (live)" in again.getvalue()


def test_the_seed_command_leaves_a_draft_when_the_preparation_fails(monkeypatch):
    _fake_prepare(monkeypatch, highlight=PrepStatus.FAILED, error="no model")
    out = io.StringIO()
    call_command("seed_demo_study", stdout=out)
    assert Study.objects.get(slug=SLUG).status == StudyStatus.DRAFT
    assert "(no model)" in out.getvalue() and "not launched: the sentence pairs are not computed" in out.getvalue()

    # Once the preparation works, running the command again finishes the job.
    calls = _fake_prepare(monkeypatch)
    call_command("seed_demo_study", stdout=io.StringIO())
    assert calls == [SLUG] and Study.objects.get(slug=SLUG).status == StudyStatus.LIVE
