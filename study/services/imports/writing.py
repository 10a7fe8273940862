"""Writing a validated study package: the draft study and its rows in one transaction, its images
deleted again when the transaction fails."""

import hashlib

from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from core.files import ImageRefused
from core.packages import storage_delete
from core.services.idempotency import idempotent_create, idempotent_repeat_of

from ...models import (
    DEVICES_DEFAULT,
    TRANSLATION,
    Artwork,
    Description,
    DescriptionPair,
    Question,
    Speaker,
    Study,
    Term,
    TermSource,
    TermStatus,
)
from ...text import split_sentences
from .. import prep
from ..images import artwork_image_variants_store
from .reading import StudyImportError, package_json_read, package_open_checked
from .validation import PackageChecker

IMPORT_IDEMPOTENCY_SCOPE = "study.import"


def study_import(
    *, source, user=None, filename: str = "", start_prepare: bool = True, idempotency_key: str | None = None
) -> Study:
    """Validate a whole study package and create its draft study, or raise StudyImportError.

    ``source`` is a folder, a .zip path, zip bytes or an uploaded zip file. With
    ``start_prepare`` the sentence pairs and term lookup are queued once the study is
    committed (the demo seeding runs them itself instead). A repeat of an import with the same
    ``idempotency_key`` (a double submit) gets the study the first one created.
    """
    earlier = idempotent_repeat_of(scope=IMPORT_IDEMPOTENCY_SCOPE, key=idempotency_key, user=user, model=Study)
    if earlier is not None:
        return earlier
    package = package_open_checked(source=source, filename=filename)
    data, raw = package_json_read(package=package)
    checker = PackageChecker(data, package)
    errors = checker.check()
    if errors:
        raise StudyImportError(errors)

    written: list[str] = []
    try:
        with transaction.atomic():
            study = idempotent_create(
                scope=IMPORT_IDEMPOTENCY_SCOPE,
                key=idempotency_key,
                user=user,
                model=Study,
                create=lambda: _write(data, raw, checker.image_data, user, written),
            )
            if start_prepare and not study.idempotent_repeat:
                # Robust: the study is committed either way, and a broker that is down must not make the
                # import look failed; the study page offers to start the preparation again.
                transaction.on_commit(lambda: _start_prepare(study), robust=True)
    except IntegrityError:
        storage_delete(written)
        # Two imports of one slug at once: the unique constraint decided.
        raise StudyImportError([f"slug: {_('a study “%(slug)s” already exists') % {'slug': data['slug']}}"]) from None
    except BaseException:
        storage_delete(written)
        raise
    return study


def _write(data: dict, raw: bytes, images: dict, user, written: list[str]) -> Study:
    study = Study.objects.create(
        slug=data["slug"],
        title=data["title"].strip(),
        groups=list(data["groups"]),
        artworks_per_participant=data["artworks_per_participant"],
        qc_per_participant=data["qc_per_participant"],
        qc_threshold=float(data["qc_threshold"]),
        quota_per_group=data["quota_per_group"],
        completion_code=data["completion_code"].strip(),
        screenout_code=data["screenout_code"].strip(),
        no_consent_code=data["no_consent_code"].strip(),
        similarity_threshold=float(data["similarity_threshold"]),
        devices=list(data.get("devices") or DEVICES_DEFAULT),
        package=data,
        package_sha256=hashlib.sha256(raw).hexdigest(),
        created_by=user if user is not None and user.is_authenticated else None,
    )
    questions, descriptions, terms = [], [], []
    for position, item in enumerate(data["artworks"]):
        artwork = Artwork(
            study=study,
            key=item["id"],
            title=item["title"].strip(),
            alt=(item.get("alt") or "").strip(),
            artist=item.get("artist") or "",
            date=str(item.get("date") or ""),
            culture=item["culture"],
            is_qc=item.get("qc", False),
            elements=[{"name": e["name"], "is_symbol": e["is_symbol"]} for e in item["elements"]],
            translations=_artwork_translations(item),
            position=position,
        )
        content, extension = images[item["id"]]
        artwork.image.save(f"{study.slug}/{item['id']}.{extension}", ContentFile(content), save=False)
        written.append(artwork.image.name)
        try:
            artwork_image_variants_store(artwork=artwork, content=content, written=written)
        except ImageRefused as exc:
            # Raised inside the transaction: nothing of the study stays, and the caller removes the files.
            raise StudyImportError([f'artwork "{item["id"]}", image: “{item["image"]}”: {exc}']) from None
        artwork.save()
        for n, question in enumerate(item["questions"]):
            questions.append(
                Question(
                    artwork=artwork,
                    key=question["id"],
                    symbol=question.get("symbol") or "",
                    type=question["type"],
                    question=question["question"].strip(),
                    answer=question["answer"].strip(),
                    distractors=[d.strip() for d in question["distractors"]],
                    translations=_question_translations(question),
                    position=n,
                )
            )
        for description in item.get("descriptions") or []:
            descriptions.append(
                Description(
                    artwork=artwork,
                    key=description["id"],
                    speaker=description["speaker"],
                    listener=description["listener"],
                    model=description.get("model") or "",
                    text=description["text"].strip(),
                    self_eval_score=description.get("self_eval_score"),
                    sentences=split_sentences(description["text"]),
                )
            )
        for term in item.get("terms") or []:
            zh = (term.get("zh") or "").strip()
            terms.append(
                Term(
                    artwork=artwork,
                    term=term["term"].strip(),
                    zh=zh,
                    wikidata=term.get("wikidata") or "",
                    source=TermSource.PACKAGE,
                    # A term without its Chinese label still needs the Wikidata lookup.
                    status=TermStatus.CONFIRMED if zh else TermStatus.PENDING,
                )
            )
    Question.objects.bulk_create(questions)
    # Saved one by one: the pairs below need their primary keys on every database.
    for description in descriptions:
        description.save()
    slots = {(d.artwork_id, d.listener, d.speaker): d for d in descriptions}
    pairs = [
        DescriptionPair(
            artwork_id=artwork_id,
            listener=listener,
            base=description,
            pragmatic=slots[(artwork_id, listener, Speaker.PRAGMATIC)],
            matches=[],
            computed_at=None,
        )
        for (artwork_id, listener, speaker), description in slots.items()
        if speaker == Speaker.BASE
    ]
    DescriptionPair.objects.bulk_create(pairs)
    Term.objects.bulk_create(terms)
    return study


def _artwork_translations(item: dict) -> dict:
    translated = {}
    for field in ("title", "alt"):
        if (item.get(TRANSLATION) or {}).get(field, "").strip():
            translated[field] = item[TRANSLATION][field].strip()
    names = {
        element["name"]: element[TRANSLATION]["name"].strip()
        for element in item["elements"]
        if (element.get(TRANSLATION) or {}).get("name")
    }
    if names:
        translated["elements"] = names
    return {TRANSLATION: translated} if translated else {}


def _question_translations(question: dict) -> dict:
    source = question.get(TRANSLATION) or {}
    translated = {field: source[field].strip() for field in ("question", "answer") if source.get(field)}
    if source.get("distractors"):
        translated["distractors"] = [d.strip() for d in source["distractors"]]
    return {TRANSLATION: translated} if translated else {}


def _start_prepare(study: Study):
    prep.study_prepare_start(study=study)
