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

from llm.providers import ClientError, p_correct
from llm.services.capabilities import error_refuses_image, model_vision_refused, reply_sees_no_image
from llm.services.complete import model_choice_logprobs, model_completion

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


def with_image(model, prompt: str, artwork, send):
    """``send(messages)`` with the artwork's image when the model takes images, else with its text.

    An endpoint that refuses the image (a text-only model registered as a vision one) is asked
    again with the text, and the model is marked as taking no images from then on. Returns the
    result, the messages it answered and whether the image went with them.
    """
    vision = sees_images(model)
    messages = user_messages(prompt, artwork, vision=vision)
    if vision:
        try:
            return send(messages), messages, True
        except ClientError as exc:
            if not error_refuses_image(exc):
                raise
            model_vision_refused(model=model, detail=str(exc))
        messages = user_messages(prompt, artwork, vision=False)
    return send(messages), messages, False


def _ask_json(run, item, prompt: str, parse) -> tuple[object, StepResult]:
    """Ask with the construction model until ``parse`` accepts the reply: at most REPLY_ATTEMPTS
    requests, each different (the seed, and the previous error as feedback), so neither the
    cache nor a deterministic server can hand back the same invalid reply."""
    model = run.construction_model
    max_tokens = max_tokens_for(run, item.step)

    def send(messages, seed=0):
        return model_completion(model=model, messages=messages, temperature=0.0, max_tokens=max_tokens, seed=seed)[0]

    base, vision, text, error = [], False, "", ""
    messages = base
    for attempt in range(1, REPLY_ATTEMPTS + 1):
        if attempt == 1:
            completion, base, vision = with_image(model, prompt, item.artwork, send)
            messages = base
        else:
            messages = [
                *base,
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": f"Your reply was invalid: {error}. Answer again, in the required JSON format only.",
                },
            ]
            completion = send(messages, seed=attempt - 1)
        text = completion.text
        vision = vision and not reply_sees_no_image(text)
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


def _description_prompt(run, item) -> str:
    artwork = item.artwork
    information = prompts.artwork_information(title=artwork.title, artist=artwork.artist, date=artwork.date)
    return prompts.description_prompt(group=item.group, information=information)


def _attuned_questions(artwork) -> list[ArtworkQuestion]:
    return list(artwork.questions.filter(type=ArtworkQuestionType.ATTUNED).order_by("position", "id"))


def self_evaluation(run, artwork, *, group: str, description: str, questions) -> tuple[float | None, bool]:
    """Eq. 4's score of one description: the speaker's own P(Correct) for the ground-truth answer
    of each attuned question, given the description, averaged over the questions. None without
    questions or text. Also whether every request carried the image."""
    if not questions or not description:
        return None, sees_images(run.speaker)
    scores, seen = [], True
    for question in questions:
        prompt = prompts.listener_prompt(
            group=group,
            familiar=None,
            question=question.question,
            answer=question.answer,
            description=description,
            pragmatic=True,
        )
        score, _messages, image = with_image(
            run.speaker, prompt, artwork, lambda messages: score_option(run.speaker, messages)
        )
        scores.append(score)
        seen = seen and image
    return sum(scores) / len(scores), seen


def step_base(run, item) -> StepResult:
    """Greedy decoding, then the word limit cut back to the last complete sentence (§5.1).

    The description is then scored like each pragmatic sample (Eq. 4), so the base speaker has a
    self-evaluation score too: the report's mean and the study's Table 2 correlations need it."""
    artwork = item.artwork
    max_tokens = max_tokens_for(run, item.step)
    completion, messages, seen = with_image(
        run.speaker,
        _description_prompt(run, item),
        artwork,
        lambda m: model_completion(model=run.speaker, messages=m, temperature=0.0, max_tokens=max_tokens, seed=0)[0],
    )
    seen = seen and not reply_sees_no_image(completion.text)
    text = truncate_description(completion.text, run.word_limit)
    if not text:
        raise StepError(
            _("the model returned an empty description"), response=completion.text, messages=redacted(messages)
        )
    listener_score, scored_with_image = self_evaluation(
        run, artwork, group=item.group, description=text, questions=_attuned_questions(artwork)
    )
    likelihood = mean_logprob(completion.logprobs)
    combined = None
    if listener_score is not None and (run.lam == 0 or likelihood is not None):
        combined = combined_score(lam=run.lam, likelihood=likelihood, listener_score=listener_score)
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
            likelihood=likelihood,
            listener_score=listener_score,
            combined=combined,
            chosen=True,
        )
    return StepResult(response=completion.text, messages=redacted(messages), image_seen=seen and scored_with_image)


def mean_logprob(logprobs: list | None) -> float | None:
    """Mean token log-probability of a sampled reply: Eq 5's M(D | V, P(I, L)) per token, so
    that long and short samples compare. It is taken over the whole sample, before the
    word-limit truncation (the cut tokens are few and were sampled all the same)."""
    values = [entry["logprob"] for entry in logprobs or [] if entry.get("logprob") is not None]
    return sum(values) / len(values) if values else None


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
    prompt = _description_prompt(run, item)
    questions = _attuned_questions(artwork)
    max_tokens = max_tokens_for(run, item.step)
    candidates = []
    last = ""
    messages, seen = None, True
    for index in range(1, run.samples + 1):

        def send(m, seed=index):
            return model_completion(
                model=run.speaker,
                messages=m,
                temperature=run.temperature,
                max_tokens=max_tokens,
                seed=seed,
                top_logprobs=0,
            )[0]

        if messages is None:
            completion, messages, seen = with_image(run.speaker, prompt, artwork, send)
        else:
            completion = send(messages)
        seen = seen and not reply_sees_no_image(completion.text)
        last = completion.text
        text = truncate_description(completion.text, run.word_limit)
        likelihood = mean_logprob(completion.logprobs)
        listener_score, scored_with_image = self_evaluation(
            run, artwork, group=item.group, description=text, questions=questions
        )
        seen = seen and scored_with_image
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
    return StepResult(response=best.raw_text, messages=redacted(messages), attempts=1, image_seen=seen)


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
    seen = True
    for question in artwork.questions.order_by("type", "position", "id"):
        for condition, description in conditions:
            scores = []
            for option in options_of(question):
                prompt = prompts.listener_prompt(
                    group=item.group,
                    familiar=is_familiar,
                    question=question.question,
                    answer=option,
                    description=description,
                )
                p_correct_of, messages, image = with_image(
                    run.listener, prompt, artwork, lambda m: score_option(run.listener, m)
                )
                seen = seen and image
                first_messages = first_messages or messages
                scores.append({"option": option, "p_correct": p_correct_of})
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
        image_seen=seen if first_messages else sees_images(run.listener),
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
