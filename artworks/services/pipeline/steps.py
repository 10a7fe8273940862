"""The seven steps of the artwork pipeline, one item at a time.

Every request goes through ``model_completion`` / ``model_choice_logprobs`` (the response
cache, the model's concurrency lease and pacing, retries with backoff), so a resumed or
repeated run sends no request twice. A step raises ``StepError`` to fail its item,
keeping the last reply; it writes its results only when it succeeds.
"""

import math
import random

from django.db import transaction
from django.utils.translation import gettext as _

from evaluation.providers import ClientError, p_correct
from evaluation.services.complete import model_choice_logprobs, model_completion

from ... import prompts
from ...models import (
    ArtworkElement,
    ArtworkPipelineRun,
    ArtworkQuestion,
    ArtworkQuestionType,
    CollectionArtwork,
    ListenerAnswer,
    ListenerCondition,
    PipelineItem,
    PipelineStep,
    SpeakerCandidate,
    SpeakerKind,
)
from ...replies import (
    ReplyError,
    parse_agnostic_questions,
    parse_attuned_questions,
    parse_background,
    parse_symbols,
    truncate_description,
)
from .messages import redacted, sees_images, user_messages

REPLY_ATTEMPTS = 3
MAX_TOKENS = {
    PipelineStep.SYMBOLS: 400,
    PipelineStep.BACKGROUND: 900,
    PipelineStep.ATTUNED_QUESTIONS: 1200,
    PipelineStep.AGNOSTIC_QUESTIONS: 800,
    PipelineStep.BASE: 160,
    PipelineStep.PRAGMATIC: 160,
}
# log(0) is -inf, which neither JSON nor a float column keeps portably; a listener
# score this small already loses every comparison.
MIN_PROBABILITY = 1e-12


class StepError(Exception):
    def __init__(self, message: str, *, response: str = "", messages: list | None = None, attempts: int = 1):
        super().__init__(message)
        self.response = response
        self.messages = messages or []
        self.attempts = attempts


class StepResult:
    def __init__(
        self, *, response: str = "", messages: list | None = None, attempts: int = 1, image_seen: bool | None = None
    ):
        self.response = response
        self.messages = messages or []
        self.attempts = attempts
        self.image_seen = image_seen


def max_tokens_for(run: ArtworkPipelineRun, step: str) -> int:
    cap = run.reproducibility.get("max_tokens")
    return min(MAX_TOKENS[step], cap) if cap else MAX_TOKENS[step]


def _ask_json(run, item, prompt: str, parse) -> tuple[object, StepResult]:
    """Ask with the construction model until ``parse`` accepts the reply: at most REPLY_ATTEMPTS
    requests, each different (the seed, and the previous error as feedback), so neither the
    cache nor a deterministic server can hand back the same invalid reply."""
    model = run.construction_model
    vision = sees_images(model)
    base = user_messages(prompt, item.artwork, vision=vision)
    messages, text, error = base, "", ""
    for attempt in range(1, REPLY_ATTEMPTS + 1):
        if attempt > 1:
            messages = [
                *base,
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": f"Your reply was invalid: {error}. Answer again, in the required JSON format only.",
                },
            ]
        completion, _cached = model_completion(
            model=model, messages=messages, temperature=0.0, max_tokens=max_tokens_for(run, item.step), seed=attempt - 1
        )
        text = completion.text
        try:
            value = parse(text)
        except ReplyError as exc:
            error = str(exc)
            continue
        return value, StepResult(response=text, messages=redacted(messages), attempts=attempt, image_seen=vision)
    raise StepError(
        _("invalid reply after %(n)s attempts: %(error)s") % {"n": REPLY_ATTEMPTS, "error": error},
        response=text,
        messages=redacted(messages),
        attempts=REPLY_ATTEMPTS,
    )


def _symbols(artwork: CollectionArtwork) -> list[str]:
    return list(artwork.elements.filter(is_symbol=True).order_by("position", "id").values_list("name", flat=True))


