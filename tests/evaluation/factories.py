"""Evaluation objects built in code for the evaluation tests (and the artworks tests' models).

Datasets go through the real corpus import (``make_dataset`` of tests/annotation/factories.py), models
through ``model_add`` and runs through ``run_start``, so each is what a researcher's form makes. A run
whose replies a test only reads (human scoring, the judge-versus-human report) is written straight to
the tables instead: ``make_generation_run`` and ``make_judge_run`` need no provider and no engine.

``LABELLED_ROWS`` is the corpus behind the shared ``dataset`` fixture (tests/evaluation/conftest.py
takes its first four rows).
"""

from annotation.models import Dataset
from evaluation.models import ItemStatus, PromptTemplate, Run, RunItem, RunKind, RunStatus
from evaluation.services import run_start
from evaluation.services.scoring import scoring_task_create
from llm.models import ModelConfig, Provider
from llm.services import model_add
from tests.annotation.factories import make_dataset as make_dataset
from tests.annotation.factories import numbered_csv as numbered_csv

# Nothing listens on the discard port: a model there is for tests that send it nothing.
NOWHERE = "http://127.0.0.1:9/v1"

# Each row has its theme and some traits, so reports by theme and by trait have something to count.
LABELLED_HEADER = "expression,explanation,traits,theme"
LABELLED_ROWS = (
    "Nước chảy đá mòn,Kiên trì thì việc khó cũng xong,,life_lessons",
    "Ăn cháo đá bát,Vô ơn với người đã giúp mình,pragmatic,criticism",
    "Thương nhau củ ấu cũng tròn,Yêu nhau thì thấy gì cũng đẹp,,love",
    'Cấy thưa thừa thóc,Kinh nghiệm cấy lúa,"folk_knowledge,literal",work_nature',
    "Nhất tự vi sư,Kính trọng người dạy mình,sino_vietnamese,virtues",
)

# Distinctive, so that a page a rater must not learn them from can be searched for them.
GENERATION_MODEL = "secret-model-xyz"
JUDGE_REPLY = "JUDGE-REPLY-7f3a Độ tương đồng tổng thể: 3/5"


# --- Corpora ------------------------------------------------------------------------------------


def labelled_csv(n: int = len(LABELLED_ROWS)) -> str:
    """The first ``n`` labelled expressions as a corpus file."""
    return LABELLED_HEADER + "\n" + "".join(f"{row}\n" for row in LABELLED_ROWS[:n])


def numbered_dataset(n: int, *, name: str = "") -> Dataset:
    """``n`` unlabelled expressions "Câu số 0", "Câu số 1" ..., in the dataset ``name`` ("Numbered <n>")."""
    return make_dataset(name=name or f"Numbered {n}", csv=numbered_csv(n), filename="numbered.csv")


# --- Models -------------------------------------------------------------------------------------


def make_model(
    name: str = "fake-llm", *, base_url: str = NOWHERE, model_id: str = "fake-1", max_concurrency: int = 1, **fields
) -> ModelConfig:
    """An OpenAI-compatible model registered through ``model_add``, its slots included.

    One slot unless told otherwise: a run's chunk then works in the test's own thread, where the
    test transaction's rows are visible (a worker thread of its own would not see them).
    """
    return model_add(
        name=name,
        provider=Provider.OPENAI,
        base_url=base_url,
        model_id=model_id,
        max_concurrency=max_concurrency,
        **fields,
    )


def stored_model(server=None, *, name: str = "old", **fields) -> ModelConfig:
    """A model written straight to the table, past ``model_add``'s checks and without slots.

    As one registered before those checks existed (hence "old"), or one that only has to exist.
    It points at ``server`` (a tests/evaluation/fake_openai.FakeOpenAI) if given, else nowhere.
    """
    values = {
        "provider": Provider.OPENAI,
        "base_url": server.base_url if server is not None else NOWHERE,
        "model_id": "fake-model",
        "timeout": 5.0,
        "max_concurrency": 1,
        **fields,
    }
    return ModelConfig.objects.create(name=name, **values)


