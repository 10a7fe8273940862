"""The model guard in the artwork pipeline (issue #11, section 1): a model that may read a secret
as its key never gets a request, whether refused at the start or turned forbidden mid-run."""

import pytest
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile

from artworks.models import ArtworkCollection, CollectionArtwork, PipelineItem
from artworks.services.pipeline import artwork_run_execute, artwork_run_start
from evaluation.models import ItemStatus
from llm.models import ModelConfig
from tests.evaluation.factories import stored_model
from tests.evaluation.test_model_security import PNG

pytestmark = pytest.mark.django_db


@pytest.fixture
def collection(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    collection = ArtworkCollection.objects.create(name="demo")
    artwork = CollectionArtwork(
        collection=collection,
        key="a0",
        title="Lotus Pond",
        artist="Wu",
        date="1650",
        culture="chinese",
        comment="A pond with lotus.",
        position=0,
    )
    artwork.image.save("a0.png", ContentFile(PNG), save=False)
    artwork.save()
    return collection


def test_it_refuses_an_artwork_run_with_a_secret_key_model(fake_openai, collection):
    speaker = stored_model(fake_openai, name="speaker", api_key_env="SECRET_KEY")
    listener = stored_model(fake_openai, name="listener")

    with pytest.raises(ValidationError) as caught:
        artwork_run_start(collection=collection, speaker=speaker, listener=listener, enqueue=False)

    assert "SECRET_KEY" in caught.value.message_dict["speaker"][0]
    assert fake_openai.count == 0


def test_it_fails_the_items_of_a_started_artwork_run_whose_model_turned_forbidden(fake_openai, collection):
    speaker = stored_model(fake_openai, name="speaker")
    run = artwork_run_start(collection=collection, speaker=speaker, listener=speaker, enqueue=False, samples=1)
    ModelConfig.objects.filter(pk=speaker.pk).update(api_key_env="SECRET_KEY")

    artwork_run_execute(run_id=run.pk)

    items = PipelineItem.objects.filter(run=run)
    assert not items.exclude(status=ItemStatus.FAILED).exists()
    assert any("SECRET_KEY is a setting of this application" in item.error for item in items)
    assert fake_openai.count == 0
