"""What each participant page shows: the step a participant is on, the artwork, its elements and
questions, the descriptions; and the counts the participant services decide by (places taken,
exposures, the abandon cut-off).

Everything here reads what import and preparation stored; nothing calls a model or the
network while a participant waits.
"""

import random
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy

from ..models import (
    CONSENT_LANGUAGES,
    TRANSLATION,
    Answer,
    Artwork,
    Assignment,
    Criterion,
    Culture,
    Description,
    DescriptionPair,
    Participant,
    ParticipantStatus,
    Phase,
    Speaker,
    Study,
    TermStatus,
)
from ..text import gloss_html, markdown_html

UNFINISHED = (ParticipantStatus.ENTERED, ParticipantStatus.IN_PROGRESS)


# -- where a participant is -----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    key: str
    kind: str  # group | consent | instructions | symbols | qa | post_symbols | post_qa | compare | done
    order: int | None = None  # the assignment's order for artwork steps


def step_parse(key: str) -> Step:
    if ":" in key:
        order, kind = key.split(":", 1)
        return Step(key=key, kind=kind, order=int(order))
    return Step(key=key, kind=key)


def participant_step(participant: Participant) -> Step:
    """The page this participant is on now."""
    if participant.status in (ParticipantStatus.COMPLETED, ParticipantStatus.EXCLUDED_QC):
        return Step(key="done", kind="done")
    if participant.status == ParticipantStatus.NO_CONSENT:
        return Step(key="declined", kind="declined")
    if not participant.group:
        return Step(key="group", kind="group")
    if not participant.plan:
        return Step(key="consent", kind="consent")
    if participant.step_index >= len(participant.plan):
        return Step(key="finish", kind="finish")
    return step_parse(participant.plan[participant.step_index])


def participant_fresh(*, participant: Participant) -> Participant:
    """The participant as stored now, with its study (without the package: see study_content)."""
    return Participant.objects.select_related("study").defer("study__package").get(pk=participant.pk)


def study_entry_find(*, slug: str) -> Study | None:
    """The study of a participant's link (entry, images), without its package (see study_content)."""
    return Study.objects.defer("package").filter(slug=slug).first()


def participant_current(*, slug: str, pk: int) -> Participant | None:
    """The session a browser holds for a study, or None when it is not that study's.

    The study comes with it (its status decides whether answers are taken) but not its
    package, the imported study.json: the pages read that through study_content.
    """
    # get(), not first(): no ORDER BY to build on every page.
    try:
        return Participant.objects.select_related("study").defer("study__package").get(pk=pk, study__slug=slug)
    except Participant.DoesNotExist:
        return None


# -- what a study shows, read once per process ----------------------------------------------------


@dataclass(frozen=True)
class StudyContent:
    """The parts of a study the package import writes once and nothing changes afterwards (the
    admin shows them read-only): the package itself, the artworks with their questions, the
    descriptions. Shared by every request of a process: read, never modify."""

    package: dict
    artworks: dict  # pk -> Artwork, its questions prefetched in their order
    descriptions: dict  # pk -> Description
    pairs: dict  # (artwork pk, listener) -> (base description pk, pragmatic description pk)


def study_content(study: Study) -> StudyContent:
    """The study's imported content, read from the database once per process rather than on
    every page. Terms and the sentence pairs' highlights change while a study is a draft or
    paused, so they are not part of it: the pages read them each time."""
    # The creation time next to the id: a database whose ids start again (a test's) never finds
    # another study's content under the same key.
    return _study_content(study.pk, study.created_at)