# --- Runs ---------------------------------------------------------------------------------------


def make_run(
    dataset: Dataset | None = None,
    model: ModelConfig | None = None,
    *,
    kind: str = RunKind.GENERATION,
    prompt_name: str = "zero-shot",
    **options,
) -> Run:
    """A run started through ``run_start``, as the new-run form starts it (a judge run passes ``source_run``).

    Its enqueue waits for a commit: inside a test transaction it stays queued unless the test
    runs the on-commit callbacks.
    """
    return run_start(kind=kind, model=model or make_model(), prompt_name=prompt_name, dataset=dataset, **options)


def builtin_prompt(kind: str, name: str) -> PromptTemplate:
    return PromptTemplate.objects.filter(kind=kind, name=name, builtin=True).first()


def make_generation_run(
    dataset: Dataset,
    *,
    model: ModelConfig | None = None,
    status: str = RunStatus.DONE,
    reply: str = "Giải thích của máy số {n}",
) -> Run:
    """A zero-shot generation run over every expression of ``dataset``, written straight to the tables.

    One done item per expression, in id order; each replies ``reply`` formatted with the item's
    index ``n`` and its ``expression``. The model is ``GENERATION_MODEL`` unless given.
    """
    if model is None:
        model, _ = ModelConfig.objects.get_or_create(
            name=GENERATION_MODEL,
            defaults={"provider": Provider.OPENAI, "base_url": NOWHERE, "model_id": GENERATION_MODEL},
        )
    run = Run.objects.create(
        kind=RunKind.GENERATION,
        model=model,
        prompt=builtin_prompt(RunKind.GENERATION, "zero-shot"),
        dataset=dataset,
        strategy="zero-shot",
        status=status,
        params={"seed": 0},
    )
    RunItem.objects.bulk_create(
        [
            RunItem(
                run=run,
                number=n + 1,
                expression=expression,
                status=ItemStatus.DONE,
                response=reply.format(n=n, expression=expression),
            )
            for n, expression in enumerate(dataset.expressions.order_by("id"))
        ]
    )
    return run


def make_judge_run(
    source: Run,
    scores: dict[int, int | None] | int,
    *,
    model: ModelConfig | None = None,
    strategy: str = "aspect",
    seed: int = 0,
    status: str = RunStatus.DONE,
    reply: str | None = None,
) -> Run:
    """A judge run of the generation run ``source``, written straight to the tables.

    ``scores`` maps an item's index (id order) to its score, None for an unscored reply, or is one
    score for every item. Each item replies ``reply``, else its score as text ("" when unscored).
    The judge is ``source``'s own model unless given.
    """
    judge = Run.objects.create(
        kind=RunKind.JUDGE,
        model=model or source.model,
        prompt=builtin_prompt(RunKind.JUDGE, strategy),
        dataset=source.dataset,
        source_run=source,
        strategy=strategy,
        status=status,
        params={"temperature": 0.0, "seed": seed},
    )
    items = list(source.items.order_by("id"))
    if isinstance(scores, int):
        scores = dict.fromkeys(range(len(items)), scores)
    RunItem.objects.bulk_create(
        [
            RunItem(
                run=judge,
                number=index + 1,
                expression_id=items[index].expression_id,
                source_item=items[index],
                status=ItemStatus.DONE,
                score=score,
                response=reply if reply is not None else ("" if score is None else str(score)),
            )
            for index, score in scores.items()
        ]
    )
    return judge


def make_scoring_task(
    run: Run,
    raters,
    *,
    name: str = "Đợt chấm 1",
    n_items: int = 20,
    n_shared: int = 6,
    seed: int = 7,
    user=None,
):
    """A human scoring task of ``run`` through ``scoring_task_create``: ``n_items`` sampled, ``n_shared``
    of them scored by every rater, the rest split between ``raters``."""
    return scoring_task_create(
        name=name, run=run, raters=list(raters), n_items=n_items, n_shared=n_shared, seed=seed, user=user
    )
