"""Study packages and studies built in code for the study tests.

``package_dict`` is a valid study.json; ``write_package`` puts it with its images in a
folder; ``make_study`` builds the same study straight in the database (no import
service), live and ready, so flow and results tests do not depend on the importer.
"""

import functools
import io
import json
from pathlib import Path

from django.core.files.base import ContentFile

from study.models import (
    Artwork,
    Description,
    DescriptionPair,
    PrepStatus,
    Question,
    Study,
    StudyStatus,
    Term,
    TermSource,
    TermStatus,
)
from study.text import split_sentences

GROUPS = ["american", "chinese"]


@functools.cache  # the same few labels in hundreds of tests; bytes never change
def png_bytes(label: str = "DEMO", size=(64, 48)) -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, (230, 220, 200))
    ImageDraw.Draw(image).text((4, 4), label[:8], fill=(20, 20, 20))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def artwork_dict(key: str, culture: str, *, qc: bool = False) -> dict:
    symbol = f"{key} symbol"
    artwork = {
        "id": key,
        "title": f"Artwork {key}",
        "artist": "Demo painter",
        "date": "1900",
        "culture": culture,
        "image": f"images/{key}.png",
        "qc": qc,
        "elements": [
            {"name": symbol, "is_symbol": True},
            {"name": f"{key} tree", "is_symbol": False},
            {"name": f"{key} river", "is_symbol": False},
        ],
        "questions": [
            {
                "id": f"{key}-q1",
                "symbol": symbol,
                "type": "attuned",
                "question": f"What does the {symbol} stand for?",
                "answer": f"{key} right answer",
                "distractors": [f"{key} wrong {n}" for n in range(1, 6)],
            },
            {
                "id": f"{key}-q2",
                "symbol": "",
                "type": "agnostic",
                "question": f"What colour is the sky in {key}?",
                "answer": f"{key} blue",
                "distractors": [f"{key} colour {n}" for n in range(1, 6)],
            },
        ],
        "descriptions": [],
    }
    if qc:
        # Instructed-response items: the answer is written in the question.
        for question in artwork["questions"]:
            question["question"] = f"Attention check: please choose '{question['answer']}'."
    else:
        for listener in GROUPS:
            artwork["descriptions"] += [
                {
                    "id": f"{key}-{listener}-base",
                    "speaker": "base",
                    "listener": listener,
                    "model": "gemma-3",
                    "text": f"This painting shows a {symbol}. The river flows past a tree. It was painted in 1900.",
                    "self_eval_score": 0.4,
                },
                {
                    "id": f"{key}-{listener}-pragmatic",
                    "speaker": "pragmatic",
                    "listener": listener,
                    "model": "gemma-3",
                    "text": (
                        f"This painting shows a {symbol}, a sign of long life. The river flows past a tree. "
                        "Viewers from your culture may know this tradition."
                    ),
                    "self_eval_score": 0.7,
                },
            ]
    if culture == "chinese" and not qc:
        artwork["terms"] = [{"term": "long life", "zh": "长寿", "wikidata": "Q1"}]
    return artwork


def package_dict(*, slug: str = "artworks", n_american: int = 6, n_chinese: int = 6, n_qc: int = 2, **fields) -> dict:
    artworks = [artwork_dict(f"am{n}", "american") for n in range(1, n_american + 1)]
    artworks += [artwork_dict(f"cn{n}", "chinese") for n in range(1, n_chinese + 1)]
    artworks += [artwork_dict(f"qc{n}", "american" if n % 2 else "chinese", qc=True) for n in range(1, n_qc + 1)]
    package = {
        "slug": slug,
        "title": "Artwork descriptions study",
        "groups": list(GROUPS),
        "artworks_per_participant": min(12, n_american + n_chinese + n_qc),
        "qc_per_participant": min(2, n_qc),
        "qc_threshold": 0.75,
        "quota_per_group": 10,
        "completion_code": "C0MPL3TE",
        "screenout_code": "SCR33N",
        "no_consent_code": "N0C0NSENT",
        "similarity_threshold": 0.8,
        "artworks": artworks,
    }
    package.update(fields)
    return package


def write_package(folder: Path, package: dict | None = None) -> Path:
    package = package or package_dict()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.json").write_text(json.dumps(package, ensure_ascii=False, indent=1), encoding="utf-8")
    for artwork in package["artworks"]:
        image = folder / artwork["image"]
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_bytes(png_bytes(artwork["id"]))
    return folder


def make_study(package: dict | None = None, *, status: str = StudyStatus.LIVE) -> Study:
    """The study of ``package`` in the database, bypassing the importer, live and ready;
    each pair has its second sentences matched."""
    package = package or package_dict()
    study = Study.objects.create(
        slug=package["slug"],
        title=package["title"],
        groups=package["groups"],
        artworks_per_participant=package["artworks_per_participant"],
        qc_per_participant=package["qc_per_participant"],
        qc_threshold=package["qc_threshold"],
        quota_per_group=package["quota_per_group"],
        completion_code=package["completion_code"],
        screenout_code=package["screenout_code"],
        no_consent_code=package["no_consent_code"],
        similarity_threshold=package["similarity_threshold"],
        status=status,
        package=package,
        highlight_status=PrepStatus.READY,
        terms_status=PrepStatus.READY,
    )
    # Written in one statement per table (a study has about a hundred rows): the factory runs in
    # hundreds of tests, and row-by-row inserts were most of their set-up.
    artworks = []
    for position, data in enumerate(package["artworks"]):
        artwork = Artwork(
            study=study,
            key=data["id"],
            title=data["title"],
            artist=data["artist"],
            date=data["date"],
            culture=data["culture"],
            is_qc=data["qc"],
            elements=data["elements"],
            position=position,
        )
        artwork.image.save(f"{study.slug}-{data['id']}.png", ContentFile(png_bytes(data["id"])), save=False)
        artworks.append(artwork)
    Artwork.objects.bulk_create(artworks)
    questions, descriptions, terms = [], {}, []
    for artwork, data in zip(artworks, package["artworks"], strict=True):
        for n, question in enumerate(data["questions"]):
            questions.append(
                Question(
                    artwork=artwork,
                    key=question["id"],
                    symbol=question["symbol"],
                    type=question["type"],
                    question=question["question"],
                    answer=question["answer"],
                    distractors=question["distractors"],
                    position=n,
                )
            )
        for description in data["descriptions"]:
            descriptions[(artwork.key, description["listener"], description["speaker"])] = Description(
                artwork=artwork,
                key=description["id"],
                speaker=description["speaker"],
                listener=description["listener"],
                model=description["model"],
                text=description["text"],
                self_eval_score=description["self_eval_score"],
                sentences=split_sentences(description["text"]),
            )
        for term in data.get("terms", []):
            terms.append(
                Term(
                    artwork=artwork,
                    term=term["term"],
                    zh=term["zh"],
                    wikidata=term.get("wikidata", ""),
                    source=TermSource.PACKAGE,
                    status=TermStatus.CONFIRMED,
                )
            )
    Question.objects.bulk_create(questions)
    Description.objects.bulk_create(descriptions.values())
    Term.objects.bulk_create(terms)
    DescriptionPair.objects.bulk_create(
        DescriptionPair(
            artwork=artwork,
            listener=listener,
            base=descriptions[(artwork.key, listener, "base")],
            pragmatic=descriptions[(artwork.key, listener, "pragmatic")],
            matches=[[1, 1, 1.0]],
            model_name="test",
        )
        for artwork in artworks
        for listener in package["groups"]
        if (artwork.key, listener, "base") in descriptions and (artwork.key, listener, "pragmatic") in descriptions
    )
    return study
