"""Preparing a study before launch: similar-sentence pairs, culture-specific terms and their glosses.

Both are computed in a Celery task, never during a participant's request (the issue's rule),
and only while the study is a draft or paused, so the stimuli participants see never change
under a running session. Terms come from the package, from a language model asked with the
paper's culture-specific item prompt (A.1), or from the researcher; each is glossed from
Wikidata and then confirmed, edited or rejected by the researcher.
"""

import json
import logging
import re

from celery.exceptions import SoftTimeLimitExceeded
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from llm.models import ModelConfig

from ..highlights import embedding_model_name, sentence_matches
from ..models import (
    Artwork,
    Culture,
    DescriptionPair,
    PrepStatus,
    Study,
    Term,
    TermSource,
    TermStatus,
)
from ..rules import STIMULI_EDITABLE, study_stimuli_editable
from ..text import split_sentences, term_find, terms_same
from ..wikidata import wikidata_label

logger = logging.getLogger(__name__)

# Pragmatics Meets Culture, Appendix A.1, "Culture-specific Item Identification", verbatim. The
# paper's text lost its line breaks and the closing asterisks of the last two bold labels in
# extraction; they are restored here as the markdown the labels clearly are.
TERM_PROMPT = (
    "**Task:** From the Chinese artwork description below, identify words that are only culturally specific "
    "to Chinese whose translation into Chinese would help non-Chinese audiences better understand the artwork.\n\n"
    "**Description:** {description}\n\n"
    "**List of culturally specific word:**"
)
TERM_MAX_TOKENS = 256
QID = re.compile(r"^Q[1-9][0-9]*$")
# A leading bullet, number ("1.", "2)", "(3)") or markdown emphasis of a list line.
_BULLET = re.compile(r"^\s*(?:[-*•·+]|\(?\d+[.)]|\d+\s*[-:])\s*")
# What a model adds after a term: "peony - symbol of wealth", "peony: wealth", "peony (牡丹)".
# "crane's", "cranes'" as found in a text: a term is stored without its possessive.
_TRAILING_POSSESSIVE = re.compile(r"['\u2019]s?$")
_GLOSS = re.compile(r"\s+[-–—]\s+.*$|\s*[:：]\s+.*$|\s*[(（].*$")


class PrepError(ValidationError):
    """A preparation or term change that the study's state does not allow, or invalid input."""


# -- starting ---------------------------------------------------------------


def _require_editable(study: Study) -> None:
    if not study_stimuli_editable(study):
        raise PrepError(
            _("the study is %(status)s: its stimuli can change only while it is a draft or paused")
            % {"status": study.get_status_display().lower()}
        )


def study_prepare_start(*, study: Study, term_model=None, force: bool = False) -> Study:
    """Queue the preparation task (sentence pairs, then terms).

    Both statuses go to running in one guarded UPDATE, so a double click or a second
    researcher queues one task, not two. ``force`` takes over a preparation that stays
    running because its task was lost (the broker dropped it, say).
    """
    study.refresh_from_db()
    _require_editable(study)
    candidates = Study.objects.filter(pk=study.pk, status__in=STIMULI_EDITABLE)
    if not force:
        candidates = candidates.exclude(highlight_status=PrepStatus.RUNNING).exclude(terms_status=PrepStatus.RUNNING)
    with transaction.atomic():
        claimed = candidates.update(
            highlight_status=PrepStatus.RUNNING, terms_status=PrepStatus.RUNNING, highlight_error="", terms_error=""
        )
        if not claimed:
            study.refresh_from_db()
            raise PrepError(_("the preparation of this study is already running"))
        model_id = term_model.pk if term_model is not None else None
        transaction.on_commit(lambda: _enqueue(study.pk, model_id))
    study.refresh_from_db()
    return study


def _enqueue(study_id: int, term_model_id: int | None) -> None:
    from ..tasks import study_prepare_task

    study_prepare_task.delay(study_id, term_model_id)


def study_threshold_set(*, study: Study, threshold: float) -> Study:
    """A new similarity threshold, and the sentence pairs computed again with it."""
    _require_editable(study)
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise PrepError({"threshold": _("enter a number between 0 and 1")}) from None
    if not 0.0 < threshold <= 1.0:
        raise PrepError({"threshold": _("the threshold is a cosine similarity between 0 and 1")})
    with transaction.atomic():
        Study.objects.filter(pk=study.pk).update(similarity_threshold=threshold)
        study.similarity_threshold = threshold
        return study_prepare_start(study=study)


