"""What the participant pages show, built for their templates: the progress bar, the consent
details, an artwork page's elements, questions and descriptions in the participant's language.

The selectors read the rows; here they become the template's context and its markup. A rejected
submit's answers (``values``, the POST data as sent) are shown again as they were chosen.
"""

from functools import lru_cache

from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from core.forms import input_tag

from ..content import CONFIDENCE_SCALE, CRITERIA
from ..forms import form_value, form_values
from ..models import CONSENT_LANGUAGES, Culture, Participant, Phase
from ..rules import group_translation
from ..selectors.participants import (
    artwork_glosses,
    assignment_answers_by_question,
    assignment_for_step,
    description_pair_find,
    study_content,
)
from ..steps import Step, element_order, question_options
from ..text import gloss_html, markdown_html

# Matching colours of highlighted sentence pairs, in the order the pairs appear.
HIGHLIGHT_COLOURS = 6


def page_context(participant: Participant, step: Step, *, errors: dict | None = None, values=None) -> dict:
    """The template context of the page of ``step``; ``values`` are the answers of a rejected submit."""
    context = {
        "participant": participant,
        "study": participant.study,
        "step": step,
        "errors": errors or {},
        "values": values,
        "progress": participant_progress(participant),
        "preview": participant.is_preview,
        "draft_key": f"vivid:{participant.pseudonym}:{step.key}",
        "study_title": study_title(participant),
    }
    if step.kind == "consent":
        context["consent"] = consent_context(participant)
    if step.order is not None:
        context.update(step_context(participant, step, values=values, errors=errors))
    if step.kind == "group":
        context["groups"] = [(g, Culture(g).label if g in Culture.values else g) for g in participant.study.groups]
    return context


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


def _translated(translations: dict, language: str | None) -> dict:
    return (translations or {}).get(language, {}) if language else {}


def study_title(participant: Participant) -> str:
    study = participant.study
    package = study_content(study).package
    return _translated(package, group_translation(participant.group)).get("title") or study.title


def consent_context(participant: Participant) -> dict:
    """What the consent page says beyond the fixed text: duration, reward, contact, ethics, the study's own text."""
    language = "zh-hans" if participant.group == Culture.CHINESE else "en"
    package = study_content(participant.study).package
    texts = package.get("consent") if isinstance(package.get("consent"), dict) else {}
    # The participant's language first, then the other one: a study's own text beats none.
    text = next((texts[lang] for lang in (language, *CONSENT_LANGUAGES) if isinstance(texts.get(lang), str)), "")
    minutes = package.get("estimated_minutes")
    return {
        "minutes": minutes if isinstance(minutes, int) and not isinstance(minutes, bool) else None,
        "reward": package.get("reward") or "",
        "contact": package.get("contact") or "",
        "ethics_reference": package.get("ethics_reference") or "",
        "html": _consent_html(text) if text.strip() else "",
    }


@lru_cache(maxsize=64)
def _consent_html(text: str) -> str:
    # The package never changes (study_content): its markdown is rendered once per process and text.
    # markdown_html escapes raw HTML and keeps only safe links, so the result may be marked safe.
    return mark_safe(markdown_html(text))


def description_view(description, *, glosses: dict, colours: dict[int, int] | None = None) -> dict:
    colours = colours or {}
    return {
        "id": description.pk,
        "sentences": [
            {"html": mark_safe(gloss_html(sentence, glosses)), "colour": colours.get(index)}
            for index, sentence in enumerate(description.sentences or [description.text])
        ],
    }


def _pair_colours(assignment) -> tuple[dict, dict]:
    """Sentence index -> colour number for the left and the right description."""
    pair = description_pair_find(artwork=assignment.artwork, listener=assignment.participant.group)
    if pair is None:
        return {}, {}
    base_colours, pragmatic_colours = {}, {}
    for colour, (base_index, pragmatic_index, _cosine) in enumerate(pair.matches):
        base_colours[base_index] = colour % HIGHLIGHT_COLOURS + 1
        pragmatic_colours[pragmatic_index] = colour % HIGHLIGHT_COLOURS + 1
    by_description = {pair.base_id: base_colours, pair.pragmatic_id: pragmatic_colours}
    return by_description.get(assignment.left_id, {}), by_description.get(assignment.right_id, {})


def _option_labels(question, language: str | None) -> dict[str, str]:
    """English option -> the label shown; the translation pairs the answer and distractors by position."""
    translated = _translated(question.translations, language)
    if not translated.get("answer") or len(translated.get("distractors") or []) != len(question.distractors):
        return {}
    return dict(
        zip([question.answer, *question.distractors], [translated["answer"], *translated["distractors"]], strict=True)
    )


