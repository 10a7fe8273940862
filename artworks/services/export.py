"""Export an artwork pipeline run as a study package (study.json plus images).

The package is the only interface between the pipeline and the study app: evaluation never
imports study, so the format the study importer validates is written out here by hand (see
README, "Package, import, launch"). Artworks the package could not carry (a group without its
base or chosen pragmatic description, no questions, a malformed question) are left out and
listed as warnings on the returned path.
"""

import io
import json
import logging
import math
import secrets
import shutil
import string
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from core.packages import IMAGE_EXTENSIONS

from ..models import (
    DISTRACTORS,
    QC_THRESHOLD_DEFAULT,
    ArtworkPipelineRun,
    ArtworkQuestionType,
    SpeakerCandidate,
    SpeakerKind,
)

logger = logging.getLogger(__name__)

PACKAGE_FILE = "study.json"
# The study app's participant groups (study.models.Culture), repeated because artworks may not import study.
STUDY_GROUPS = ("american", "chinese")
MAX_ARTWORKS_PER_PARTICIPANT = 12
QC_PER_PARTICIPANT = 2
QUOTA_PER_GROUP = 10
SIMILARITY_THRESHOLD = 0.8
SLUG_MAX = 80
# Instructed-response checks (Prolific allows them): the answer is written in the question.
QC_ITEMS = (
    ("Blue", ["Red", "Green", "Yellow", "Purple", "Orange"]),
    ("Seven", ["Two", "Three", "Four", "Five", "Nine"]),
)


class ArtworkExportError(ValidationError):
    """The run cannot become a study package; nothing was written."""


class ExportedPackage(type(Path())):
    """The written package's path, carrying the artworks left out as ``warnings``."""

    warnings: list[str] = []


def _code(taken: set[str]) -> str:
    alphabet = string.ascii_uppercase + string.digits
    while True:
        code = "".join(secrets.choice(alphabet) for _ in range(10))
        if code not in taken:
            taken.add(code)
            return code


def package_slug(run: ArtworkPipelineRun) -> str:
    suffix = f"-run-{run.pk}"
    base = slugify(run.collection.name)[: SLUG_MAX - len(suffix)].strip("-_") or "artworks"
    return f"{base}{suffix}"