@lru_cache(maxsize=32)
def _study_content(study_pk: int, created_at) -> StudyContent:
    package = Study.objects.filter(pk=study_pk).values_list("package", flat=True).first()
    return StudyContent(
        package=package if isinstance(package, dict) else {},
        artworks={a.pk: a for a in Artwork.objects.filter(study_id=study_pk).prefetch_related("questions")},
        descriptions={d.pk: d for d in Description.objects.filter(artwork__study_id=study_pk)},
        # Which two descriptions a pair compares; its highlights (matches) change and are read each time.
        pairs={
            (artwork_id, listener): (base_id, pragmatic_id)
            for artwork_id, listener, base_id, pragmatic_id in DescriptionPair.objects.filter(
                artwork__study_id=study_pk
            ).values_list("artwork_id", "listener", "base_id", "pragmatic_id")
        },
    )


def participant_status_counts(*, study: Study, pids: list[str]) -> dict[str, int]:
    """How many of these Prolific ids' sessions end in each status."""
    rows = Participant.objects.filter(study=study, prolific_pid__in=pids).values_list("status").annotate(n=Count("id"))
    return dict(rows.values_list("status", "n"))


def participant_missing_step(*, participant: Participant) -> str | None:
    """The first step whose answers are not all stored, or None when everything is."""
    assignments = {
        a.order: a
        for a in Assignment.objects.filter(participant=participant)
        .annotate(
            n_pre=Count("answers", filter=Q(answers__phase=Phase.PRE), distinct=True),
            n_post=Count("answers", filter=Q(answers__phase=Phase.POST), distinct=True),
            n_pref=Count("preferences", distinct=True),
            n_questions=Count("artwork__questions", distinct=True),
        )
        .select_related("artwork")
    }
    for key in participant.plan:
        step = step_parse(key)
        if step.order is None:
            continue
        a = assignments.get(step.order)
        if a is None:
            return key
        missing = {
            "symbols": a.symbols_pre is None,
            "post_symbols": a.symbols_post is None,
            "qa": a.n_pre != a.n_questions,
            "post_qa": a.n_post != a.n_questions,
            "compare": a.n_pref != len(Criterion.values),
        }[step.kind]
        if missing:
            return key
    return None


# -- quota places and exposures -------------------------------------------------------------------


# A session has sent its first page of answers once past the instructions (step 0) and the first
# artwork page (step 1) that consent puts first in its plan.
FIRST_ANSWER_STEP = 2


def participant_abandon_cutoff():
    """Unfinished sessions with answers not seen since this moment count as returned (STUDY_ABANDON_MINUTES)."""
    return timezone.now() - timedelta(minutes=settings.STUDY_ABANDON_MINUTES)


def participant_hold_cutoff():
    """Unfinished sessions without answers not seen since this moment count as returned (STUDY_HOLD_MINUTES):
    a place taken by a consent alone is held only that long."""
    return timezone.now() - timedelta(minutes=min(settings.STUDY_HOLD_MINUTES, settings.STUDY_ABANDON_MINUTES))


def participant_idle_after(*, step_index: int) -> timedelta:
    """How long an unfinished session at ``step_index`` may stay unseen before it counts as returned."""
    minutes = settings.STUDY_ABANDON_MINUTES
    if step_index < FIRST_ANSWER_STEP:
        minutes = min(minutes, settings.STUDY_HOLD_MINUTES)
    return timedelta(minutes=minutes)


def participant_idle_q() -> Q:
    """Unfinished sessions the two idle rules count as returned (whether or not marked so yet)."""
    return Q(status__in=UNFINISHED) & (
        Q(last_seen_at__lt=participant_abandon_cutoff())
        | Q(step_index__lt=FIRST_ANSWER_STEP, last_seen_at__lt=participant_hold_cutoff())
    )


def participant_counted_returned(*, participant: Participant) -> bool:
    """Whether the results count this unfinished session as returned (idle past STUDY_HOLD_MINUTES before
    its first answers, STUDY_ABANDON_MINUTES after)."""
    return (
        participant.status in UNFINISHED
        and participant.last_seen_at is not None
        and participant.last_seen_at + participant_idle_after(step_index=participant.step_index) < timezone.now()
    )