def step_symbols(run, item) -> StepResult:
    artwork = item.artwork
    parsed, result = _ask_json(run, item, prompts.symbols_prompt(school=artwork.culture), parse_symbols)
    with transaction.atomic():
        if not artwork.elements.exists():  # a researcher may have entered them meanwhile
            rows = [
                ArtworkElement(artwork=artwork, name=name[:200], is_symbol=True, meaning=meaning)
                for name, meaning in parsed["symbols"].items()
            ]
            rows += [
                ArtworkElement(artwork=artwork, name=name[:200], is_symbol=False) for name in parsed["non_symbols"]
            ]
            for position, row in enumerate(rows):
                row.position = position
            ArtworkElement.objects.bulk_create(rows)
    return result


def step_background(run, item) -> StepResult:
    artwork = item.artwork
    prompt = prompts.background_prompt(school=artwork.culture, comment=artwork.comment, symbols=_symbols(artwork))
    text, result = _ask_json(run, item, prompt, parse_background)
    CollectionArtwork.objects.filter(pk=artwork.pk, background="").update(background=text)
    return result


def _save_questions(artwork, kind: str, questions: list[dict]) -> None:
    with transaction.atomic():
        if artwork.questions.filter(type=kind).exists():
            return
        ArtworkQuestion.objects.bulk_create(
            [
                ArtworkQuestion(
                    artwork=artwork,
                    key=f"{kind}-{n}",
                    symbol=q["subject"][:200],
                    type=kind,
                    question=q["question"],
                    answer=q["answer"],
                    distractors=q["distractors"],
                    position=n,
                )
                for n, q in enumerate(questions, start=1)
            ]
        )


def step_attuned(run, item) -> StepResult:
    artwork = CollectionArtwork.objects.get(pk=item.artwork_id)  # the background written by the previous step
    symbols = _symbols(artwork)
    if not symbols:
        # The prompt itself says to return an empty list: there is nothing to ask.
        return StepResult(response="", attempts=0)
    prompt = prompts.attuned_questions_prompt(background=artwork.background, symbols=symbols)
    questions, result = _ask_json(run, item, prompt, lambda text: parse_attuned_questions(text, symbols=symbols))
    _save_questions(artwork, ArtworkQuestionType.ATTUNED, questions)
    return result


def step_agnostic(run, item) -> StepResult:
    questions, result = _ask_json(run, item, prompts.agnostic_questions_prompt(), parse_agnostic_questions)
    _save_questions(item.artwork, ArtworkQuestionType.AGNOSTIC, questions)
    return result


def _description_messages(run, item) -> list[dict]:
    artwork = item.artwork
    information = prompts.artwork_information(title=artwork.title, artist=artwork.artist, date=artwork.date)
    prompt = prompts.description_prompt(group=item.group, information=information)
    return user_messages(prompt, artwork, vision=sees_images(run.speaker))


def step_base(run, item) -> StepResult:
    """Greedy decoding, then the word limit cut back to the last complete sentence (§5.1)."""
    messages = _description_messages(run, item)
    completion, _cached = model_completion(
        model=run.speaker, messages=messages, temperature=0.0, max_tokens=max_tokens_for(run, item.step), seed=0
    )
    text = truncate_description(completion.text, run.word_limit)
    if not text:
        raise StepError(
            _("the model returned an empty description"), response=completion.text, messages=redacted(messages)
        )
    with transaction.atomic():
        SpeakerCandidate.objects.filter(
            run=run, artwork=item.artwork, group=item.group, speaker=SpeakerKind.BASE
        ).delete()
        SpeakerCandidate.objects.create(
            run=run,
            artwork=item.artwork,
            group=item.group,
            speaker=SpeakerKind.BASE,
            index=0,
            text=text,
            raw_text=completion.text,
            likelihood=mean_logprob(completion.logprobs),
            chosen=True,
        )
    return StepResult(response=completion.text, messages=redacted(messages), image_seen=sees_images(run.speaker))


def mean_logprob(logprobs: list | None) -> float | None:
    """Mean token log-probability of a sampled reply: Eq 5's M(D | V, P(I, L)) per token, so
    that long and short samples compare. It is taken over the whole sample, before the
    word-limit truncation (the cut tokens are few and were sampled all the same)."""
    values = [entry["logprob"] for entry in logprobs or [] if entry.get("logprob") is not None]
    return sum(values) / len(values) if values else None


