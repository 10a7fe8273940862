"""Providers: the openai client over real HTTP against the loopback server, and the bundled SmolLM2."""

import email.utils
import hashlib
import json
import time
from pathlib import Path

import pytest

from llm.models import ModelConfig, Provider
from llm.providers import ClientError, RetryableError, provider_for
from llm.providers import openai_provider as openai_module
from llm.providers.openai_provider import OpenAIProvider, parse_retry_after

HELLO = [{"role": "user", "content": "Xin chào"}]


def config_for(server, **overrides) -> ModelConfig:
    fields = {
        "name": "fake",
        "provider": Provider.OPENAI,
        "base_url": server.base_url,
        "model_id": "fake-model",
        "timeout": 5.0,
    }
    fields.update(overrides)
    return ModelConfig(**fields)


def complete(server, messages=HELLO, config=None, **params):
    params = {"temperature": 0.0, "max_tokens": 20, **params}
    return provider_for(config or config_for(server)).complete(messages, **params)


# -- openai, over HTTP ------------------------------------------------------


def test_it_returns_text_usage_fingerprint_and_the_raw_reply(fake_openai):
    fake_openai.reply = lambda body: "Câu này nghĩa là vui mừng."

    completion = complete(fake_openai, [{"role": "system", "content": "Bạn là chuyên gia."}, *HELLO])

    assert completion.text == "Câu này nghĩa là vui mừng."
    assert (completion.tokens_in, completion.tokens_out) == (6, 6)
    assert completion.fingerprint == "fp_fake_0001"
    assert completion.logprobs is None
    assert completion.raw["choices"][0]["message"]["content"] == "Câu này nghĩa là vui mừng."
    assert completion.raw["usage"] == {"prompt_tokens": 6, "completion_tokens": 6, "total_tokens": 12}
    json.dumps(completion.raw)  # the engine caches it as JSON
    assert fake_openai.count == 1
    assert fake_openai.requests[0]["path"] == "/v1/chat/completions"


def test_it_passes_model_messages_temperature_max_tokens_and_seed_through(fake_openai):
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Mô tả bức tranh."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        }
    ]

    complete(fake_openai, messages, temperature=0.7, max_tokens=150, seed=1234)
    complete(fake_openai, temperature=0.0, max_tokens=5)

    first, second = fake_openai.bodies()
    assert first["model"] == "fake-model"
    assert first["messages"] == messages
    assert (first["temperature"], first["max_tokens"], first["seed"]) == (0.7, 150, 1234)
    assert "logprobs" not in first and "top_logprobs" not in first
    assert (second["temperature"], second["max_tokens"]) == (0.0, 5)
    assert "seed" not in second


def test_it_asks_for_and_maps_logprobs(fake_openai):
    fake_openai.reply = lambda body: "4 điểm"

    completion = complete(fake_openai, top_logprobs=3)

    body = fake_openai.bodies()[0]
    assert body["logprobs"] is True and body["top_logprobs"] == 3
    assert [entry["token"] for entry in completion.logprobs] == ["4", "điểm"]
    first = completion.logprobs[0]
    assert first["logprob"] == pytest.approx(-0.05)
    assert [top["token"] for top in first["top"]] == ["4", "4~1", "4~2"]
    assert [top["logprob"] for top in first["top"]] == pytest.approx([-0.05, -1.05, -2.05])


def test_it_turns_429_into_a_retryable_error_with_retry_after(fake_openai):
    fake_openai.fail(429)

    with pytest.raises(RetryableError) as caught:
        complete(fake_openai)

    assert caught.value.status == 429
    assert caught.value.retry_after == 1.0
    assert "Rate limit reached." in str(caught.value)
    # The client itself never retried: the engine decides.
    assert fake_openai.count == 1
    assert complete(fake_openai).text.startswith("Giải thích")


def test_it_reads_retry_after_as_an_http_date(fake_openai):
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    fake_openai.fail(429, retry_after=when)

    with pytest.raises(RetryableError) as caught:
        complete(fake_openai)

    assert 27 <= caught.value.retry_after <= 30
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize("status", [500, 502, 503])
def test_it_turns_5xx_into_a_retryable_error(fake_openai, status):
    fake_openai.fail(status, times=2, message="upstream exploded")

    for _ in range(2):
        with pytest.raises(RetryableError) as caught:
            complete(fake_openai)
        assert caught.value.status == status
        assert caught.value.retry_after is None
        assert "upstream exploded" in str(caught.value)
    assert fake_openai.count == 2