def participant_places_taken(*, study: Study, group: str, exclude_pk: int | None = None) -> int:
    """Valid completions plus live sessions of a group: a failed, returned, idle or unverified session
    takes no place."""
    taken = Participant.objects.filter(study=study, group=group, is_preview=False, is_test=False).filter(
        Q(status=ParticipantStatus.COMPLETED) | (Q(status=ParticipantStatus.IN_PROGRESS) & ~participant_idle_q())
    )
    if exclude_pk:
        taken = taken.exclude(pk=exclude_pk)
    return taken.count()


def study_admission(*, study: Study) -> Study:
    """The study's status and quota as stored now (only those fields: a consent reads nothing else)."""
    return Study.objects.only("status", "quota_per_group").get(pk=study.pk)


def artwork_draw_counts(*, study: Study, group: str) -> tuple[dict, dict]:
    """What a consent's draw balances, in one query over the group's live or finished sessions:
    how often each artwork was assigned (exposures), and per artwork how often it showed each
    speaker and put the pragmatic description on each side."""
    rows = (
        Assignment.objects.filter(participant__study=study, participant__group=group, participant__is_preview=False)
        .exclude(participant__status__in=[ParticipantStatus.RETURNED, ParticipantStatus.NO_CONSENT])
        .values("artwork_id", "shown__speaker", "left__speaker")
        .annotate(n=Count("id"))
        .order_by()
    )
    exposures: dict = {}
    speakers: dict = {}
    for row in rows:
        exposures[row["artwork_id"]] = exposures.get(row["artwork_id"], 0) + row["n"]
        if row["shown__speaker"] is None:  # a quality-control artwork shows no description
            continue
        c = speakers.setdefault(row["artwork_id"], {})
        c[row["shown__speaker"]] = c.get(row["shown__speaker"], 0) + row["n"]
        side = "pragmatic_left" if row["left__speaker"] == Speaker.PRAGMATIC else "pragmatic_right"
        c[side] = c.get(side, 0) + row["n"]
    return exposures, speakers


def assignment_for_step(*, participant: Participant, order: int) -> Assignment:
    """The assignment behind an artwork page, with the artwork and the descriptions it shows.

    One row: the artwork, its questions and the descriptions come from study_content. A request
    that stores a page and shows the next one of the same artwork reads it once (the writes keep
    the copy up to date).
    """
    read = participant.__dict__.setdefault("_assignments_read", {})
    if order in read:
        return read[order]
    assignment = Assignment.objects.get(participant=participant, order=order)
    content = study_content(participant.study)
    assignment.participant = participant
    assignment.artwork = content.artworks[assignment.artwork_id]
    for field in ("shown", "left", "right"):
        pk = getattr(assignment, f"{field}_id")
        if pk is not None:
            setattr(assignment, field, content.descriptions[pk])
    read[order] = assignment
    return assignment


# -- what a page shows ----------------------------------------------------------------------------


def question_options(*, participant: Participant, question) -> list[str]:
    """The answer and its distractors in this participant's own order, the same on every visit."""
    options = [question.answer, *question.distractors]
    random.Random(f"{participant.seed}:{question.pk}").shuffle(options)
    return options


def element_order(*, participant: Participant, artwork: Artwork) -> list[str]:
    names = [element["name"] for element in artwork.elements]
    random.Random(f"{participant.seed}:elements:{artwork.pk}").shuffle(names)
    return names


# Matching colours of highlighted sentence pairs, in the order the pairs appear.
HIGHLIGHT_COLOURS = 6


def participant_progress(participant: Participant) -> dict:
    """Artwork n of N, and how far along the whole session is."""
    plan = participant.plan or []
    total_artworks = len({key.split(":", 1)[0] for key in plan if ":" in key})
    return {
        "done": participant.step_index,
        "total": len(plan),
        "percent": round(100 * participant.step_index / len(plan)) if plan else 0,
        "artworks": total_artworks,
    }