def option_inputs(kind: str, name: str, options, *, selected: list[str]) -> list[SafeString]:
    """Each option's ``<label><input> label</label>``, written here rather than by a template loop.

    A questions page has some 40 of them, and the template language's lookups and escaping per option
    were a sixth of its template time. The markup is what the loops wrote (tests/study/test_page_markup.py).
    """
    # A radio button is required (one answer per question); a symbol checkbox is not.
    required = kind == "radio"
    return [
        mark_safe(
            "<label>"
            + input_tag(
                {
                    "type": kind,
                    "name": name,
                    "value": value,
                    "attrs": {"required": required, "checked": value in selected},
                }
            )
            + f" {conditional_escape(label)}</label>"
        )
        for value, label in options
    ]


def _sent(values, name: str) -> str:
    """The first value a rejected submit sent under ``name``, or "" on a page shown afresh."""
    return "" if values is None else form_value(values, name)


def step_context(participant: Participant, step: Step, *, values=None, errors=None) -> dict:
    """The template context of an artwork page; ``values`` are the answers of a rejected submit, shown again."""
    errors = errors or {}
    assignment = assignment_for_step(participant=participant, order=step.order)
    artwork = assignment.artwork
    # Glosses only where a description is shown: the questions pages need no term query.
    glosses = artwork_glosses(artwork=artwork) if step.kind in ("post_symbols", "post_qa", "compare") else {}
    language = group_translation(participant.group)
    artwork_text = _translated(artwork.translations, language)
    # Labels only: forms send the English names and options, which are what is stored and scored.
    element_labels = artwork_text.get("elements", {})
    locked = assignment.symbols_pre if step.kind in ("post_symbols", "post_qa") else None
    context = {
        "assignment": assignment,
        "artwork": artwork,
        "artwork_title": artwork_text.get("title") or artwork.title,
        "artwork_alt": artwork_text.get("alt") or artwork.alt,
        "locked_symbols": [element_labels.get(name, name) for name in locked] if locked is not None else None,
        "selected_none": _sent(values, "none") == "1",
    }
    if step.kind in ("symbols", "post_symbols"):
        # Only the symbols pages have the checkboxes: the questions pages would write them for nothing.
        context["element_inputs"] = option_inputs(
            "checkbox",
            "symbols",
            [
                (name, element_labels.get(name, name))
                for name in element_order(participant=participant, artwork=artwork)
            ],
            selected=[] if values is None else form_values(values, "symbols"),
        )
    if step.kind in ("qa", "post_qa"):
        pre = {}
        if step.kind == "post_qa":
            pre = assignment_answers_by_question(assignment=assignment, phase=Phase.PRE)
        context["questions"] = []
        for question in artwork.questions.all():
            # Only a question that names a symbol asks whether the participant knew it.
            parts = ("choice", "confidence", "knew") if question.symbol else ("choice", "confidence")
            names = {part: f"q{question.pk}-{part}" for part in parts}
            labels = _option_labels(question, language)
            locked_answer = pre.get(question.pk)
            selected = {part: _sent(values, name) for part, name in names.items()}
            options = [
                (option, labels.get(option, option))
                for option in question_options(participant=participant, question=question)
            ]
            context["questions"].append(
                {
                    "question": question,
                    "text": _translated(question.translations, language).get("question") or question.question,
                    "symbol": element_labels.get(question.symbol, question.symbol),
                    "asks_knew": bool(question.symbol),
                    "choice_inputs": option_inputs("radio", names["choice"], options, selected=[selected["choice"]]),
                    "confidence_inputs": option_inputs(
                        "radio", names["confidence"], CONFIDENCE_SCALE, selected=[selected["confidence"]]
                    ),
                    "locked": locked_answer,
                    "locked_label": labels.get(locked_answer.choice, locked_answer.choice) if locked_answer else "",
                    "names": names,
                    "selected": selected,
                    "has_error": any(name in errors for name in names.values()),
                }
            )
    if step.kind in ("post_symbols", "post_qa") and assignment.shown_id:
        context["description"] = description_view(assignment.shown, glosses=glosses)
    if step.kind == "compare":
        left_colours, right_colours = _pair_colours(assignment)
        context["left"] = description_view(assignment.left, glosses=glosses, colours=left_colours)
        context["right"] = description_view(assignment.right, glosses=glosses, colours=right_colours)
        context["criteria"] = [(criterion, label, _sent(values, criterion)) for criterion, label in CRITERIA]
    context["has_glosses"] = bool(glosses)
    return context