# -- the work (in the task) -------------------------------------------------


def study_prepare_queued(*, study_id: int, term_model_id: int | None = None) -> None:
    """The task's work: prepare the study with the model chosen, whatever was deleted while it queued."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return  # deleted while queued
    term_model = None
    if term_model_id is not None:
        term_model = ModelConfig.objects.filter(pk=term_model_id).first()
        if term_model is None:
            # The terms must not end "ready" without the search the researcher asked for.
            study_highlights_compute(study=study)
            Study.objects.filter(pk=study_id).update(
                terms_status=PrepStatus.FAILED, terms_error=_("the model chosen to find terms no longer exists")
            )
            return
    study_prepare(study=study, term_model=term_model)


def study_prepare(*, study: Study, term_model=None) -> Study:
    """Compute the sentence pairs, then find and gloss the terms; each records its own outcome.

    When the task's time runs out, whatever had not finished is marked failed with a message
    that says how to go on, and the time limit goes on up to Celery (never swallowed).
    """
    try:
        study_highlights_compute(study=study)
        study_terms_prepare(study=study, term_model=term_model)
    except SoftTimeLimitExceeded:
        message = _out_of_time_message()
        Study.objects.filter(pk=study.pk, highlight_status=PrepStatus.RUNNING).update(
            highlight_status=PrepStatus.FAILED, highlight_error=message
        )
        Study.objects.filter(pk=study.pk, terms_status=PrepStatus.RUNNING).update(
            terms_status=PrepStatus.FAILED, terms_error=message
        )
        raise
    study.refresh_from_db()
    return study


def _out_of_time_message() -> str:
    # Work already done is kept (terms looked up, model replies cached): a new run continues.
    return _("the preparation ran out of time; run it again to continue where it stopped")


def study_highlights_compute(*, study: Study) -> None:
    """Every pair's mutual best-matching sentences at or above the study's threshold."""
    Study.objects.filter(pk=study.pk).update(highlight_status=PrepStatus.RUNNING, highlight_error="")
    study.refresh_from_db()
    try:
        name = embedding_model_name()
        pairs = list(DescriptionPair.objects.filter(artwork__study=study).select_related("base", "pragmatic"))
        for pair in pairs:
            pair.matches = sentence_matches(
                pair.base.sentences or split_sentences(pair.base.text),
                pair.pragmatic.sentences or split_sentences(pair.pragmatic.text),
                study.similarity_threshold,
            )
            pair.model_name = name
            pair.computed_at = timezone.now()
        DescriptionPair.objects.bulk_update(pairs, ["matches", "model_name", "computed_at"])
    except SoftTimeLimitExceeded:
        raise  # study_prepare records it
    except Exception as exc:  # the task must record any failure on the page, not just in a log
        logger.exception("sentence pairs of study %s failed", study.pk)
        Study.objects.filter(pk=study.pk).update(highlight_status=PrepStatus.FAILED, highlight_error=_failure(exc))
        return
    Study.objects.filter(pk=study.pk).update(
        highlight_status=PrepStatus.READY, highlight_model=name, highlight_error=""
    )


def study_terms_prepare(*, study: Study, term_model=None) -> None:
    """Find terms with ``term_model`` where the package gave none, then look every unglossed term up."""
    Study.objects.filter(pk=study.pk).update(terms_status=PrepStatus.RUNNING, terms_error="")
    try:
        if term_model is not None:
            for artwork in _artworks_needing_terms(study):
                terms_find(artwork=artwork, model=term_model)
        terms_lookup(study=study)
    except SoftTimeLimitExceeded:
        raise  # study_prepare records it
    except Exception as exc:  # as above: Wikidata or the model refusing ends on the page
        logger.exception("terms of study %s failed", study.pk)
        Study.objects.filter(pk=study.pk).update(terms_status=PrepStatus.FAILED, terms_error=_failure(exc))
        return
    Study.objects.filter(pk=study.pk).update(terms_status=PrepStatus.READY, terms_error="")


def _failure(exc: Exception) -> str:
    return (str(exc) or type(exc).__name__)[:2000]


def _artworks_needing_terms(study: Study):
    with_package_terms = Term.objects.filter(artwork__study=study, source=TermSource.PACKAGE).values("artwork_id")
    return (
        Artwork.objects.filter(study=study, culture=Culture.CHINESE)
        .exclude(pk__in=with_package_terms)
        .prefetch_related("descriptions")
        .order_by("position")
    )


def term_prompt(description: str) -> list[dict]:
    # replace and not format: a description may contain braces.
    return [{"role": "user", "content": TERM_PROMPT.replace("{description}", description)}]


def parse_term_list(reply: str) -> list[str]:
    """The terms of a model's list: a JSON list, one per line, or separated by commas."""
    text = reply.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.DOTALL)
    if fenced:
        text = fenced.group(1)
    candidates: list[str] = []
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, list):
        candidates = [str(item) for item in data if isinstance(item, str | int | float)]
    else:
        for line in text.splitlines():
            candidates.extend(re.split(r"[,;、，；]", line))
    terms, seen = [], set()
    for candidate in candidates:
        term = _BULLET.sub("", candidate.strip())
        term = term.replace("**", "").replace("__", "").strip()
        term = _GLOSS.sub("", term).strip(" \t\"'“”‘’`*.。")
        if term and term.lower() not in seen:
            seen.add(term.lower())
            terms.append(term)
    return terms


