"""An artwork pipeline run built straight with the ORM (no pipeline engine), for the report and export tests.

``make_pipeline_run`` makes a collection of American and Chinese artworks, each with a symbol and two
other elements, one attuned and two agnostic questions, a base and three pragmatic candidates per
listener group (index 1 chosen), and the listener's answers: in each condition x familiarity x type
cell the first ``correct[cell]`` answers (artwork order, then group, then question) are correct.
"""

import io

from django.core.files.base import ContentFile

from artworks.models import (
    ArtworkCollection,
    ArtworkElement,
    ArtworkPipelineRun,
    ArtworkQuestion,
    CollectionArtwork,
    ListenerAnswer,
    PipelineItem,
    PipelineStep,
    SpeakerCandidate,
)
from evaluation.models import RunStatus
from tests.evaluation.factories import stored_model

GROUPS = ["american", "chinese"]
BASE_SCORE = 0.4
PRAGMATIC_SCORES = [0.5, 0.9, 0.7]

# (condition, familiarity, type) -> how many answers of the cell are correct, for 5 artworks per culture:
# 10 attuned and 20 agnostic answers per cell.
CORRECT = {
    ("no_description", "familiar", "attuned"): 10,
    ("base", "familiar", "attuned"): 10,
    ("pragmatic", "familiar", "attuned"): 10,
    ("no_description", "unfamiliar", "attuned"): 2,
    ("base", "unfamiliar", "attuned"): 4,
    ("pragmatic", "unfamiliar", "attuned"): 9,
    ("no_description", "familiar", "agnostic"): 18,
    ("base", "familiar", "agnostic"): 19,
    ("pragmatic", "familiar", "agnostic"): 19,
    ("no_description", "unfamiliar", "agnostic"): 20,
    ("base", "unfamiliar", "agnostic"): 19,
    ("pragmatic", "unfamiliar", "agnostic"): 17,
}


def png_bytes(label: str) -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (64, 48), (200, 220, 230))
    ImageDraw.Draw(image).text((4, 4), label[:8], fill=(10, 10, 10))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def make_pipeline_run(
    *,
    per_culture: int = 5,
    correct: dict | None = None,
    unique_question_keys: bool = True,
    name: str = "Demo artworks",
    image_seen: bool = False,
) -> ArtworkPipelineRun:
    correct = CORRECT if correct is None else correct
    collection = ArtworkCollection.objects.create(name=name)
    speaker = stored_model(name="speaker-vlm", model_id="speaker-vlm")
    listener = stored_model(name="listener-vlm", model_id="listener-vlm")
    run = ArtworkPipelineRun.objects.create(
        collection=collection,
        speaker=speaker,
        listener=listener,
        groups=list(GROUPS),
        samples=3,
        status=RunStatus.DONE,
        reproducibility={"speaker_model_id": "speaker-vlm", "image_seen": image_seen},
    )
    artworks = []
    position = 0
    for culture, prefix in (("american", "am"), ("chinese", "cn")):
        for n in range(1, per_culture + 1):
            key = f"{prefix}{n}"
            artwork = CollectionArtwork(
                collection=collection,
                key=key,
                title=f"Artwork {key}",
                artist="A painter",
                date="1900",
                culture=culture,
                comment="A comment.",
                position=position,
            )
            position += 1
            artwork.image.save(f"{key}.png", ContentFile(png_bytes(key)), save=False)
            artwork.save()
            artworks.append(artwork)
            symbol = f"{key} symbol"
            ArtworkElement.objects.create(artwork=artwork, name=symbol, is_symbol=True, meaning="luck", position=0)
            ArtworkElement.objects.create(artwork=artwork, name=f"{key} tree", position=1)
            ArtworkElement.objects.create(artwork=artwork, name=f"{key} river", position=2)
            prefix_q = f"{key}-" if unique_question_keys else ""
            ArtworkQuestion.objects.create(
                artwork=artwork,
                key=f"{prefix_q}q1",
                symbol=symbol,
                type="attuned",
                question=f"What does the {symbol} mean?",
                answer="Luck",
                distractors=["Grief", "War", "Harvest", "Winter", "Silence"],
                position=0,
            )
            for q in (2, 3):
                ArtworkQuestion.objects.create(
                    artwork=artwork,
                    key=f"{prefix_q}q{q}",
                    type="agnostic",
                    question=f"How many trees ({q})?",
                    answer="One",
                    distractors=["Two", "Three", "Four", "Five", "Six"],
                    position=q,
                )
            for group in GROUPS:
                PipelineItem.objects.create(
                    run=run, artwork=artwork, step=PipelineStep.BASE, group=group, status="done", image_seen=image_seen
                )
                SpeakerCandidate.objects.create(
                    run=run,
                    artwork=artwork,
                    group=group,
                    speaker="base",
                    index=0,
                    text=f"Base description of {key} for the {group} listener. It shows a {symbol}.",
                    listener_score=BASE_SCORE,
                )
                for index, score in enumerate(PRAGMATIC_SCORES):
                    SpeakerCandidate.objects.create(
                        run=run,
                        artwork=artwork,
                        group=group,
                        speaker="pragmatic",
                        index=index,
                        text=f"Pragmatic sample {index} of {key} for the {group} listener. The {symbol} means luck.",
                        listener_score=score,
                        combined=score,
                        chosen=index == 1,
                    )
    used = dict.fromkeys(correct, 0)
    for artwork in artworks:
        for group in GROUPS:
            familiarity = "familiar" if group == artwork.culture else "unfamiliar"
            for question in artwork.questions.order_by("position"):
                for condition in ("no_description", "base", "pragmatic"):
                    cell = (condition, familiarity, question.type)
                    is_correct = used.get(cell, 0) < correct.get(cell, 0)
                    used[cell] = used.get(cell, 0) + 1
                    ListenerAnswer.objects.create(
                        run=run,
                        question=question,
                        group=group,
                        familiar=familiarity == "familiar",
                        condition=condition,
                        chosen=question.answer if is_correct else question.distractors[0],
                        correct=is_correct,
                        option_scores=[{"option": question.answer, "p_correct": 0.9 if is_correct else 0.1}],
                    )
    return run
