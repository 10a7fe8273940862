"""Validating a study package whole: every error is collected, named by artwork and field."""

import json
import math
import re

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.utils.translation import gettext as _

from artworks.models import DISTRACTORS
from core.packages import ImageUnusable, package_image_read

from ...models import CONSENT_LANGUAGES, TRANSLATION, Culture, Device, QuestionType, Speaker, Study

# Slugs that would shadow a fixed route under /studies/ or /api/study/.
RESERVED_SLUGS = {"import"}
# Artwork ids become file names and URL segments (study:image), so they stay plain.
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_QID = re.compile(r"^Q[1-9][0-9]*\Z")
MAX_SMALLINT = 32767
CONSENT_TEXT_MAX = 20000
# An image's text alternative: a sentence or two; longer descriptions belong in the page's text.
ALT_MAX = 1000


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_text(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _type_name(value) -> str:
    return "null" if value is None else type(value).__name__


class PackageChecker:
    """Collects every error of a package; ``image_data`` keeps the images it read for the write."""

    def __init__(self, data: dict, package):
        self.data = data
        self.package = package
        self.errors: list[str] = []
        self.image_data: dict[str, tuple[bytes, str]] = {}

    def error(self, where: str, message: str):
        self.errors.append(f"{where}: {message}")

    # Top-level fields.

    def check(self) -> list[str]:
        data = self.data
        self._check_slug(data.get("slug"))
        self._text("title", data.get("title"), 300)
        groups = self._check_groups(data.get("groups"))
        for field in ("artworks_per_participant", "qc_per_participant", "quota_per_group"):
            value = data.get(field)
            if not _is_int(value) or value < 1:
                self.error(field, _("expected a positive integer, got %(value)s") % {"value": json.dumps(value)})
            elif field != "quota_per_group" and value > MAX_SMALLINT:
                self.error(field, _("at most %(max)s") % {"max": MAX_SMALLINT})
        qc_threshold = data.get("qc_threshold")
        if not _is_number(qc_threshold) or not 0 <= qc_threshold <= 1:
            self.error(
                "qc_threshold", _("expected a number from 0 to 1, got %(value)s") % {"value": json.dumps(qc_threshold)}
            )
        similarity = data.get("similarity_threshold")
        if not _is_number(similarity) or not 0 < similarity <= 1:
            self.error(
                "similarity_threshold",
                _("expected a number above 0 and at most 1, got %(value)s") % {"value": json.dumps(similarity)},
            )
        codes = {}
        for field in ("completion_code", "screenout_code", "no_consent_code"):
            if self._text(field, data.get(field), 64):
                codes.setdefault(data[field].strip(), []).append(field)
        for fields in codes.values():
            if len(fields) > 1:
                self.error(", ".join(fields), _("the codes must differ, Prolific tells them apart by value"))
        self._check_consent(data)
        self._check_devices(data.get("devices", None), "devices" in data)
        self._check_translation("", data, {"title": 300})
        self._check_artworks(data.get("artworks"), groups)
        return self.errors

    def _check_consent(self, data: dict):
        """The optional consent page details: shown to participants, warned about on the checklist when missing."""
        consent = data.get("consent")
        if consent is not None:
            if not isinstance(consent, dict):
                self.error(
                    "consent",
                    _("expected an object of markdown texts by language (%(languages)s), got %(type)s")
                    % {"languages": ", ".join(CONSENT_LANGUAGES), "type": _type_name(consent)},
                )
            else:
                for language, text in consent.items():
                    if language not in CONSENT_LANGUAGES:
                        self.error(
                            f"consent.{language}",
                            _("unknown language (use %(languages)s)") % {"languages": ", ".join(CONSENT_LANGUAGES)},
                        )
                    elif not _is_text(text):
                        self.error(f"consent.{language}", _("expected markdown text"))
                    elif len(text) > CONSENT_TEXT_MAX:
                        self.error(
                            f"consent.{language}",
                            _("at most %(max)s characters, got %(n)s") % {"max": CONSENT_TEXT_MAX, "n": len(text)},
                        )
        minutes = data.get("estimated_minutes")
        if minutes is not None and (not _is_int(minutes) or not 1 <= minutes <= 1440):
            self.error(
                "estimated_minutes",
                _("expected a whole number of minutes from 1 to 1440, got %(value)s")
                % {"value": json.dumps(minutes, ensure_ascii=False)},
            )
        for field, max_length in (("reward", 200), ("contact", 500), ("ethics_reference", 300)):
            if data.get(field) is not None:
                self._text(field, data.get(field), max_length)

    def _check_translation(self, where: str, item: dict, fields: dict[str, int]) -> dict:
        """An item's optional ``"zh-hans": {...}``: only the named text fields, each optional."""
        translation = item.get(TRANSLATION)
        here = f"{where}.{TRANSLATION}" if where else TRANSLATION
        if translation is None:
            return {}
        if not isinstance(translation, dict):
            self.error(
                here,
                _("expected an object with %(fields)s, got %(type)s")
                % {"fields": ", ".join(fields), "type": _type_name(translation)},
            )
            return {}
        valid = {}
        for field, value in translation.items():
            if field not in fields:
                self.error(
                    f"{here}.{field}", _("cannot be translated (translate %(fields)s)") % {"fields": ", ".join(fields)}
                )
            elif self._text(f"{here}.{field}", value, fields[field]):
                valid[field] = value.strip()
        return valid

    def _text(self, where: str, value, max_length: int, *, required: bool = True) -> bool:
        if value is None and not required:
            return True
        if not isinstance(value, str):
            self.error(where, _("expected a string, got %(type)s") % {"type": _type_name(value)})
            return False
        if required and not value.strip():
            self.error(where, _("must not be empty"))
            return False
        if len(value) > max_length:
            self.error(where, _("at most %(max)s characters, got %(n)s") % {"max": max_length, "n": len(value)})
            return False
        return True

    def _check_slug(self, slug):
        if not self._text("slug", slug, 80):
            return
        try:
            validate_slug(slug)
        except ValidationError:
            self.error("slug", _("“%(slug)s” is not a valid slug (letters, digits, - and _ only)") % {"slug": slug})
            return
        if slug in RESERVED_SLUGS:
            self.error("slug", _("“%(slug)s” is reserved, choose another") % {"slug": slug})
        elif Study.objects.filter(slug=slug).exists():
            self.error("slug", _("a study “%(slug)s” already exists") % {"slug": slug})

    def _check_devices(self, devices, given: bool):
        """The optional ``devices``: Prolific's device_compatibility, a list from its own allowlist."""
        if not given:
            return
        allowed = ", ".join(Device.values)
        if not isinstance(devices, list) or not devices:
            self.error(
                "devices",
                _("expected a non-empty list of %(values)s, got %(value)s")
                % {"values": " / ".join(Device.values), "value": json.dumps(devices, ensure_ascii=False)},
            )
            return
        seen = set()
        for n, device in enumerate(devices):
            if device not in Device.values:
                self.error(
                    f"devices[{n}]",
                    _("unknown device %(value)s (use %(values)s)")
                    % {"value": json.dumps(device, ensure_ascii=False), "values": allowed},
                )
            elif device in seen:
                self.error(f"devices[{n}]", _("%(value)s is listed twice") % {"value": device})
            else:
                seen.add(device)

    def _check_groups(self, groups) -> list[str]:
        if not isinstance(groups, list) or not groups:
            self.error("groups", _("expected a non-empty list of %(values)s") % {"values": " / ".join(Culture.values)})
            return []
        valid = []
        for n, group in enumerate(groups):
            if group not in Culture.values:
                self.error(
                    f"groups[{n}]",
                    _("unknown group %(value)s (use %(values)s)")
                    % {"value": json.dumps(group, ensure_ascii=False), "values": ", ".join(Culture.values)},
                )
            elif group in valid:
                self.error(f"groups[{n}]", _("%(value)s is listed twice") % {"value": group})
            else:
                valid.append(group)
        return valid

    # Artworks.

    def _check_artworks(self, artworks, groups: list[str]):
        if not isinstance(artworks, list) or not artworks:
            self.error("artworks", _("expected a non-empty list of artworks"))
            return
        seen_artworks: set[str] = set()
        seen_questions: dict[str, str] = {}
        seen_descriptions: dict[str, str] = {}
        n_qc = n_regular = 0
        for n, artwork in enumerate(artworks):
            if not isinstance(artwork, dict):
                self.error(f"artworks[{n}]", _("expected an object, got %(type)s") % {"type": _type_name(artwork)})
                continue
            key = artwork.get("id")
            if _is_text(key) and _KEY.match(key) and len(key) <= 100:
                where = f'artwork "{key}"'
                if key in seen_artworks:
                    self.error(where, _("the id is used by another artwork"))
                seen_artworks.add(key)
            else:
                where = f"artworks[{n}]"
                self.error(
                    f"{where}.id",
                    _("expected a short id of letters, digits, -, _ or ., got %(value)s")
                    % {"value": json.dumps(key, ensure_ascii=False)},
                )
            is_qc = artwork.get("qc", False)
            if not isinstance(is_qc, bool):
                self.error(f"{where}, qc", _("expected true or false, got %(value)s") % {"value": json.dumps(is_qc)})
                is_qc = False
            n_qc += is_qc
            n_regular += not is_qc
            self._text(f"{where}, title", artwork.get("title"), 300)
            self._check_translation(where, artwork, {"title": 300, "alt": ALT_MAX})
            self._text(f"{where}, alt", artwork.get("alt"), ALT_MAX, required=False)
            self._text(f"{where}, artist", artwork.get("artist"), 300, required=False)
            if artwork.get("date") is not None and not isinstance(artwork.get("date"), (str, int)):
                self.error(
                    f"{where}, date", _("expected a string, got %(type)s") % {"type": _type_name(artwork["date"])}
                )
            elif len(str(artwork.get("date") or "")) > 100:
                self.error(f"{where}, date", _("at most %(max)s characters") % {"max": 100})
            culture = artwork.get("culture")
            if culture not in groups:
                self.error(
                    f"{where}, culture",
                    _("expected one of the study's groups (%(groups)s), got %(value)s")
                    % {"groups": ", ".join(groups) or "—", "value": json.dumps(culture, ensure_ascii=False)},
                )
            self._check_image(where, artwork.get("image"), key)
            symbols = self._check_elements(where, artwork.get("elements"))
            self._check_questions(where, artwork.get("questions"), symbols, seen_questions)
            self._check_descriptions(where, artwork.get("descriptions", []), groups, is_qc, seen_descriptions)
            self._check_terms(where, artwork.get("terms", []))
        qc_per = self.data.get("qc_per_participant")
        per_participant = self.data.get("artworks_per_participant")
        if _is_int(qc_per) and _is_int(per_participant):
            if qc_per >= per_participant:
                self.error(
                    "qc_per_participant",
                    _("must be smaller than artworks_per_participant (%(n)s)") % {"n": per_participant},
                )
            if n_qc < qc_per:
                self.error(
                    "artworks",
                    _("qc_per_participant is %(need)s but the package has %(n)s QC artworks")
                    % {"need": qc_per, "n": n_qc},
                )
            if n_regular < per_participant - qc_per:
                self.error(
                    "artworks",
                    _("each participant sees %(need)s artworks that are not QC but the package has %(n)s")
                    % {"need": per_participant - qc_per, "n": n_regular},
                )

    def _check_image(self, where: str, image, key):
        where = f"{where}, image"
        if not _is_text(image):
            self.error(where, _("expected the path of an image inside the package"))
            return
        try:
            content, extension = package_image_read(self.package, image)
        except ImageUnusable as exc:
            self.error(where, str(exc))
            return
        if _is_text(key):
            self.image_data[key] = (content, extension)

    def _check_elements(self, where: str, elements) -> set[str]:
        if not isinstance(elements, list) or not elements:
            self.error(f"{where}, elements", _("expected a non-empty list of {name, is_symbol}"))
            return set()
        names: set[str] = set()
        symbols: set[str] = set()
        for n, element in enumerate(elements):
            here = f"{where}, elements[{n}]"
            if not isinstance(element, dict):
                self.error(here, _("expected an object {name, is_symbol}"))
                continue
            name = element.get("name")
            if not self._text(f"{here}.name", name, 200):
                continue
            if name in names:
                self.error(f"{here}.name", _("“%(name)s” is listed twice") % {"name": name})
            names.add(name)
            self._check_translation(here, element, {"name": 200})
            if not isinstance(element.get("is_symbol"), bool):
                self.error(f"{here}.is_symbol", _("expected true or false"))
            elif element["is_symbol"]:
                symbols.add(name)
        return symbols

    def _check_questions(self, where: str, questions, symbols: set[str], seen: dict[str, str]):
        if not isinstance(questions, list) or not questions:
            self.error(f"{where}, questions", _("expected a non-empty list of questions"))
            return
        for n, question in enumerate(questions):
            here = f"{where}, questions[{n}]"
            if not isinstance(question, dict):
                self.error(here, _("expected an object"))
                continue
            key = question.get("id")
            if self._text(f"{here}.id", key, 100):
                if key in seen:
                    self.error(f"{here}.id", _("“%(id)s” is also used in %(other)s") % {"id": key, "other": seen[key]})
                else:
                    seen[key] = where
            if question.get("type") not in QuestionType.values:
                self.error(
                    f"{here}.type",
                    _("expected attuned or agnostic, got %(value)s")
                    % {"value": json.dumps(question.get("type"), ensure_ascii=False)},
                )
            self._text(f"{here}.question", question.get("question"), 5000)
            answer = question.get("answer")
            self._text(f"{here}.answer", answer, 1000)
            distractors = question.get("distractors")
            if not isinstance(distractors, list):
                self.error(
                    f"{here}.distractors",
                    _("expected %(n)s distinct strings, got %(type)s")
                    % {"n": DISTRACTORS, "type": _type_name(distractors)},
                )
            else:
                texts = [d.strip() for d in distractors if _is_text(d)]
                distinct = set(texts)
                if len(texts) != len(distractors) or len(distinct) != DISTRACTORS or len(distractors) != DISTRACTORS:
                    self.error(
                        f"{here}.distractors",
                        _("expected %(n)s distinct strings, got %(got)s") % {"n": DISTRACTORS, "got": len(distinct)},
                    )
                if isinstance(answer, str) and answer.strip() in distinct:
                    self.error(f"{here}.distractors", _("a distractor equals the answer"))
            self._check_question_translation(here, question)
            symbol = question.get("symbol", "")
            if symbol is None:
                symbol = ""
            if not isinstance(symbol, str):
                self.error(f"{here}.symbol", _("expected a string"))
            elif symbol and symbol not in symbols:
                self.error(
                    f"{here}.symbol",
                    _("“%(symbol)s” is not one of the artwork's elements marked is_symbol") % {"symbol": symbol},
                )

    def _check_question_translation(self, here: str, question: dict):
        translated = question.get(TRANSLATION)
        if isinstance(translated, dict) and "distractors" in translated:
            # Lists are checked here, not by _check_translation, which takes text fields only.
            distractors = translated["distractors"]
            rest = {k: v for k, v in translated.items() if k != "distractors"}
            self._check_translation(here, {TRANSLATION: rest}, {"question": 5000, "answer": 1000})
            where = f"{here}.{TRANSLATION}.distractors"
            texts = [d.strip() for d in distractors if _is_text(d)] if isinstance(distractors, list) else []
            if not isinstance(distractors, list) or len(texts) != len(distractors) or len(set(texts)) != DISTRACTORS:
                self.error(
                    where, _("expected %(n)s distinct strings in the order of the English ones") % {"n": DISTRACTORS}
                )
            elif isinstance(translated.get("answer"), str) and translated["answer"].strip() in texts:
                self.error(where, _("a distractor equals the answer"))
            elif any(len(text) > 1000 for text in texts):
                self.error(where, _("at most %(max)s characters") % {"max": 1000})
        else:
            self._check_translation(here, question, {"question": 5000, "answer": 1000})
        if isinstance(translated, dict) and ("answer" in translated) != ("distractors" in translated):
            # A half-translated option list would mix languages among the choices.
            self.error(f"{here}.{TRANSLATION}", _("translate the answer and the distractors together"))

    def _check_descriptions(self, where: str, descriptions, groups, is_qc: bool, seen: dict[str, str]):
        if not isinstance(descriptions, list):
            self.error(f"{where}, descriptions", _("expected a list"))
            return
        slots: dict[tuple[str, str], int] = {}
        for n, description in enumerate(descriptions):
            here = f"{where}, descriptions[{n}]"
            if not isinstance(description, dict):
                self.error(here, _("expected an object"))
                continue
            key = description.get("id")
            if self._text(f"{here}.id", key, 100):
                if key in seen:
                    self.error(f"{here}.id", _("“%(id)s” is also used in %(other)s") % {"id": key, "other": seen[key]})
                else:
                    seen[key] = where
            speaker = description.get("speaker")
            if speaker not in Speaker.values:
                self.error(
                    f"{here}.speaker",
                    _("expected base or pragmatic, got %(value)s") % {"value": json.dumps(speaker, ensure_ascii=False)},
                )
            listener = description.get("listener")
            if listener not in groups:
                self.error(
                    f"{here}.listener",
                    _("expected one of the study's groups (%(groups)s), got %(value)s")
                    % {"groups": ", ".join(groups) or "—", "value": json.dumps(listener, ensure_ascii=False)},
                )
            self._text(f"{here}.model", description.get("model"), 200, required=False)
            self._text(f"{here}.text", description.get("text"), 20000)
            score = description.get("self_eval_score")
            if score is not None and not _is_number(score):
                self.error(
                    f"{here}.self_eval_score",
                    _("expected a number or null, got %(value)s") % {"value": json.dumps(score, ensure_ascii=False)},
                )
            if speaker in Speaker.values and listener in groups:
                slots[(listener, speaker)] = slots.get((listener, speaker), 0) + 1
        if is_qc and not descriptions:
            return
        for listener in groups:
            for speaker in Speaker.values:
                count = slots.get((listener, speaker), 0)
                if count != 1:
                    self.error(
                        f"{where}, descriptions",
                        _("expected exactly one %(speaker)s description for the %(listener)s group, got %(n)s")
                        % {"speaker": speaker, "listener": listener, "n": count},
                    )

    def _check_terms(self, where: str, terms):
        if terms is None:
            return
        if not isinstance(terms, list):
            self.error(f"{where}, terms", _("expected a list of {term, zh, wikidata}"))
            return
        seen: set[str] = set()
        for n, term in enumerate(terms):
            here = f"{where}, terms[{n}]"
            if not isinstance(term, dict):
                self.error(here, _("expected an object {term, zh, wikidata}"))
                continue
            if self._text(f"{here}.term", term.get("term"), 200):
                if term["term"].strip().lower() in seen:
                    self.error(f"{here}.term", _("“%(term)s” is listed twice") % {"term": term["term"]})
                seen.add(term["term"].strip().lower())
            self._text(f"{here}.zh", term.get("zh") or "", 200, required=False)
            qid = term.get("wikidata") or ""
            if not isinstance(qid, str) or (qid and not _QID.match(qid)):
                self.error(
                    f"{here}.wikidata",
                    _("expected a Wikidata id like Q1234 or an empty string, got %(value)s")
                    % {"value": json.dumps(qid, ensure_ascii=False)},
                )