def term_occurrence(term: str, text: str) -> str | None:
    """The term as written in ``text`` (any case, number, possessive or hyphenation), on word
    boundaries; None when it is not there."""
    return term_find(term, text)


def _stored_form(term: str, found: str) -> str:
    """What to store for a term found in a text: the text's spelling when it differs only in case or
    hyphenation ("Crane" found as "crane"), else the term as given, so "mandarin duck" stays the singular the
    researcher or the model named even where the text says "mandarin ducks"."""
    term = " ".join(term.split())
    bare = _TRAILING_POSSESSIVE.sub("", found)
    return bare if _spelling(bare) == _spelling(term) else term


def _spelling(term: str) -> str:
    return " ".join(re.split(r"[\s\-\u2010\u2011]+", term.strip())).lower()


def terms_find(*, artwork: Artwork, model) -> list[Term]:
    """Ask ``model`` for the culture-specific terms of each description (base and pragmatic)
    of the artwork, and keep those that occur in it; a term already listed is not added again."""
    from llm.services.complete import model_complete

    existing = list(Term.objects.filter(artwork=artwork).values_list("term", flat=True))
    created = []
    for description in artwork.descriptions.all():
        reply = model_complete(model=model, messages=term_prompt(description.text), max_tokens=TERM_MAX_TOKENS)
        for candidate in parse_term_list(reply):
            found = term_occurrence(candidate, description.text)
            if not found:
                continue
            term = _stored_form(candidate, found)
            if (
                any(terms_same(term, other) for other in existing)
                or len(term) > Term._meta.get_field("term").max_length
            ):
                continue
            existing.append(term)
            try:
                with transaction.atomic():
                    created.append(
                        Term.objects.create(
                            artwork=artwork, term=term, source=TermSource.LLM, status=TermStatus.PENDING
                        )
                    )
            except IntegrityError:
                pass  # the same term in another case, stored by a concurrent run
    return created


def terms_lookup(*, study: Study) -> int:
    """Gloss every pending term without a Chinese label from Wikidata; the number looked up."""
    pending = Term.objects.filter(artwork__study=study, status=TermStatus.PENDING, zh="").order_by("pk")
    done = 0
    for term in pending:
        result = wikidata_label(term.term)
        status = TermStatus.FOUND if result.found else TermStatus.NOT_FOUND
        # Guarded: a researcher who edited the term meanwhile keeps their edit.
        done += Term.objects.filter(pk=term.pk, status=TermStatus.PENDING, zh="").update(
            zh=result.zh, wikidata=result.qid, status=status
        )
    return done


# -- the researcher's review --------------------------------------------------


def _term_study(term: Term) -> Study:
    study = Study.objects.get(pk=term.artwork.study_id)
    _require_editable(study)
    return study


def _clean_qid(wikidata: str) -> str:
    wikidata = (wikidata or "").strip().upper()
    if wikidata and not QID.match(wikidata):
        raise PrepError({"wikidata": _("a Wikidata item id looks like Q1234")})
    return wikidata


