"""The study package an artwork pipeline run exports imports unchanged and synthetic participants complete it."""

import json

import pytest
from django.core.files.base import ContentFile

from study.models import Artwork, Description, DescriptionPair, Participant, PrepStatus, Study, StudyStatus
from study.services import simulation
from study.services.imports import study_import
from study.services.studies import study_launch
from tests.artworks.report_factories import make_pipeline_run
from tests.artworks.test_pipeline import collection, listener, media, server, speaker  # noqa: F401 - fixtures

from .factories import png_bytes

pytestmark = pytest.mark.django_db


def test_it_imports_an_exported_pipeline_package_and_synthetic_participants_finish_it(settings, tmp_path, researcher):
    from artworks.services.export import artwork_study_package

    settings.MEDIA_ROOT = tmp_path / "media"
    run = make_pipeline_run(per_culture=2)
    folder = artwork_study_package(run=run, out=tmp_path / "package")
    package = json.loads((folder / "study.json").read_text(encoding="utf-8"))

    # The queued preparation would need the embedding model; the statuses are set below instead.
    study = study_import(source=folder, user=researcher, start_prepare=False)
    assert study.slug == package["slug"] and study.package == package
    assert Artwork.objects.filter(study=study).count() == 6
    assert Artwork.objects.filter(study=study, is_qc=True).count() == 2
    assert Description.objects.filter(artwork__study=study).count() == 4 * 2 * 2
    pragmatic = Description.objects.get(artwork__study=study, key="am1-chinese-pragmatic")
    assert pragmatic.self_eval_score == 0.9 and pragmatic.model == "speaker-vlm"
    assert DescriptionPair.objects.filter(artwork__study=study).count() == 4 * 2

    # Sentence pairs without matches stand in for the embedding model's output.
    DescriptionPair.objects.filter(artwork__study=study).update(matches=[])
    Study.objects.filter(pk=study.pk).update(highlight_status=PrepStatus.READY, terms_status=PrepStatus.READY)
    study = study_launch(study=Study.objects.get(pk=study.pk), user=researcher)
    assert study.status == StudyStatus.LIVE

    outcomes = simulation.synthetic_responses_generate(study=study, n=2, seed=7)
    assert [o.errors for o in outcomes] == [[], []]
    codes = {study.completion_code, study.screenout_code}
    assert all(any(code in o.final_url for code in codes) for o in outcomes)
    assert Participant.objects.filter(study=study, is_test=True).count() == 2
    assert set(Participant.objects.filter(study=study).values_list("group", flat=True)) == {"american", "chinese"}


def test_it_imports_the_package_of_a_real_pipeline_run(collection, speaker, listener, tmp_path, researcher):  # noqa: F811
    """The whole path: the pipeline (loopback OpenAI-compatible server) builds the questions and
    both descriptions, the export writes the package, the study imports and runs it."""
    from artworks.services.export import artwork_study_package
    from artworks.services.pipeline import artwork_run_execute, artwork_run_start
    from evaluation.models import RunStatus

    for artwork in collection.artworks.all():  # the pipeline fixture's image is a stub; the study checks images
        artwork.image.save(f"{artwork.key}.png", ContentFile(png_bytes(artwork.key)))
    run = artwork_run_start(collection=collection, speaker=speaker, listener=listener, samples=2, enqueue=False)
    run = artwork_run_execute(run_id=run.pk)
    assert run.status == RunStatus.DONE, run.error
    folder = artwork_study_package(run=run, out=tmp_path / "package")
    study = study_import(source=folder, user=researcher, start_prepare=False)
    built = Artwork.objects.get(study=study, is_qc=False)
    assert built.questions.filter(type="attuned").exists() and built.questions.filter(type="agnostic").count() == 2
    assert set(Description.objects.filter(artwork=built).values_list("speaker", "listener")) == {
        ("base", "american"),
        ("pragmatic", "american"),
        ("base", "chinese"),
        ("pragmatic", "chinese"),
    }
    Study.objects.filter(pk=study.pk).update(highlight_status=PrepStatus.READY, terms_status=PrepStatus.READY)
    study = study_launch(study=Study.objects.get(pk=study.pk), user=researcher)
    outcomes = simulation.synthetic_responses_generate(study=study, n=2, seed=3)
    assert [o.errors for o in outcomes] == [[], []]
    assert all(study.completion_code in o.final_url or study.screenout_code in o.final_url for o in outcomes)