def _glosses(artwork) -> dict[str, str]:
    if artwork.culture != Culture.CHINESE:
        return {}
    return {
        term.term: term.zh for term in artwork.terms.all() if term.status == TermStatus.CONFIRMED and term.zh.strip()
    }


def description_view(description, *, glosses: dict, colours: dict[int, int] | None = None) -> dict:
    colours = colours or {}
    return {
        "id": description.pk,
        "sentences": [
            {"html": mark_safe(gloss_html(sentence, glosses)), "colour": colours.get(index)}
            for index, sentence in enumerate(description.sentences or [description.text])
        ],
    }


def _pair_colours(assignment: Assignment) -> tuple[dict, dict]:
    """Sentence index -> colour number for the left and the right description."""
    pair = DescriptionPair.objects.filter(artwork=assignment.artwork, listener=assignment.participant.group).first()
    if pair is None:
        return {}, {}
    base_colours, pragmatic_colours = {}, {}
    for colour, (base_index, pragmatic_index, _cosine) in enumerate(pair.matches):
        base_colours[base_index] = colour % HIGHLIGHT_COLOURS + 1
        pragmatic_colours[pragmatic_index] = colour % HIGHLIGHT_COLOURS + 1
    by_description = {pair.base_id: base_colours, pair.pragmatic_id: pragmatic_colours}
    return by_description.get(assignment.left_id, {}), by_description.get(assignment.right_id, {})


CONFIDENCE_SCALE = [
    ("1", gettext_lazy("Not confident at all")),
    ("2", gettext_lazy("Slightly confident")),
    ("3", gettext_lazy("Moderately confident")),
    ("4", gettext_lazy("Very confident")),
    ("5", gettext_lazy("Completely confident")),
]
# The exact questions of the paper's section 5.2.
CRITERIA = [
    (
        Criterion.COMPREHENSION,
        gettext_lazy(
            "Comprehension: which description better helps you understand the main meaning of the artwork "
            "(and its symbolism)?"
        ),
    ),
    (
        Criterion.KNOWLEDGE_GAIN,
        gettext_lazy(
            "Knowledge gain: which description provides more explanation of cultural symbols in the artwork "
            "that you did not already know?"
        ),
    ),
    (
        Criterion.PRIOR_KNOWLEDGE,
        gettext_lazy(
            "Prior knowledge: which description provides more explanation of cultural symbols in the artwork "
            "that you were already familiar with?"
        ),
    ),
]


def _option_labels(question, language: str | None) -> dict[str, str]:
    """English option -> the label shown; the translation pairs the answer and distractors by position."""
    translated = _translated(question.translations, language)
    if not translated.get("answer") or len(translated.get("distractors") or []) != len(question.distractors):
        return {}
    return dict(
        zip([question.answer, *question.distractors], [translated["answer"], *translated["distractors"]], strict=True)
    )


def _first(values, name: str) -> str:
    if values is None:
        return ""
    if hasattr(values, "getlist"):
        found = values.getlist(name)
        return found[0] if found else ""
    return values.get(name, "")


def participant_translation(participant: Participant) -> str | None:
    """The package translation this participant reads, if any: the Chinese group's, where the package has one."""
    return TRANSLATION if participant.group == Culture.CHINESE else None


def _translated(translations: dict, language: str | None) -> dict:
    return (translations or {}).get(language, {}) if language else {}


def study_title(participant: Participant) -> str:
    study = participant.study
    package = study_content(study).package
    return _translated(package, participant_translation(participant)).get("title") or study.title


def consent_context(participant: Participant) -> dict:
    """What the consent page says beyond the fixed text: duration, reward, contact, ethics, the study's own text."""
    language = "zh-hans" if participant.group == Culture.CHINESE else "en"
    return _consent_context(participant.study.pk, participant.study.created_at, language)


