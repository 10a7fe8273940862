"""P(Correct) from first-token log-probabilities: OpenAI top_logprobs and local logits."""

import math

import pytest

from llm.models import ModelConfig, Provider
from llm.providers import ClientError, p_correct
from llm.providers.base import Provider as BaseProvider
from llm.providers.openai_provider import OpenAIProvider
from llm.services.complete import model_choice_logprobs

MESSAGES = [{"role": "user", "content": "Is the lotus a symbol of purity? Answer Correct or Incorrect."}]
CHOICES = ["Correct", "Incorrect"]


def _provider(fake, db=None):
    config = ModelConfig(
        name="fake", provider=Provider.OPENAI, base_url=fake.base_url, model_id="fake-model", timeout=5.0
    )
    return OpenAIProvider.for_config(config)


def test_it_reads_chosen_logprobs_of_the_first_token(fake_openai):
    fake_openai.top_tokens = lambda body: {"Correct": -0.2, " Incorrect": -1.8, "Correct.": -3.0, "The": -4.0}
    found = _provider(fake_openai).choice_logprobs(MESSAGES, CHOICES)

    assert found == {"Correct": pytest.approx(-0.2), "Incorrect": pytest.approx(-1.8)}
    body = fake_openai.bodies()[-1]
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
    assert body["temperature"] == 0
    assert p_correct(found) == pytest.approx(math.exp(-0.2) / (math.exp(-0.2) + math.exp(-1.8)))


def test_it_matches_tokens_case_sensitively_and_gives_minus_infinity_when_absent(fake_openai):
    fake_openai.top_tokens = lambda body: {"correct": -0.1, "Correct": -2.0}
    found = _provider(fake_openai).choice_logprobs(MESSAGES, CHOICES)
    assert found["Correct"] == pytest.approx(-2.0)
    assert found["Incorrect"] == -math.inf
    assert p_correct(found) == 1.0


def test_it_fails_clearly_when_the_provider_returns_no_logprobs(fake_openai):
    fake_openai.omit_logprobs = True
    with pytest.raises(ClientError, match="returned no log-probabilities"):
        _provider(fake_openai).choice_logprobs(MESSAGES, CHOICES)


def test_it_refuses_p_correct_when_neither_word_was_seen():
    with pytest.raises(ClientError, match="P\\(Correct\\) is undefined"):
        p_correct({"Correct": -math.inf, "Incorrect": -math.inf})
    assert p_correct({"Correct": -0.5, "Incorrect": -0.5}) == pytest.approx(0.5)
    assert p_correct({"Correct": -800.0, "Incorrect": -0.1}) == pytest.approx(0.0, abs=1e-300)


def test_it_refuses_choice_logprobs_on_a_provider_without_them():
    with pytest.raises(ClientError, match="cannot report log-probabilities"):
        BaseProvider().choice_logprobs(MESSAGES, CHOICES)


def test_it_caches_choice_logprobs_so_a_repeat_sends_nothing(fake_openai, fake_openai_model):
    fake_openai.top_tokens = lambda body: {"Correct": -0.3}
    first = model_choice_logprobs(model=fake_openai_model, messages=MESSAGES, choices=CHOICES)
    again = model_choice_logprobs(model=fake_openai_model, messages=MESSAGES, choices=CHOICES)
    assert first == again == {"Correct": pytest.approx(-0.3), "Incorrect": -math.inf}
    assert fake_openai.count == 1


def test_it_reads_smollm2_logits(smollm2):
    provider, _seconds = smollm2
    found = provider.choice_logprobs(MESSAGES, CHOICES)
    assert set(found) == set(CHOICES)
    assert all(math.isfinite(v) and v <= 0 for v in found.values())
    assert sum(math.exp(v) for v in found.values()) <= 1.0
    assert 0.0 <= p_correct(found) <= 1.0
