"""The artwork pipeline and what its models can do: images only to a model known to take them, a
refused image falling back to text, a run refused before it starts when its speaker or listener gives
no log-probabilities, and the base description's Eq. 4 self-evaluation (the report, the export)."""

import math

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from artworks.models import ArtworkCollection, ArtworkPipelineRun, CollectionArtwork, SpeakerCandidate
from artworks.selectors.report import artwork_report
from artworks.services.export import study_package_data
from artworks.services.pipeline import artwork_run_execute, artwork_run_start
from evaluation.models import RunStatus
from llm.models import ModelConfig
from llm.services.capabilities import reply_sees_no_image
from tests.evaluation.factories import stored_model
from tests.evaluation.fake_openai import FakeOpenAI, pipeline_reply, pipeline_top_tokens

pytestmark = pytest.mark.django_db
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
# pipeline_top_tokens: log P(Correct) -0.1 against log P(Incorrect) -2.5 for the true answer.
P_TRUE = 1 / (1 + math.exp(-2.4))


@pytest.fixture
def collection(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    collection = ArtworkCollection.objects.create(name="demo")
    artwork = CollectionArtwork(
        collection=collection, key="a0", title="Lotus Pond", artist="Wu", date="1650", culture="chinese", position=0
    )
    artwork.image.save("a0.png", ContentFile(PNG), save=False)
    artwork.save()
    return collection


@pytest.fixture
def server():
    with FakeOpenAI(reply=pipeline_reply) as fake:
        fake.top_tokens = pipeline_top_tokens
        yield fake


def run_pipeline(collection, speaker, listener):
    run = artwork_run_start(collection=collection, speaker=speaker, listener=listener, samples=2, enqueue=False)
    return artwork_run_execute(run_id=run.pk)


def test_it_sends_no_image_to_a_model_not_known_to_take_images(collection, server):
    speaker = stored_model(server, name="speaker", model_id="fake-vlm")  # vision unknown: never probed
    listener = stored_model(server, name="listener", model_id="fake-vlm", supports_vision=False)

    run = run_pipeline(collection, speaker, listener)

    assert run.status == RunStatus.DONE, list(run.items.values_list("step", "error"))
    assert server.image_urls() == []
    assert set(run.items.values_list("image_seen", flat=True)) == {False}
    assert run.reproducibility["image_seen"] == {"builder": False, "speaker": False, "listener": False}
    assert artwork_report(run=run)["run"]["image_seen"] is False


def test_it_falls_back_to_text_when_the_endpoint_refuses_the_image_and_records_it(collection, server):
    server.accepts_images = False  # registered as a vision model, and it is not one
    speaker = stored_model(server, name="speaker", model_id="fake-vlm", supports_vision=True)
    listener = stored_model(server, name="listener", model_id="fake-vlm", supports_vision=True)

    run = run_pipeline(collection, speaker, listener)

    assert run.status == RunStatus.DONE, list(run.items.values_list("step", "error"))
    assert set(run.items.values_list("image_seen", flat=True)) == {False}
    speaker.refresh_from_db()
    assert speaker.supports_vision is False and speaker.probe["vision"]["during_run"] is True
    # Refused once per model, then the rest went as text.
    assert len(server.image_urls()) == 2


def test_it_records_image_seen_only_when_a_vision_model_got_and_saw_the_image(collection, server):
    speaker = stored_model(server, name="speaker", model_id="fake-vlm", supports_vision=True)
    listener = stored_model(server, name="listener", model_id="fake-vlm", supports_vision=True)

    def reply(body):
        if "write an English description of the artwork" in str(body["messages"]):
            return "I'm sorry, I cannot see the image you attached. " + pipeline_reply(body)
        return pipeline_reply(body)

    server.reply = reply
    run = run_pipeline(collection, speaker, listener)

    seen = dict(run.items.values_list("step", "image_seen"))
    assert seen["symbols"] is True and seen["listener"] is True
    assert seen["base"] is False and seen["pragmatic"] is False
    assert reply_sees_no_image("No image was provided.") and not reply_sees_no_image("The image shows a lotus.")


def test_it_refuses_a_run_whose_speaker_or_listener_gives_no_logprobs(collection, server, researcher_client):
    speaker = stored_model(server, name="speaker", model_id="fake-vlm")
    listener = stored_model(server, name="deaf", model_id="fake-vlm", supports_logprobs=False)

    page = researcher_client.post(
        reverse("artworks:run_list"),
        {"collection": collection.pk, "speaker": speaker.pk, "listener": listener.pk, "samples": 2, "lam": 0},
    )
    assert page.status_code == 400 and "deaf gives no token log-probabilities" in page.content.decode()

    api = researcher_client.post(
        reverse("artworks-api:run_list"),
        {"collection": "demo", "speaker": "speaker", "listener": "deaf"},
        content_type="application/json",
    )
    assert api.status_code == 400 and "log-probabilities" in api.json()["listener"][0]

    with pytest.raises(CommandError, match="listener: deaf gives no token log-probabilities"):
        call_command("run_artwork_pipeline", "--collection", "demo", "--speaker", "speaker", "--listener", "deaf")
    assert not ArtworkPipelineRun.objects.exists() and server.count == 0
    # The builder only writes text: it may be such a model.
    assert artwork_run_start(collection=collection, speaker=speaker, listener=speaker, builder=listener).pk


def test_it_scores_the_base_description_with_eq4_for_the_report_and_the_export(collection, server):
    speaker = stored_model(server, name="speaker", model_id="fake-vlm", supports_vision=True)
    listener = stored_model(server, name="listener", model_id="fake-vlm", supports_vision=True)

    run = run_pipeline(collection, speaker, listener)

    assert run.status == RunStatus.DONE, list(run.items.values_list("step", "error"))
    bases = SpeakerCandidate.objects.filter(run=run, speaker="base")
    assert bases.count() == 2
    assert [c.listener_score for c in bases] == [pytest.approx(P_TRUE)] * 2
    assert all(c.combined == pytest.approx(math.log(P_TRUE)) for c in bases)
    scores = artwork_report(run=run)["speaker_scores"]
    assert scores["base"] == {"mean": pytest.approx(P_TRUE), "n": 2}
    data, _images, warnings = study_package_data(run=run)
    descriptions = [d for artwork in data["artworks"] for d in artwork["descriptions"]]
    assert {d["speaker"] for d in descriptions} == {"base", "pragmatic"}, warnings
    assert all(d["self_eval_score"] == pytest.approx(P_TRUE) for d in descriptions if d["speaker"] == "base")
    assert ModelConfig.objects.get(pk=speaker.pk).supports_vision is True