def test_it_turns_a_malformed_body_into_a_retryable_error(fake_openai):
    fake_openai.malformed()
    fake_openai.no_choices()
    fake_openai.html()

    with pytest.raises(RetryableError, match="not valid JSON"):
        complete(fake_openai)
    with pytest.raises(RetryableError, match="no choices"):
        complete(fake_openai)
    with pytest.raises(RetryableError, match="no choices: <html>"):
        complete(fake_openai)
    fake_openai.wait_idle()
    assert [r["outcome"] for r in fake_openai.requests] == ["malformed", "no_choices", "html"]


def test_it_reads_the_replies_of_servers_that_bend_the_format(fake_openai):
    fake_openai.answer({"id": "x", "choices": ["just the text"]})
    fake_openai.answer(
        {
            "choices": [{"message": {"content": None, "refusal": "Tôi không thể giúp."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": "7", "completion_tokens": None},
            "system_fingerprint": None,
            "x_gateway": {"route": "b"},
        }
    )
    fake_openai.answer(
        {
            "choices": [
                {
                    "message": {"content": "4"},
                    "logprobs": {
                        "content": [
                            {"token": "4", "logprob": -0.1, "top_logprobs": [{"token": "4", "logprob": -0.1}, 4]},
                            "4",
                            {"token": ".", "logprob": -0.2, "top_logprobs": 3},
                        ]
                    },
                }
            ],
            "usage": "unknown",
        }
    )

    with pytest.raises(RetryableError, match="no choices: {'id': 'x'"):
        complete(fake_openai)
    refused = complete(fake_openai)
    assert (refused.text, refused.refusal, refused.finish_reason) == ("", "Tôi không thể giúp.", "stop")
    assert (refused.tokens_in, refused.tokens_out, refused.fingerprint) == (7, 0, "")
    assert refused.raw["x_gateway"] == {"route": "b"}  # kept as the server sent it
    scored = complete(fake_openai, top_logprobs=1)
    assert scored.text == "4" and (scored.tokens_in, scored.tokens_out) == (0, 0)
    assert scored.logprobs == [
        {"token": "4", "logprob": -0.1, "top": [{"token": "4", "logprob": -0.1}]},
        {"token": ".", "logprob": -0.2, "top": []},
    ]


def test_it_turns_a_dropped_connection_into_a_retryable_error(fake_openai):
    fake_openai.drop()

    with pytest.raises(RetryableError, match="Connection failed") as caught:
        complete(fake_openai)

    assert caught.value.status is None
    fake_openai.wait_idle()
    assert fake_openai.requests[0]["outcome"] == "drop"
    assert complete(fake_openai).fingerprint == "fp_fake_0001"


def test_it_turns_a_reply_slower_than_the_timeout_into_a_retryable_error(fake_openai):
    fake_openai.slow(1500)
    config = config_for(fake_openai, name="impatient", timeout=0.3)

    started = time.monotonic()
    with pytest.raises(RetryableError, match="Timed out"):
        complete(fake_openai, config=config)

    assert 0.25 <= time.monotonic() - started < 1.4
    assert fake_openai.count == 1


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_it_turns_a_4xx_into_a_client_error_with_the_servers_message(fake_openai, status):
    fake_openai.fail(status, message="This model's maximum context length is 8192 tokens.")

    with pytest.raises(ClientError) as caught:
        complete(fake_openai)

    assert str(caught.value) == "This model's maximum context length is 8192 tokens."
    assert caught.value.status == status
    assert not isinstance(caught.value, RetryableError)


def test_it_rejects_an_empty_message_list_as_a_client_error(fake_openai):
    with pytest.raises(ClientError, match="'messages' must be a non-empty array") as caught:
        complete(fake_openai, [])

    assert caught.value.status == 400


def test_it_names_a_missing_api_key_variable_without_sending_anything(fake_openai, monkeypatch):
    monkeypatch.delenv("VIVID_MODEL_KEY_TEST_MISSING", raising=False)

    with pytest.raises(ClientError, match="VIVID_MODEL_KEY_TEST_MISSING"):
        provider_for(config_for(fake_openai, api_key_env="VIVID_MODEL_KEY_TEST_MISSING"))

    assert fake_openai.count == 0


def test_it_sends_the_key_as_bearer_and_keeps_it_nowhere_else(fake_openai, monkeypatch):
    secret = "sk-test-4f1c9e0b7a2d"
    monkeypatch.setenv("VIVID_MODEL_KEY_TEST", secret)
    config = config_for(fake_openai, api_key_env="VIVID_MODEL_KEY_TEST")

    provider = provider_for(config)
    completion = provider.complete(HELLO, temperature=0, max_tokens=5)

    request = fake_openai.requests[0]
    assert request["headers"]["authorization"] == f"Bearer {secret}"
    assert secret not in json.dumps(request["body"])
    assert secret not in json.dumps(completion.raw) and secret not in repr(completion)
    assert secret not in json.dumps(provider.describe())
    assert secret not in repr(openai_module._CLIENTS.keys())
    assert config.api_key_env == "VIVID_MODEL_KEY_TEST"
    assert all(secret not in str(getattr(config, f.attname)) for f in ModelConfig._meta.concrete_fields)


def test_it_sends_a_placeholder_key_when_no_variable_is_named(fake_openai):
    complete(fake_openai)

    assert fake_openai.requests[0]["headers"]["authorization"] == "Bearer not-needed"


def test_it_reuses_one_client_per_endpoint(fake_openai):
    first = provider_for(config_for(fake_openai))
    second = provider_for(config_for(fake_openai, name="again"))

    assert first.client is second.client
    assert provider_for(config_for(fake_openai, timeout=9)).client is not first.client
    assert first.client.max_retries == 0


def test_it_describes_the_endpoint(fake_openai):
    import openai

    assert provider_for(config_for(fake_openai)).describe() == {
        "provider": "openai",
        "model_id": "fake-model",
        "base_url": fake_openai.base_url + "/",
        "openai_version": openai.__version__,
    }


def test_it_serves_64_concurrent_requests(fake_openai):
    from concurrent.futures import ThreadPoolExecutor

    # A long enough latency that the requests overlap on a loaded machine too; the speed
    # itself is measured by benchmarks/engine.py, not asserted here.
    fake_openai.latency_ms = 500
    provider = OpenAIProvider.for_config(config_for(fake_openai))
    prompts = [[{"role": "user", "content": f"câu {i}"}] for i in range(64)]

    with ThreadPoolExecutor(64) as pool:
        texts = list(pool.map(lambda m: provider.complete(m, temperature=0, max_tokens=10).text, prompts))

    assert texts == [f"Giải thích: câu {i}" for i in range(64)]
    assert fake_openai.count == 64 and fake_openai.duplicates() == []
    # One shared client sends them side by side, not one after another.
    assert fake_openai.max_in_flight >= 16


# -- transformers, on the bundled SmolLM2 -------------------------------------

ENGLISH = [{"role": "user", "content": "What is the capital of France?"}]
VIETNAMESE = [{"role": "user", "content": "Thủ đô của Việt Nam là gì?"}]


def test_it_generates_deterministically_with_smollm2(smollm2):
    provider, _ = smollm2

    english = provider.complete(ENGLISH, temperature=0, max_tokens=8, top_logprobs=3)
    vietnamese = provider.complete(VIETNAMESE, temperature=0, max_tokens=8, top_logprobs=3)

    for completion in (english, vietnamese):
        assert completion.text and "\ufffd" not in completion.text
        assert completion.tokens_in > 10 and 0 < completion.tokens_out <= 8
        assert len(completion.logprobs) == completion.tokens_out
        for entry in completion.logprobs:
            assert entry["logprob"] <= 0
            assert len(entry["top"]) == 3
            # Greedy decoding picks the most likely token.
            assert entry["top"][0]["logprob"] == pytest.approx(entry["logprob"])
            assert entry["top"][0]["logprob"] >= entry["top"][1]["logprob"] >= entry["top"][2]["logprob"]
        assert completion.raw["usage"] == {
            "prompt_tokens": completion.tokens_in,
            "completion_tokens": completion.tokens_out,
        }
        json.dumps(completion.raw)
    assert "Paris" in english.text
    assert english.text != vietnamese.text
    assert provider.complete(ENGLISH, temperature=0, max_tokens=8).text == english.text
    assert provider.complete(VIETNAMESE, temperature=0, max_tokens=8).text == vietnamese.text


def test_it_batches_and_seeds_sampling_with_smollm2(smollm2):
    provider, _ = smollm2

    reported = []
    batch = provider.complete_batch(
        [ENGLISH, VIETNAMESE], temperature=0, max_tokens=8, on_done=lambda i, c: reported.append((i, c))
    )
    # Each reply is handed over once, as it ends, and is the one the batch returns.
    assert sorted(i for i, _ in reported) == [0, 1] and all(batch[i] is c for i, c in reported)
    sampled = provider.complete_batch([ENGLISH, VIETNAMESE], temperature=0.7, max_tokens=8, seed=7)
    again = provider.complete_batch([ENGLISH, VIETNAMESE], temperature=0.7, max_tokens=8, seed=7)

    # Left padding must not change what the shorter prompt produces.
    assert [c.text for c in batch] == [
        provider.complete(m, temperature=0, max_tokens=8).text for m in (ENGLISH, VIETNAMESE)
    ]
    assert [c.tokens_in for c in batch] == [
        provider.complete(m, temperature=0, max_tokens=1).tokens_in for m in (ENGLISH, VIETNAMESE)
    ]
    assert [c.text for c in sampled] == [c.text for c in again]
    assert batch[0].logprobs is None


def test_it_records_the_local_hash_of_smollm2(smollm2):
    provider, _ = smollm2
    described = provider.describe()
    gguf = Path(described["path"]) / described["gguf_file"]

    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()

    assert described["sha256"] == digest
    assert provider.complete(ENGLISH, temperature=0, max_tokens=1).fingerprint == digest
    assert described["provider"] == "transformers" and described["model_id"] == "smollm2-135m"
    assert described["source"] == "gguf" and gguf.suffix == ".gguf"
    import torch
    import transformers

    assert (described["transformers_version"], described["torch_version"]) == (
        transformers.__version__,
        torch.__version__,
    )


def test_it_loads_smollm2_once_per_process_and_then_from_the_disk_cache(smollm2, smollm2_cache_dir):
    from llm.providers.transformers_provider import TransformersProvider, unload_all

    provider, first_load = smollm2
    config = ModelConfig(name="smollm2", provider=Provider.TRANSFORMERS, model_id="smollm2-135m")

    started = time.monotonic()
    again = provider_for(config)
    assert again.loaded is provider.loaded
    assert time.monotonic() - started < 0.5

    converted = [p for p in smollm2_cache_dir.glob("smollm2-135m-*") if (p / "vivid-source.json").exists()]
    assert len(converted) == 1 and (converted[0] / "model.safetensors").exists()
    expected = provider.complete(ENGLISH, temperature=0, max_tokens=6).text

    before = provider.loaded
    unload_all()
    started = time.monotonic()
    reloaded = TransformersProvider("smollm2-135m").loaded
    cached_load = time.monotonic() - started

    assert reloaded is not before
    assert not reloaded.converted
    assert cached_load < 10
    assert provider.complete(ENGLISH, temperature=0, max_tokens=6).text == expected
    print(f"\nsmollm2: first load {first_load:.1f} s, load from the disk cache {cached_load:.2f} s")


def test_it_refuses_images_for_a_local_text_model(smollm2):
    provider, _ = smollm2
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Mô tả bức tranh."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        }
    ]

    with pytest.raises(ClientError, match="image"):
        provider.complete(messages, temperature=0, max_tokens=4)
    text_parts = [{"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}]
    assert (
        provider.complete(text_parts, temperature=0, max_tokens=8).text
        == provider.complete(ENGLISH, temperature=0, max_tokens=8).text
    )


def test_it_fails_a_missing_local_path_as_a_client_error():
    from llm.providers.transformers_provider import TransformersProvider

    with pytest.raises(ClientError, match="No model at /nonexistent/model"):
        TransformersProvider("/nonexistent/model")


def test_it_hands_over_each_row_of_a_batch_at_the_step_its_reply_ends():
    torch = pytest.importorskip("torch")
    from llm.providers.transformers_provider import _RowsDone

    ended = []
    watcher = _RowsDone(
        prompt_width=2, max_tokens=4, stops={0}, on_row=lambda row, ids: ended.append((row, ids.shape[1]))
    )
    # Row 0 ends with the stop token at its second step, row 1 runs to max_tokens, row 2 stops at once.
    steps = [[5, 7, 0], [0, 8, 0], [0, 9, 0], [0, 6, 0]]
    ids = torch.tensor([[1, 2], [1, 2], [1, 2]])
    for step in steps:
        ids = torch.cat([ids, torch.tensor(step)[:, None]], dim=1)
        assert not watcher(ids, None).any()  # it stops nothing itself
    assert ended == [(2, 3), (0, 4), (1, 6)]