def listener_messages(
    run,
    artwork,
    *,
    model,
    group: str,
    familiar: bool | None,
    question: str,
    answer: str,
    description: str | None,
    pragmatic: bool = False,
) -> list[dict]:
    prompt = prompts.listener_prompt(
        group=group, familiar=familiar, question=question, answer=answer, description=description, pragmatic=pragmatic
    )
    return user_messages(prompt, artwork, vision=sees_images(model))


def score_option(model, messages) -> float:
    return p_correct(model_choice_logprobs(model=model, messages=messages, choices=prompts.ANSWER_CHOICES))


def combined_score(*, lam: float, likelihood: float | None, listener_score: float | None) -> float:
    """Eq 5 in log space: lam * log M(D | V, P(I, L)) + (1 - lam) * log P(Correct).

    The likelihood term is the mean token log-probability (see mean_logprob). With lam 0
    this is Eq 4: the log of the listener score, whose argmax is the same. Without attuned
    questions there is no listener score and the likelihood alone decides.
    """
    if listener_score is None:
        return likelihood if likelihood is not None else 0.0
    listener_term = math.log(max(listener_score, MIN_PROBABILITY))
    if lam == 0:
        return listener_term
    if likelihood is None:
        raise ClientError(
            _(
                "lambda > 0 needs the description's likelihood, and the speaker model returned no "
                "log-probabilities for its samples"
            )
        )
    return lam * likelihood + (1 - lam) * listener_term


def step_pragmatic(run, item) -> StepResult:
    """``run.samples`` samples at the run's temperature (seeds 1..N, so the cache keeps them
    apart), each scored by the speaker's own P(Correct) for the ground-truth answers of the
    artwork's attuned questions (Eq 4); the argmax of Eq 5 is chosen, ties to the lowest index."""
    artwork = item.artwork
    messages = _description_messages(run, item)
    questions = list(artwork.questions.filter(type=ArtworkQuestionType.ATTUNED).order_by("position", "id"))
    candidates = []
    last = ""
    for index in range(1, run.samples + 1):
        completion, _cached = model_completion(
            model=run.speaker,
            messages=messages,
            temperature=run.temperature,
            max_tokens=max_tokens_for(run, item.step),
            seed=index,
            top_logprobs=0,
        )
        last = completion.text
        text = truncate_description(completion.text, run.word_limit)
        likelihood = mean_logprob(completion.logprobs)
        listener_score = None
        if questions and text:
            scores = [
                score_option(
                    run.speaker,
                    listener_messages(
                        run,
                        artwork,
                        model=run.speaker,
                        group=item.group,
                        familiar=None,
                        question=q.question,
                        answer=q.answer,
                        description=text,
                        pragmatic=True,
                    ),
                )
                for q in questions
            ]
            listener_score = sum(scores) / len(scores)
        combined = combined_score(lam=run.lam, likelihood=likelihood, listener_score=listener_score) if text else None
        candidates.append(
            SpeakerCandidate(
                run=run,
                artwork=artwork,
                group=item.group,
                speaker=SpeakerKind.PRAGMATIC,
                index=index,
                text=text,
                raw_text=completion.text,
                likelihood=likelihood,
                listener_score=listener_score,
                combined=combined,
            )
        )
    usable = [c for c in candidates if c.combined is not None]
    if not usable:
        raise StepError(_("every sample was empty"), response=last, messages=redacted(messages))
    best = max(usable, key=lambda c: (c.combined, -c.index))
    best.chosen = True
    with transaction.atomic():
        SpeakerCandidate.objects.filter(
            run=run, artwork=artwork, group=item.group, speaker=SpeakerKind.PRAGMATIC
        ).delete()
        SpeakerCandidate.objects.bulk_create(candidates)
    return StepResult(
        response=best.raw_text, messages=redacted(messages), attempts=1, image_seen=sees_images(run.speaker)
    )


def familiar(group: str, artwork) -> bool:
    return group.strip().lower() == artwork.culture.strip().lower()


def options_of(question: ArtworkQuestion) -> list[str]:
    """The answer and its distractors in a fixed shuffled order, so a tie never favours the answer."""
    options = [question.answer, *question.distractors]
    random.Random(f"{question.pk}:{question.key}").shuffle(options)
    return options


