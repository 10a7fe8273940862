"""The Contract of the artworks app move (issue #13): a database filled before the move keeps every row.

The database is migrated back to the layout before the move (evaluation 0008, every other app at
its latest migration that does not depend on the move), filled through the historical models the
way the demo fills it (the six demo artworks with their elements and questions, a pipeline run
with its items, candidates and listener answers), migrated forward, and read back through the
``artworks`` models: the same ids and the same values, and the content types (with their
permissions) now under the artworks label.
"""

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from artworks import models as artworks_models
from artworks.demo import ARTIST, ARTWORKS, DATE
from artworks.models import (
    ArtworkCollection,
    ArtworkElement,
    ArtworkPipelineRun,
    ArtworkQuestion,
    CollectionArtwork,
    ListenerAnswer,
    PipelineItem,
    SpeakerCandidate,
)

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

MOVED = (
    ArtworkCollection,
    CollectionArtwork,
    ArtworkElement,
    ArtworkQuestion,
    ArtworkPipelineRun,
    PipelineItem,
    SpeakerCandidate,
    ListenerAnswer,
)
ANNOTATIONS = Path(artworks_models.__file__).parent / "demo" / "annotations.json"


def _applied_leaves(executor: MigrationExecutor) -> list[tuple[str, str]]:
    """The last applied migration of every app: the nodes whose state is the database's."""
    applied = set(executor.recorder.applied_migrations())
    graph = executor.loader.graph
    return [
        node
        for node in applied
        if node in graph.nodes
        and not any(child in applied and child[0] == node[0] for child in graph.node_map[node].children)
    ]


def _migrate_to_before_the_move():
    executor = MigrationExecutor(connection)
    # Unapplying the artworks app unapplies evaluation 0009 (it depends on artworks 0001) and
    # whatever depends on the move; every other migration stays.
    executor.migrate([("artworks", None)])
    executor = MigrationExecutor(connection)
    leaves = _applied_leaves(executor)
    assert ("evaluation", "0008_artwork_run_queued_at") in leaves
    assert not [node for node in leaves if node[0] == "artworks"]
    return executor.loader.project_state(leaves, at_end=True).apps


