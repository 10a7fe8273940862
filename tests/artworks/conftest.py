"""Fixtures for the artworks tests: the pipeline talks to the evaluation app's loopback OpenAI-compatible server."""

from tests.evaluation.conftest import fake_openai, fake_openai_model, smollm2, smollm2_cache_dir  # noqa: F401 - fixtures