def step_listener(run, item) -> StepResult:
    """The listener model answers every question of the artwork as a listener of the item's
    group: without a description (Eq 3), then with the base and the pragmatic description
    for that group (Eq 1). Its answer is the option with the highest P(Correct)."""
    artwork = item.artwork
    chosen = {
        c.speaker: c.text
        for c in SpeakerCandidate.objects.filter(run=run, artwork=artwork, group=item.group, chosen=True)
    }
    missing = [kind for kind in (SpeakerKind.BASE, SpeakerKind.PRAGMATIC) if kind not in chosen]
    if missing:
        raise StepError(_("no %(kinds)s description for this group") % {"kinds": ", ".join(missing)})
    is_familiar = familiar(item.group, artwork)
    conditions = [
        (ListenerCondition.NO_DESCRIPTION, None),
        (ListenerCondition.BASE, chosen[SpeakerKind.BASE]),
        (ListenerCondition.PRAGMATIC, chosen[SpeakerKind.PRAGMATIC]),
    ]
    answers = []
    first_messages: list = []
    for question in artwork.questions.order_by("type", "position", "id"):
        for condition, description in conditions:
            scores = []
            for option in options_of(question):
                messages = listener_messages(
                    run,
                    artwork,
                    model=run.listener,
                    group=item.group,
                    familiar=is_familiar,
                    question=question.question,
                    answer=option,
                    description=description,
                )
                first_messages = first_messages or messages
                scores.append({"option": option, "p_correct": score_option(run.listener, messages)})
            best = max(scores, key=lambda s: s["p_correct"])  # max keeps the first of equals
            answers.append(
                ListenerAnswer(
                    run=run,
                    question=question,
                    group=item.group,
                    familiar=is_familiar,
                    condition=condition,
                    option_scores=scores,
                    chosen=best["option"],
                    correct=best["option"] == question.answer,
                )
            )
    with transaction.atomic():
        ListenerAnswer.objects.filter(run=run, question__artwork=artwork, group=item.group).delete()
        ListenerAnswer.objects.bulk_create(answers)
    return StepResult(
        response=_("%(n)s answers") % {"n": len(answers)},
        messages=redacted(first_messages),
        image_seen=sees_images(run.listener),
    )


STEPS = {
    PipelineStep.SYMBOLS: step_symbols,
    PipelineStep.BACKGROUND: step_background,
    PipelineStep.ATTUNED_QUESTIONS: step_attuned,
    PipelineStep.AGNOSTIC_QUESTIONS: step_agnostic,
    PipelineStep.BASE: step_base,
    PipelineStep.PRAGMATIC: step_pragmatic,
    PipelineStep.LISTENER: step_listener,
}
ORDER = list(STEPS)
CONSTRUCTION = ORDER[:4]
# What each step reads: an item fails at once when one of these failed for its artwork.
NEEDS = {
    PipelineStep.BACKGROUND: [PipelineStep.SYMBOLS],
    PipelineStep.ATTUNED_QUESTIONS: [PipelineStep.SYMBOLS, PipelineStep.BACKGROUND],
    PipelineStep.PRAGMATIC: [PipelineStep.SYMBOLS, PipelineStep.BACKGROUND, PipelineStep.ATTUNED_QUESTIONS],
    PipelineStep.LISTENER: CONSTRUCTION,
}


def unmet_need(item: PipelineItem) -> str | None:
    failed = PipelineItem.objects.filter(
        run_id=item.run_id, artwork_id=item.artwork_id, status="failed", step__in=NEEDS.get(item.step, [])
    ).values_list("step", flat=True)
    failed = [s for s in failed if s in CONSTRUCTION or s == item.step]
    if item.step == PipelineStep.LISTENER:
        failed += list(
            PipelineItem.objects.filter(
                run_id=item.run_id,
                artwork_id=item.artwork_id,
                group=item.group,
                status="failed",
                step__in=[PipelineStep.BASE, PipelineStep.PRAGMATIC],
            ).values_list("step", flat=True)
        )
    if not failed:
        return None
    labels = ", ".join(str(PipelineStep(s).label) for s in dict.fromkeys(failed))
    return _("an earlier step failed for this artwork: %(steps)s") % {"steps": labels}