def term_confirm(*, term: Term, user, zh: str | None = None, wikidata: str | None = None) -> Term:
    """Accept the term with its Chinese label, edited when ``zh`` is given."""
    _term_study(term)
    if zh is not None:
        term.zh = " ".join(zh.split())
    if wikidata is not None:
        term.wikidata = _clean_qid(wikidata)
    if not term.zh:
        raise PrepError({"zh": _("enter the Chinese label of “%(term)s” before confirming it") % {"term": term.term}})
    if len(term.zh) > Term._meta.get_field("zh").max_length:
        raise PrepError({"zh": _("the Chinese label is too long")})
    term.status = TermStatus.CONFIRMED
    term.confirmed_by = user
    term.save(update_fields=["zh", "wikidata", "status", "confirmed_by", "updated_at"])
    return term


def term_edit(*, term: Term, user, zh: str, wikidata: str | None = None) -> Term:
    """Correct the Chinese label (and item) without deciding yet; a confirmed term stays confirmed
    under the editor's name, and an unglossed one that gets a label awaits confirmation."""
    _term_study(term)
    term.zh = " ".join((zh or "").split())
    if wikidata is not None:
        term.wikidata = _clean_qid(wikidata)
    if len(term.zh) > Term._meta.get_field("zh").max_length:
        raise PrepError({"zh": _("the Chinese label is too long")})
    if term.status == TermStatus.CONFIRMED:
        if not term.zh:
            raise PrepError({"zh": _("a confirmed term needs its Chinese label; reject the term instead")})
        term.confirmed_by = user
    elif term.zh and term.status in (TermStatus.PENDING, TermStatus.NOT_FOUND):
        term.status = TermStatus.FOUND
    elif not term.zh and term.status == TermStatus.FOUND:
        term.status = TermStatus.NOT_FOUND
    term.save(update_fields=["zh", "wikidata", "status", "confirmed_by", "updated_at"])
    return term


def term_reject(*, term: Term, user) -> Term:
    """Leave the term without a gloss for participants."""
    _term_study(term)
    term.status = TermStatus.REJECTED
    term.confirmed_by = user
    term.save(update_fields=["status", "confirmed_by", "updated_at"])
    return term


def term_add(*, artwork: Artwork, term: str, zh: str, user, wikidata: str = "") -> Term:
    """A term the researcher adds, confirmed at once; it must occur in one of the artwork's descriptions."""
    study = Study.objects.get(pk=artwork.study_id)
    _require_editable(study)
    term = " ".join((term or "").split())
    zh = " ".join((zh or "").split())
    errors = {}
    if not term:
        errors["term"] = _("enter the English term")
    if not zh:
        errors["zh"] = _("enter its Chinese label")
    if errors:
        raise PrepError(errors)
    found = next((hit for hit in (term_occurrence(term, d.text) for d in artwork.descriptions.all()) if hit), None)
    if found is None:
        raise PrepError(
            {
                "term": _("“%(term)s” does not occur in any description of %(artwork)s")
                % {"term": term, "artwork": artwork.title}
            }
        )
    stored = _stored_form(term, found)
    listed = next((other for other in artwork.terms.values_list("term", flat=True) if terms_same(stored, other)), None)
    if listed is not None:
        raise PrepError({"term": _("“%(term)s” is already listed for this artwork") % {"term": listed}})
    if len(stored) > Term._meta.get_field("term").max_length or len(zh) > Term._meta.get_field("zh").max_length:
        raise PrepError(_("the term or its label is too long"))
    try:
        with transaction.atomic():
            return Term.objects.create(
                artwork=artwork,
                term=stored,
                zh=zh,
                wikidata=_clean_qid(wikidata),
                source=TermSource.RESEARCHER,
                status=TermStatus.CONFIRMED,
                confirmed_by=user,
            )
    except IntegrityError:
        raise PrepError({"term": _("“%(term)s” is already listed for this artwork") % {"term": stored}}) from None


def terms_confirm_all(*, study: Study, user) -> int:
    """Confirm every term Wikidata glossed and nobody has reviewed yet; the number confirmed."""
    study.refresh_from_db()
    _require_editable(study)
    return (
        Term.objects.filter(artwork__study=study, status=TermStatus.FOUND)
        .exclude(zh="")
        .update(status=TermStatus.CONFIRMED, confirmed_by=user, updated_at=timezone.now())
    )