def _migrate_to_the_latest():
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _fill(apps) -> dict:
    """What the demo makes, written through the pre-move models; returns the content types' ids."""
    User = apps.get_model("auth", "User")
    ModelConfig = apps.get_model("evaluation", "ModelConfig")
    Collection = apps.get_model("evaluation", "ArtworkCollection")
    Artwork = apps.get_model("evaluation", "CollectionArtwork")
    Element = apps.get_model("evaluation", "ArtworkElement")
    Question = apps.get_model("evaluation", "ArtworkQuestion")
    Run = apps.get_model("evaluation", "ArtworkPipelineRun")
    Item = apps.get_model("evaluation", "PipelineItem")
    Candidate = apps.get_model("evaluation", "SpeakerCandidate")
    Answer = apps.get_model("evaluation", "ListenerAnswer")
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")

    researcher = User.objects.create(username="move-researcher")
    speaker = ModelConfig.objects.create(name="move-speaker", provider="openai", model_id="vlm", max_concurrency=2)
    listener = ModelConfig.objects.create(name="move-listener", provider="openai", model_id="llm")
    annotations = json.loads(ANNOTATIONS.read_text(encoding="utf-8"))
    now = timezone.now()

    collection = Collection.objects.create(
        name="Demo artworks", description="Six artworks drawn by code for the demo.", created_by=researcher
    )
    questions = []
    artworks = []
    for position, data in enumerate(ARTWORKS):
        artwork = Artwork.objects.create(
            collection=collection,
            key=data["id"],
            title=data["title"],
            artist=ARTIST,
            date=DATE,
            culture=data["culture"],
            comment=data["comment"],
            image=f"collections/{collection.pk}/{data['id']}.png",
            image_sha256=f"{position:064d}",
            background=f"Background of {data['title']}." if position % 2 else "",
            reviewed_by=researcher if position == 0 else None,
            reviewed_at=now if position == 0 else None,
            position=position,
        )
        artworks.append(artwork)
        for n, element in enumerate(annotations[data["id"]]["elements"], start=1):
            Element.objects.create(
                artwork=artwork,
                name=element["name"],
                is_symbol=element["is_symbol"],
                meaning="shown in the demo" if element["is_symbol"] else "",
                position=n,
                edited_by=researcher,
            )
        for n, question in enumerate(annotations[data["id"]]["questions"], start=1):
            questions.append(
                Question.objects.create(
                    artwork=artwork,
                    key=question["id"],
                    type=question["type"],
                    symbol=question["symbol"],
                    question=question["question"],
                    answer=question["answer"],
                    distractors=question["distractors"],
                    position=n,
                    edited_by=researcher,
                )
            )

    run = Run.objects.create(
        collection=collection,
        speaker=speaker,
        listener=listener,
        builder=None,
        groups=["american", "chinese"],
        samples=2,
        temperature=1.0,
        lam=0.25,
        word_limit=75,
        limit=3,
        status="done",
        reproducibility={"speaker": {"name": "move-speaker"}, "prompts_hash": "abc123", "packages": {"django": "5"}},
        created_by=researcher,
        queued_at=now - timedelta(minutes=3),
        started_at=now - timedelta(minutes=2),
        finished_at=now,
        heartbeat_at=now - timedelta(seconds=5),
        worker_token="a" * 32,
    )
    for artwork in artworks[:3]:
        for group in run.groups:
            for step in ("base", "pragmatic", "listener"):
                Item.objects.create(
                    run=run,
                    artwork=artwork,
                    step=step,
                    group=group,
                    status="done" if step != "listener" or group == "american" else "failed",
                    attempts=1,
                    messages=[{"role": "user", "content": f"{step} for {artwork.key}"}],
                    response="{}",
                    error="" if step != "listener" or group == "american" else "no logprobs",
                    image_seen=step != "listener",
                    finished_at=now,
                )
            for kind in ("base", "pragmatic"):
                for index in range(run.samples if kind == "pragmatic" else 1):
                    Candidate.objects.create(
                        run=run,
                        artwork=artwork,
                        group=group,
                        speaker=kind,
                        index=index,
                        text=f"A {kind} description of {artwork.title} for {group} listeners ({index}).",
                        raw_text=f"raw {index}",
                        likelihood=-1.5 - index,
                        listener_score=0.5 + index / 10 if kind == "pragmatic" else None,
                        combined=0.1 * index if kind == "pragmatic" else None,
                        chosen=index == 0,
                    )
    for question in questions:
        if question.artwork_id not in {artwork.pk for artwork in artworks[:3]}:
            continue
        for group in run.groups:
            for condition in ("no_description", "base", "pragmatic"):
                Answer.objects.create(
                    run=run,
                    question=question,
                    group=group,
                    familiar=group in question.artwork.culture,
                    condition=condition,
                    option_scores=[0.5, 0.1, 0.1, 0.1, 0.1, 0.1],
                    chosen=question.answer,
                    correct=condition != "no_description",
                )

    content_types = {}
    for model in MOVED:
        name = model._meta.model_name
        content_type, _ = ContentType.objects.get_or_create(app_label="evaluation", model=name)
        Permission.objects.get_or_create(content_type=content_type, codename=f"view_{name}", defaults={"name": name})
        content_types[name] = content_type.pk
    return content_types


def _rows(apps_or_models, app_label: str | None = None) -> dict[str, list[dict]]:
    rows = {}
    for model in MOVED:
        name = model._meta.model_name
        manager = (apps_or_models.get_model(app_label, model.__name__) if app_label else model).objects
        rows[name] = list(manager.order_by("pk").values())
    return rows


def test_it_reads_every_row_written_before_the_move_back_through_the_artworks_models():
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    old_apps = _migrate_to_before_the_move()
    try:
        content_types = _fill(old_apps)
        before = _rows(old_apps, "evaluation")
    finally:
        _migrate_to_the_latest()
    ContentType.objects.clear_cache()

    after = _rows(None)

    assert {name: len(rows) for name, rows in before.items()} == {name: len(rows) for name, rows in after.items()}
    assert all(before[name] for name in before), "every moved model holds rows"
    for name in before:
        # Columns added after the move (the pipeline's cost) are new; every column that was moved reads back the same.
        moved_columns = [{key: row[key] for key in old} for row, old in zip(after[name], before[name], strict=True)]
        assert moved_columns == before[name], name
    collection = ArtworkCollection.objects.get(name="Demo artworks")
    assert collection.artworks.count() == len(ARTWORKS)
    assert collection.pipeline_runs.get().listener_answers.filter(correct=True).exists()
    for model in MOVED:
        content_type = ContentType.objects.get_for_model(model)
        assert (content_type.app_label, content_type.pk) == ("artworks", content_types[model._meta.model_name])
        assert Permission.objects.filter(content_type=content_type, codename=f"view_{model._meta.model_name}").exists()
    assert not ContentType.objects.filter(app_label="evaluation", model__in=[m._meta.model_name for m in MOVED])
