"""Fixtures for the llm tests: the loopback OpenAI-compatible server, the built-in model and a labelled
dataset to run them on, shared with the evaluation tests that first needed them."""

from tests.evaluation.conftest import (  # noqa: F401 - fixtures
    dataset,
    fake_openai,
    fake_openai_model,
    model,
    smollm2,
    smollm2_cache_dir,
)