@lru_cache(maxsize=64)
def _consent_context(study_pk: int, created_at, language: str) -> dict:
    # The package never changes (study_content): its markdown is rendered once per process and language.
    package = _study_content(study_pk, created_at).package
    texts = package.get("consent") if isinstance(package.get("consent"), dict) else {}
    # The participant's language first, then the other one: a study's own text beats none.
    text = next((texts[lang] for lang in (language, *CONSENT_LANGUAGES) if isinstance(texts.get(lang), str)), "")
    minutes = package.get("estimated_minutes")
    return {
        "minutes": minutes if isinstance(minutes, int) and not isinstance(minutes, bool) else None,
        "reward": package.get("reward") or "",
        "contact": package.get("contact") or "",
        "ethics_reference": package.get("ethics_reference") or "",
        # markdown_html escapes raw HTML and keeps only safe links, so the result may be marked safe.
        "html": mark_safe(markdown_html(text)) if text.strip() else "",
    }


def step_context(participant: Participant, step: Step, *, values=None, errors=None) -> dict:
    """The template context of an artwork page; ``values`` are the answers of a rejected submit, shown again."""
    errors = errors or {}
    assignment = assignment_for_step(participant=participant, order=step.order)
    artwork = assignment.artwork
    # Glosses only where a description is shown: the questions pages need no term query.
    glosses = _glosses(artwork) if step.kind in ("post_symbols", "post_qa", "compare") else {}
    language = participant_translation(participant)
    artwork_text = _translated(artwork.translations, language)
    # Labels only: forms send the English names and options, which are what is stored and scored.
    element_labels = artwork_text.get("elements", {})
    locked = assignment.symbols_pre if step.kind in ("post_symbols", "post_qa") else None
    context = {
        "assignment": assignment,
        "artwork": artwork,
        "artwork_title": artwork_text.get("title") or artwork.title,
        "elements": [
            (name, element_labels.get(name, name)) for name in element_order(participant=participant, artwork=artwork)
        ],
        "locked_symbols": [element_labels.get(name, name) for name in locked] if locked is not None else None,
        "selected_symbols": values.getlist("symbols") if values is not None and hasattr(values, "getlist") else [],
        "selected_none": _first(values, "none") == "1",
        "confidence_scale": CONFIDENCE_SCALE,
    }
    if step.kind in ("qa", "post_qa"):
        pre = {}
        if step.kind == "post_qa":
            pre = {a.question_id: a for a in Answer.objects.filter(assignment=assignment, phase=Phase.PRE)}
        context["questions"] = []
        for question in artwork.questions.all():
            # Only a question that names a symbol asks whether the participant knew it.
            parts = ("choice", "confidence", "knew") if question.symbol else ("choice", "confidence")
            names = {part: f"q{question.pk}-{part}" for part in parts}
            labels = _option_labels(question, language)
            locked_answer = pre.get(question.pk)
            context["questions"].append(
                {
                    "question": question,
                    "text": _translated(question.translations, language).get("question") or question.question,
                    "symbol": element_labels.get(question.symbol, question.symbol),
                    "asks_knew": bool(question.symbol),
                    "options": [
                        (option, labels.get(option, option))
                        for option in question_options(participant=participant, question=question)
                    ],
                    "locked": locked_answer,
                    "locked_label": labels.get(locked_answer.choice, locked_answer.choice) if locked_answer else "",
                    "names": names,
                    "selected": {part: _first(values, name) for part, name in names.items()},
                    "has_error": any(name in errors for name in names.values()),
                }
            )
    if step.kind in ("post_symbols", "post_qa") and assignment.shown_id:
        context["description"] = description_view(assignment.shown, glosses=glosses)
    if step.kind == "compare":
        left_colours, right_colours = _pair_colours(assignment)
        context["left"] = description_view(assignment.left, glosses=glosses, colours=left_colours)
        context["right"] = description_view(assignment.right, glosses=glosses, colours=right_colours)
        context["criteria"] = [(criterion, label, _first(values, criterion)) for criterion, label in CRITERIA]
    context["has_glosses"] = bool(glosses)
    return context
