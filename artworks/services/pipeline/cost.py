"""What an artwork pipeline run will cost, estimated from its items before it starts.

The same machinery as an evaluation run's estimate (evaluation.services.runs.cost): each request's
prompt rendered as the step will send it and counted by llm.costs.prompt_counter (the
model's tokenizer, or the byte estimate calibrated on its replies), output at the step's
max_tokens, held to EVAL_COST_CONFIRM_USD. What a step builds from an earlier step of the same
run (symbols, background, questions, the descriptions) does not exist yet, so it counts as that
step's max_tokens, and unwritten questions as the prompts ask for them: one per cultural symbol
(ESTIMATED_SYMBOLS when the symbols are not found yet), two agnostic ones, each with six options.
A construction step counts one attempt; images are not counted (their tokens depend on the
provider), only how many requests carry one.
"""

from collections import defaultdict

from llm.costs import COUNT_BYTES, COUNT_CALIBRATED, COUNT_TOKENIZER, cost_of, prompt_counter
from llm.services import estimate_totals

from ... import prompts
from ...models import ArtworkPipelineRun, ArtworkQuestionType, PipelineStep
from ...replies import AGNOSTIC_QUESTIONS
from ...selectors.pipeline import ROLES, artwork_run_role_model
from .messages import artwork_text, sees_images
from .steps import familiar, max_tokens_for

ESTIMATED_SYMBOLS = 5
# A question and one of its options, not written yet.
ESTIMATED_QUESTION_TOKENS = 60
ESTIMATED_OPTIONS = 6


class _Tally:
    """The requests one model of the run will be sent."""

    def __init__(self, model):
        self.model = model
        self.counter = prompt_counter(model)
        self.vision = sees_images(model)
        self.tokens_in = self.tokens_out = self.n_requests = self.n_images = 0
        # The prompts are counted together at the end: a tokenizer encodes them as one batch.
        self._prompts: list[tuple[str, int]] = []

    def ask(self, prompt: str, artwork, *, out: int, unknown_in: int = 0, times: int = 1) -> None:
        content = prompt if self.vision else f"{prompt}\n\n{artwork_text(artwork)}"
        self._prompts.append((content, times))
        self.tokens_in += times * unknown_in
        self.tokens_out += times * out
        self.n_requests += times
        self.n_images += times if self.vision else 0

    def summary(self) -> dict:
        if self._prompts:
            counts = self.counter.count_all([[{"role": "user", "content": content}] for content, _ in self._prompts])
            self.tokens_in += sum(n * times for n, (_, times) in zip(counts, self._prompts, strict=True))
            self._prompts = []
        price_input, price_output = self.model.price_input, self.model.price_output
        cost = (
            cost_of(self.tokens_in, self.tokens_out, price_input=price_input, price_output=price_output)
            if self.n_requests
            else 0.0
        )
        return {
            "model": self.model.name,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "n_requests": self.n_requests,
            "n_images": self.n_images,
            "price_input": price_input,
            "price_output": price_output,
            "cost": cost,
            **self.counter.details(),
        }


def _questions(artwork, kind: str, *, built: bool, expected: int) -> list[tuple[str, list[str], int]]:
    """(question, options, tokens not written yet) of one kind: the artwork's own, or placeholders."""
    if built:
        return [("", [""] * ESTIMATED_OPTIONS, ESTIMATED_QUESTION_TOKENS)] * expected
    return [
        (q.question, [q.answer, *q.distractors], 0)
        for q in artwork.questions.filter(type=kind).order_by("position", "id")
    ]


