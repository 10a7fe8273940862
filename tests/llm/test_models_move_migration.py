"""The llm app's move (issue #24): a database filled before it keeps every row and every link.

The database is migrated back to the layout before the move (no llm app: the models, the
response cache and the concurrency and pacing rows in the evaluation app's tables), filled
through the historical models, migrated forward, and read back through the llm models: the
same ids and values, runs and pipeline runs pointing at the same models, and the next model
registered gets a fresh id (PostgreSQL's sequence starts after the copied ids). Then back
again: the rows return to the evaluation app's tables.
"""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from artworks.models import ArtworkPipelineRun
from evaluation.models import Run
from llm.models import ModelConfig, ModelSlot, ModelThrottle, ResponseCache
from llm.services import model_add

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def _migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection)


def _before_the_move():
    """Unapplying llm unapplies what depends on it (artworks 0004, evaluation 0015); nothing else."""
    executor = _migrate([("llm", None)])
    applied = set(executor.recorder.applied_migrations())
    assert ("evaluation", "0014_run_item_number") in applied
    assert ("evaluation", "0015_models_moved_to_llm") not in applied
    assert ("artworks", "0004_models_from_llm") not in applied
    return executor.loader.project_state(sorted(applied), at_end=True).apps


def _to_the_latest():
    executor = MigrationExecutor(connection)
    _migrate(executor.loader.graph.leaf_nodes())


def _fill(apps) -> dict:
    User = apps.get_model("auth", "User")
    OldModel = apps.get_model("evaluation", "ModelConfig")
    Slot = apps.get_model("evaluation", "ModelSlot")
    Throttle = apps.get_model("evaluation", "ModelThrottle")
    Cache = apps.get_model("evaluation", "ResponseCache")
    Prompt = apps.get_model("evaluation", "PromptTemplate")
    OldRun = apps.get_model("evaluation", "Run")
    Dataset = apps.get_model("annotation", "Dataset")
    Collection = apps.get_model("artworks", "ArtworkCollection")
    PipelineRun = apps.get_model("artworks", "ArtworkPipelineRun")

    researcher = User.objects.create(username="llm-move-researcher")
    # Gaps in the ids: the copy keeps them, and what points at them keeps pointing.
    OldModel.objects.create(id=900, name="gap-filler", provider="openai", model_id="x")
    speaker = OldModel.objects.create(
        id=907,
        name="move-speaker",
        provider="openai",
        base_url="http://127.0.0.1:9/v1",
        model_id="gpt-like",
        api_key_env="OPENAI_API_KEY",
        max_concurrency=3,
        requests_per_minute=120,
        timeout=12.5,
        supports_vision=True,
        supports_logprobs=False,
        context_length=8192,
        probe={"vision": {"result": True, "detail": "saw the red square"}},
        price_input=0.15,
        price_output=0.6,
        created_by=researcher,
    )
    OldModel.objects.filter(pk=900).delete()
    listener = OldModel.objects.create(id=912, name="move-listener", provider="transformers", model_id="/models/x")
    for number in range(3):
        Slot.objects.create(model=speaker, number=number, holder="worker-1" if number == 0 else "")
    Throttle.objects.create(model=speaker, next_request_at=timezone.now())
    Cache.objects.create(key="a" * 64, response={"text": "Xin chào", "tokens_in": 12})
    Cache.objects.create(key="b" * 64, response={"choices": {"A": -0.1, "B": None}})

    dataset = Dataset.objects.create(name="move-dataset", created_by=researcher)
    prompt = Prompt.objects.create(name="move", kind="generation", messages=[], content_hash="c" * 64)
    run = OldRun.objects.create(
        kind="generation", model=speaker, prompt=prompt, dataset=dataset, status="done", tokens_in=40, tokens_out=9
    )
    collection = Collection.objects.create(name="move-collection", created_by=researcher)
    pipeline = PipelineRun.objects.create(collection=collection, speaker=speaker, listener=listener, builder=speaker)
    return {"speaker": speaker.pk, "listener": listener.pk, "run": run.pk, "pipeline": pipeline.pk}


def test_it_moves_every_row_with_its_id_and_keeps_every_link_and_moves_them_back_when_unapplied():
    # One trip there and back: each migration of the whole project costs seconds, on both databases.
    ids = _fill(_before_the_move())
    _to_the_latest()

    speaker = ModelConfig.objects.get(pk=ids["speaker"])
    assert (speaker.name, speaker.base_url, speaker.api_key_env, speaker.max_concurrency) == (
        "move-speaker",
        "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY",
        3,
    )
    assert (speaker.requests_per_minute, speaker.timeout, speaker.context_length) == (120, 12.5, 8192)
    assert (speaker.supports_vision, speaker.supports_logprobs, speaker.price_input, speaker.price_output) == (
        True,
        False,
        0.15,
        0.6,
    )
    assert speaker.probe["vision"]["detail"] == "saw the red square"
    assert speaker.created_by.username == "llm-move-researcher"
    assert ModelConfig.objects.get(pk=ids["listener"]).name == "move-listener"

    assert sorted(ModelSlot.objects.filter(model=speaker).values_list("number", "holder")) == [
        (0, "worker-1"),
        (1, ""),
        (2, ""),
    ]
    assert ModelThrottle.objects.get(model=speaker).next_request_at is not None
    assert ResponseCache.objects.get(key="a" * 64).response == {"text": "Xin chào", "tokens_in": 12}
    assert ResponseCache.objects.get(key="b" * 64).response == {"choices": {"A": -0.1, "B": None}}

    run = Run.objects.get(pk=ids["run"])
    assert run.model == speaker and (run.tokens_in, run.tokens_out, run.worker_token) == (40, 9, "")
    pipeline = ArtworkPipelineRun.objects.get(pk=ids["pipeline"])
    assert (pipeline.speaker, pipeline.listener, pipeline.builder) == (speaker, pipeline.listener, speaker)
    assert pipeline.listener.pk == ids["listener"]

    # The next registration gets an id after the copied ones, on every database.
    added = model_add(name="after-the-move", provider="openai", model_id="m", base_url="http://127.0.0.1:9/v1")
    assert added.pk > ids["listener"]

    apps = _before_the_move()
    OldModel = apps.get_model("evaluation", "ModelConfig")
    assert OldModel.objects.get(pk=ids["speaker"]).name == "move-speaker"
    assert apps.get_model("evaluation", "Run").objects.get(pk=ids["run"]).model_id == ids["speaker"]
    assert apps.get_model("evaluation", "ResponseCache").objects.filter(key="a" * 64).exists()
    assert apps.get_model("evaluation", "ModelSlot").objects.filter(model_id=ids["speaker"]).count() == 3
    _to_the_latest()