def _qc_image(label: str) -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (480, 320), (250, 240, 200))
    draw = ImageDraw.Draw(image)
    draw.rectangle((8, 8, 471, 311), outline=(180, 40, 40), width=6)
    draw.text((150, 140), "ATTENTION CHECK", fill=(120, 20, 20))
    draw.text((150, 170), label, fill=(60, 60, 60))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _score(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _question_problem(question, symbols: set[str]) -> str | None:
    distractors = question.distractors if isinstance(question.distractors, list) else []
    texts = [d.strip() for d in distractors if isinstance(d, str) and d.strip()]
    if not question.question.strip() or not question.answer.strip():
        return _("question %(key)s has an empty question or answer") % {"key": question.key}
    if len(texts) != len(distractors) or len(set(texts)) != DISTRACTORS or len(distractors) != DISTRACTORS:
        return _("question %(key)s needs %(n)s distinct distractors") % {"key": question.key, "n": DISTRACTORS}
    if question.answer.strip() in texts:
        return _("a distractor of question %(key)s equals the answer") % {"key": question.key}
    if question.symbol and question.symbol not in symbols:
        return _("question %(key)s names the symbol “%(symbol)s”, which is not an element marked as a symbol") % {
            "key": question.key,
            "symbol": question.symbol,
        }
    return None


def _descriptions(run, artwork, candidates: dict) -> tuple[list[dict], str | None]:
    descriptions = []
    for group in run.groups:
        base = candidates.get((artwork.pk, group, SpeakerKind.BASE))
        pragmatic = candidates.get((artwork.pk, group, SpeakerKind.PRAGMATIC))
        if base is None or not base.text.strip():
            return [], _("no base description for the %(group)s group") % {"group": group}
        if pragmatic is None or not pragmatic.text.strip():
            return [], _("no chosen pragmatic description for the %(group)s group") % {"group": group}
        for speaker, candidate in ((SpeakerKind.BASE, base), (SpeakerKind.PRAGMATIC, pragmatic)):
            descriptions.append(
                {
                    "id": f"{artwork.key}-{group}-{speaker}",
                    "speaker": str(speaker),
                    "listener": group,
                    "model": run.speaker.name,
                    "text": candidate.text.strip(),
                    "self_eval_score": _score(candidate.listener_score),
                }
            )
    return descriptions, None


def _candidates(run) -> dict:
    """(artwork, group, speaker) -> the base description (the chosen one if marked) and the chosen pragmatic one."""
    found = {}
    rows = SpeakerCandidate.objects.filter(run=run).order_by("artwork_id", "group", "speaker", "-chosen", "index")
    for candidate in rows:
        key = (candidate.artwork_id, candidate.group, candidate.speaker)
        if key in found:
            continue
        if candidate.speaker == SpeakerKind.PRAGMATIC and not candidate.chosen:
            continue
        found[key] = candidate
    return found


def study_package_data(*, run: ArtworkPipelineRun) -> tuple[dict, dict[str, bytes], list[str]]:
    """study.json as a dict, the image files by package path, and the warnings."""
    groups = list(run.groups or [])
    unknown = [g for g in groups if g not in STUDY_GROUPS]
    if not groups or unknown or len(set(groups)) != len(groups):
        raise ArtworkExportError(
            _("the study app takes the listener groups %(known)s; this run has %(groups)s")
            % {"known": ", ".join(STUDY_GROUPS), "groups": ", ".join(groups) or "none"}
        )
    artworks = list(run.collection.artworks.order_by("position", "pk").prefetch_related("elements", "questions"))
    if run.limit:
        artworks = artworks[: run.limit]
    candidates = _candidates(run)
    warnings: list[str] = []
    entries: list[dict] = []
    images: dict[str, bytes] = {}
    for artwork in artworks:
        problem = None
        elements = [{"name": e.name, "is_symbol": e.is_symbol} for e in artwork.elements.all()]
        symbols = {e["name"] for e in elements if e["is_symbol"]}
        questions = sorted(
            artwork.questions.all(), key=lambda q: (q.type != ArtworkQuestionType.ATTUNED, q.position, q.pk)
        )
        suffix = PurePosixPath(artwork.image.name or "").suffix.lower()
        if artwork.culture not in groups:
            problem = _("its culture “%(culture)s” is not one of the run's groups") % {"culture": artwork.culture}
        elif not elements:
            problem = _("it has no elements")
        elif not questions:
            problem = _("it has no questions")
        elif suffix not in IMAGE_EXTENSIONS:
            problem = _("its image is not a PNG, JPEG, WebP, GIF or SVG file")
        else:
            problem = next(filter(None, (_question_problem(q, symbols) for q in questions)), None)
        descriptions = []
        if problem is None:
            descriptions, problem = _descriptions(run, artwork, candidates)
        image = None
        if problem is None:
            try:
                with artwork.image.open("rb") as handle:
                    image = handle.read()
            except (OSError, ValueError):
                problem = _("its image file cannot be read")
        if problem is not None:
            warnings.append(_("artwork %(key)s left out: %(problem)s") % {"key": artwork.key, "problem": problem})
            continue
        path = f"images/{artwork.key}{'.jpg' if suffix == '.jpeg' else suffix}"
        images[path] = image
        entries.append(
            {
                "id": artwork.key,
                "title": artwork.title,
                "artist": artwork.artist,
                "date": artwork.date,
                "culture": artwork.culture,
                "image": path,
                "qc": False,
                "elements": elements,
                "questions": [
                    {
                        "id": question.key,
                        "symbol": question.symbol,
                        "type": question.type,
                        "question": question.question.strip(),
                        "answer": question.answer.strip(),
                        "distractors": [d.strip() for d in question.distractors],
                        "_artwork": artwork.key,
                    }
                    for question in questions
                ],
                "descriptions": descriptions,
            }
        )
    if not entries:
        raise ArtworkExportError(
            _("no artwork of run #%(id)s can go into a study package: %(reasons)s")
            % {"id": run.pk, "reasons": "; ".join(warnings) or _("the collection is empty")}
        )
    _unique_question_ids(entries)
    keys = {entry["id"] for entry in entries}
    for n, (answer, distractors) in enumerate(QC_ITEMS, start=1):
        key = f"qc-{n}"
        while key in keys:
            key = f"{key}x"
        keys.add(key)
        path = f"images/{key}.png"
        images[path] = _qc_image(f"{n}")
        entries.append(
            {
                "id": key,
                "title": f"Attention check {n}",
                "artist": "",
                "date": "",
                "culture": groups[(n - 1) % len(groups)],
                "image": path,
                "qc": True,
                "elements": [{"name": "attention check sign", "is_symbol": False}],
                "questions": [
                    {
                        "id": f"{key}-q1",
                        "symbol": "",
                        "type": ArtworkQuestionType.AGNOSTIC.value,
                        "question": f"To show you are reading, choose '{answer}'.",
                        "answer": answer,
                        "distractors": list(distractors),
                    }
                ],
                "descriptions": [],
            }
        )
    codes: set[str] = set()
    n_regular = len(entries) - len(QC_ITEMS)
    data = {
        "slug": package_slug(run),
        "title": _("%(collection)s (pipeline run #%(id)s)") % {"collection": run.collection.name, "id": run.pk},
        "groups": groups,
        "artworks_per_participant": min(MAX_ARTWORKS_PER_PARTICIPANT, n_regular + QC_PER_PARTICIPANT),
        "qc_per_participant": QC_PER_PARTICIPANT,
        "qc_threshold": QC_THRESHOLD_DEFAULT,
        "quota_per_group": QUOTA_PER_GROUP,
        "completion_code": _code(codes),
        "screenout_code": _code(codes),
        "no_consent_code": _code(codes),
        "similarity_threshold": SIMILARITY_THRESHOLD,
        "artworks": entries,
    }
    return data, images, warnings


def _unique_question_ids(entries: list[dict]) -> None:
    """Question ids must be unique in the whole package, but the collection keeps them per artwork:
    when two artworks share one, every id is prefixed with its artwork's key."""
    questions = [q for entry in entries for q in entry["questions"]]
    ids = [q["id"] for q in questions]
    clash = len(set(ids)) != len(ids)
    for question in questions:
        artwork = question.pop("_artwork")
        if clash:
            question["id"] = f"{artwork}-{question['id']}"[:100]


def _default_out(slug: str) -> Path:
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    return Path(settings.VAR_DIR) / "exports" / f"{slug}-{stamp}"


def artwork_study_package(*, run: ArtworkPipelineRun, out: Path | None = None) -> Path:
    """Write the run's study package to ``out``: a folder, or a .zip when the name ends with .zip.

    Returns the path written (an ``ExportedPackage`` whose ``warnings`` lists the artworks left
    out). An existing .zip is replaced; an existing folder must be empty.
    """
    data, images, warnings = study_package_data(run=run)
    out = Path(out) if out is not None else _default_out(data["slug"])
    body = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    if out.suffix.lower() == ".zip":
        out.parent.mkdir(parents=True, exist_ok=True)
        # Written beside the target and renamed, so a failure never leaves half an archive under its name.
        with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".zip.part", delete=False) as handle:
            temporary = Path(handle.name)
        try:
            with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                archive.writestr(PACKAGE_FILE, body)
                for path, content in images.items():
                    archive.writestr(path, content)
            temporary.replace(out)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    else:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise ArtworkExportError(_("%(path)s exists and is not an empty folder") % {"path": out})
        out.mkdir(parents=True, exist_ok=True)
        try:
            (out / "images").mkdir(exist_ok=True)
            for path, content in images.items():
                (out / path).write_bytes(content)
            (out / PACKAGE_FILE).write_text(body, encoding="utf-8")
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
    for warning in warnings:
        logger.warning("study package of pipeline run %s: %s", run.pk, warning)
    result = ExportedPackage(out)
    result.warnings = warnings
    return result