def artwork_run_cost_estimate(*, run: ArtworkPipelineRun) -> dict:
    """Tokens and cost of the run's items, per model role and in all (an upper bound on output)."""
    tallies = {role: _Tally(artwork_run_role_model(run, role)) for role in ROLES}
    builder, speaker, listener = tallies["builder"], tallies["speaker"], tallies["listener"]
    steps: dict[int, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    artworks = {}
    for item in run.items.select_related("artwork").order_by("id"):
        steps[item.artwork_id][item.step].add(item.group)
        artworks[item.artwork_id] = item.artwork

    def cap(step):
        return max_tokens_for(run, step)

    for artwork_id, todo in steps.items():
        artwork = artworks[artwork_id]
        builds = set(todo)
        symbols = (
            []
            if PipelineStep.SYMBOLS in builds
            else list(artwork.elements.filter(is_symbol=True).order_by("position", "id").values_list("name", flat=True))
        )
        unknown_symbols = cap(PipelineStep.SYMBOLS) if PipelineStep.SYMBOLS in builds else 0
        unknown_background = cap(PipelineStep.BACKGROUND) if PipelineStep.BACKGROUND in builds else 0
        if PipelineStep.SYMBOLS in builds:
            builder.ask(prompts.symbols_prompt(school=artwork.culture), artwork, out=cap(PipelineStep.SYMBOLS))
        if PipelineStep.BACKGROUND in builds:
            prompt = prompts.background_prompt(school=artwork.culture, comment=artwork.comment, symbols=symbols)
            builder.ask(prompt, artwork, out=cap(PipelineStep.BACKGROUND), unknown_in=unknown_symbols)
        if PipelineStep.ATTUNED_QUESTIONS in builds and (symbols or unknown_symbols):
            prompt = prompts.attuned_questions_prompt(background=artwork.background, symbols=symbols)
            builder.ask(
                prompt,
                artwork,
                out=cap(PipelineStep.ATTUNED_QUESTIONS),
                unknown_in=unknown_symbols + unknown_background,
            )
        if PipelineStep.AGNOSTIC_QUESTIONS in builds:
            builder.ask(prompts.agnostic_questions_prompt(), artwork, out=cap(PipelineStep.AGNOSTIC_QUESTIONS))
        attuned = _questions(
            artwork,
            ArtworkQuestionType.ATTUNED,
            built=PipelineStep.ATTUNED_QUESTIONS in builds,
            expected=len(symbols) if symbols else (ESTIMATED_SYMBOLS if unknown_symbols else 0),
        )
        agnostic = _questions(
            artwork,
            ArtworkQuestionType.AGNOSTIC,
            built=PipelineStep.AGNOSTIC_QUESTIONS in builds,
            expected=AGNOSTIC_QUESTIONS,
        )
        information = prompts.artwork_information(title=artwork.title, artist=artwork.artist, date=artwork.date)
        for step, samples in ((PipelineStep.BASE, 1), (PipelineStep.PRAGMATIC, run.samples)):
            for group in todo.get(step, ()):
                prompt = prompts.description_prompt(group=group, information=information)
                speaker.ask(prompt, artwork, out=cap(step), times=samples)
                # Eq. 4: each description scored by the speaker against every attuned question.
                for question, options, unknown in attuned:
                    prompt = prompts.listener_prompt(
                        group=group, familiar=None, question=question, answer=options[0], description="", pragmatic=True
                    )
                    speaker.ask(prompt, artwork, out=1, unknown_in=cap(step) + unknown, times=samples)
        for group in todo.get(PipelineStep.LISTENER, ()):
            is_familiar = familiar(group, artwork)
            for question, options, unknown in attuned + agnostic:
                for description, unknown_description in (
                    (None, 0),
                    ("", cap(PipelineStep.BASE)),
                    ("", cap(PipelineStep.PRAGMATIC)),
                ):
                    for option in options:
                        prompt = prompts.listener_prompt(
                            group=group, familiar=is_familiar, question=question, answer=option, description=description
                        )
                        listener.ask(prompt, artwork, out=1, unknown_in=unknown + unknown_description)
    by_role = {role: tally.summary() for role, tally in tallies.items()}
    costs = [part["cost"] for part in by_role.values()]
    return estimate_totals(
        tokens_in=sum(part["tokens_in"] for part in by_role.values()),
        tokens_out=sum(part["tokens_out"] for part in by_role.values()),
        n_requests=sum(part["n_requests"] for part in by_role.values()),
        cost=None if None in costs else sum(costs),
        n_images=sum(part["n_images"] for part in by_role.values()),
        n_cached=0,
        by_role=by_role,
        method="; ".join(dict.fromkeys(part["method"] for part in by_role.values())),
        count_method=_weakest(part["count_method"] for part in by_role.values()),
    )


def _weakest(kinds) -> str:
    """The run's counting is as good as its least exact model's."""
    kinds = set(kinds)
    return next(kind for kind in (COUNT_BYTES, COUNT_CALIBRATED, COUNT_TOKENIZER) if kind in kinds)
