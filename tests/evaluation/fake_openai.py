"""A small OpenAI-compatible chat server on loopback, for tests and benchmarks.

Standard library only, so it also runs as a script:

    python tests/evaluation/fake_openai.py --port 8999 --latency-ms 50

In tests::

    with FakeOpenAI(latency_ms=20) as server:
        server.fail(429, times=2)            # the next two requests get 429 + Retry-After: 1
        ... OpenAI(base_url=server.base_url) ...
        assert server.count == 3

Scripted faults are consumed in order, one per request: ``fail(status)``,
``malformed()`` (a 200 whose body is not JSON), ``html()``, ``answer(body)`` (a 200 with any JSON),
``drop()`` (the socket is closed
without a reply), ``no_choices()`` and ``slow(ms)``. Every request is recorded
(path, headers, body, what was done), so a test can assert that no request was
sent twice. ``GET /_stats`` and ``GET /_requests`` expose the same to a process
that runs the server as a script; ``POST /_reset`` clears it.

``max_concurrent`` makes the server a model endpoint with a hard cap: a chat request
arriving while that many are being worked on is refused with 429 (``over_cap="refuse"``,
counted in ``refused``) or waits for a free place (``over_cap="queue"``, counted in
``queued``). A place is freed when the latency has passed, before the reply is written,
so a client that sends its next request on reading a reply never meets a place still taken.

For the artwork pipeline: ``top_tokens`` (a callable of the request body returning
``{token: logprob}``) scripts the first token's ``top_logprobs`` of a one-token request
that asks for log-probabilities; ``omit_logprobs = True`` answers without any, as many
endpoints do; ``image_urls()`` lists the image inputs received. For judges:
``token_alternatives`` scripts each reply token's ``top_logprobs`` (a score's distribution),
``refusal`` answers with the API's refusal field and no content. ``pipeline_reply`` and
``pipeline_top_tokens`` answer the artwork pipeline's prompts plausibly.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import ipaddress
import json
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHAT_PATHS = {"/v1/chat/completions", "/chat/completions"}

# Words a judge prompt of the VIVID protocol uses (Vietnamese and English).
_JUDGE_MARKERS = re.compile(r"điểm|thang điểm|độ tương đồng|score|rate|0\s*[-–]\s*5", re.IGNORECASE)


def message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def default_reply(body: dict) -> str:
    """Deterministic: "4" for a judge-looking prompt, otherwise an echo of the last user message."""
    messages = body.get("messages") or []
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), messages[-1] if messages else {})
    text = message_text(last_user)
    if _JUDGE_MARKERS.search(text):
        return "4"
    words = text.split()
    return "Giải thích: " + " ".join(words[:40]) if words else "Giải thích."


def count_tokens(text: str) -> int:
    # Whitespace words stand in for tokens: what matters is that usage is reported and stable.
    return len(text.split())


def _last_user_text(body: dict) -> str:
    messages = body.get("messages") or []
    return message_text(next((m for m in reversed(messages) if m.get("role") == "user"), {}))


def _first_user_text(body: dict) -> str:
    messages = body.get("messages") or []
    return message_text(next((m for m in messages if m.get("role") == "user"), {}))


def _question(topic: str, n: int, **extra) -> dict:
    return {
        **extra,
        "question": f"What does the {topic} mean here ({n})?",
        "answer": f"The true meaning of {topic}",
        "type": "symbolism" if "subject" in extra else "easy",
        "plausible_answers": [f"Wrong meaning {k} of {topic}" for k in range(1, 6)],
    }


def pipeline_reply(body: dict) -> str:
    """Plausible replies to the artwork pipeline's prompts, recognised by their text."""
    text = _first_user_text(body)
    if "classify them into two categories" in text:
        return 'Here it is: ```json\n{"symbols": {"lotus": "purity"}, "non-symbols": ["water", "sky"]}\n```'
    if "comprehensive cultural and historical background" in text:
        return (
            "The lotus rises clean from muddy water and stands for purity in this tradition. "
            "The painting was made by a scholar who admired quiet ponds."
        )
    if "focus on the cultural symbols" in text:
        symbols = text.rsplit("**Cultural Symbols:**", 1)[1].split("\n", 1)[0]
        names = [name.strip() for name in symbols.split(",") if name.strip()]
        return json.dumps([_question(name, i, subject=name) for i, name in enumerate(names, start=1)])
    if "two easy fact-based multiple-choice questions" in text:
        return json.dumps([_question("scene", 1), _question("colour", 2)])
    if "write an English description of the artwork" in text:
        seed = body.get("seed")
        opening = "A quiet pond." if not seed else f"Sample {seed} shows a pond."
        # 3 + 40 + 40 words: a 75-word limit cuts back to the end of the second sentence.
        return " ".join([opening, " ".join(["lotus"] * 39) + " rises.", " ".join(["water"] * 39) + " shines."])
    if "Correct" in text and "Incorrect" in text:
        return "Correct"
    return default_reply(body)


def pipeline_top_tokens(body: dict) -> dict[str, float]:
    """P(Correct) high for an answer that states the true meaning, low otherwise."""
    text = _last_user_text(body)
    right = "The true meaning of" in text
    return {"Correct": -0.1 if right else -2.5, " Incorrect": -2.5 if right else -0.1, "The": -5.0}


class _Fault:
    __slots__ = ("kind", "status", "message", "retry_after", "ms", "body")

    def __init__(
        self,
        kind: str,
        *,
        status: int | None = None,
        message: str = "",
        retry_after: str | None = None,
        ms: int = 0,
        body=None,
    ):
        self.kind = kind
        self.body = body
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.ms = ms

    def label(self) -> str:
        return f"{self.kind}:{self.status}" if self.status else self.kind


class FakeOpenAI:
    """The server's state and script. Attributes may be changed while it runs."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_ms: float = 0,
        reply: Callable[[dict], str] | None = None,
        fingerprint: str = "fp_fake_0001",
        model: str = "fake-model",
        log_file: str | None = None,
        max_concurrent: int | None = None,
        over_cap: str = "refuse",
    ):
        if over_cap not in ("refuse", "queue"):
            raise ValueError("over_cap is refuse or queue")
        if not ipaddress.ip_address(socket.gethostbyname(host)).is_loopback:
            raise ValueError(f"The fake server listens on loopback only, not {host}.")
        self.host = host
        self.port = port
        self.latency_ms = latency_ms
        self.reply = reply or default_reply
        self.fingerprint = fingerprint
        self.model = model
        self.log_file = log_file
        self.max_concurrent = max_concurrent
        self.over_cap = over_cap
        self.refused = 0
        self.queued = 0
        self._working = 0
        self._place_free = threading.Condition()
        self.requests: list[dict] = []
        self.top_tokens: Callable[[dict], dict[str, float]] | None = None
        self.omit_logprobs = False
        # A judge's score distribution: for each token of the reply (spans that spell it, spaces
        # included, as real tokenizers do), ``token_alternatives(body, token)`` returns the
        # ``{token: logprob}`` of its top alternatives, or None for the default ones.
        self.token_alternatives: Callable[[dict, str], dict[str, float] | None] | None = None
        # Answer with the API's refusal field (and no content), as OpenAI does for a refused request.
        self.refusal: str | None = None
        # Capabilities (for probe_model): a text-only endpoint refuses images with a 400, one without
        # log-probabilities refuses the parameter; ``image_colour`` is what a vision model answers when
        # it sees an image; ``context_length`` goes in the model card (GET /v1/models/{id}) as vLLM's max_model_len.
        self.accepts_images = True
        self.refuse_logprobs = False
        self.image_colour: str | None = None
        self.context_length: int | None = None
        # The checkpoint the model card names as vLLM's ``root``; None leaves it out, as most servers do.
        self.root: str | None = None
        # The prompt tokens reported in ``usage``, from the request body; whitespace words by default.
        self.prompt_tokens: Callable[[dict], int] | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: collections.deque[_Fault] = collections.deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- the script -------------------------------------------------------

    def fail(self, status: int, *, times: int = 1, message: str | None = None, retry_after: str | None = None):
        """Answer the next ``times`` requests with ``status`` (429 sends Retry-After: 1 unless told otherwise)."""
        if status == 429 and retry_after is None:
            retry_after = "1"
        message = message or {429: "Rate limit reached.", 500: "The server had an error."}.get(
            status, f"Error {status}"
        )
        self._script(times, _Fault("status", status=status, message=message, retry_after=retry_after))

    def malformed(self, *, times: int = 1):
        """A 200 with a JSON content type and a body that is not JSON."""
        self._script(times, _Fault("malformed"))

    def html(self, *, times: int = 1):
        """A 200 with an HTML page, as a misconfigured proxy sends."""
        self._script(times, _Fault("html"))

    def no_choices(self, *, times: int = 1):
        """A valid JSON object that is not a chat completion."""
        self._script(times, _Fault("no_choices"))

    def answer(self, body, *, times: int = 1):
        """A 200 with this JSON body, whatever its shape: the dialect of some server or gateway."""
        self._script(times, _Fault("answer", body=body))

    def drop(self, *, times: int = 1):
        """Read the request, then close the socket without a reply."""
        self._script(times, _Fault("drop"))

    def slow(self, ms: int, *, times: int = 1):
        """Add ``ms`` milliseconds to the latency of the next requests (e.g. beyond the client's timeout)."""
        self._script(times, _Fault("slow", ms=ms))

    def _script(self, times: int, fault: _Fault):
        with self._lock:
            self._faults.extend([fault] * times)

    def reset(self):
        with self._lock:
            self.requests.clear()
            self._faults.clear()
            self.max_in_flight = self.in_flight
            self.refused = self.queued = 0

    # -- what was asked ---------------------------------------------------

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Wait until every request has its outcome recorded: the server records it
        after sending the reply, so a client may read the reply first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.in_flight == 0:
                    return
            time.sleep(0.005)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def bodies(self) -> list[dict]:
        with self._lock:
            return [r["body"] for r in self.requests if r["body"] is not None]

    def image_urls(self) -> list[str]:
        """Every image_url part of every user message received, in order."""
        urls = []
        for body in self.bodies():
            for message in body.get("messages") or []:
                content = message.get("content")
                if isinstance(content, list):
                    urls += [
                        (p.get("image_url") or {}).get("url", "")
                        for p in content
                        if isinstance(p, dict) and p.get("type") == "image_url"
                    ]
        return urls

    def duplicates(self) -> list[dict]:
        """Request bodies that arrived more than once and were answered with a completion each time."""
        seen: collections.Counter = collections.Counter()
        with self._lock:
            answered = [r for r in self.requests if r["outcome"] == "ok"]
        for request in answered:
            seen[json.dumps(request["body"], sort_keys=True, ensure_ascii=False)] += 1
        return [json.loads(key) for key, n in seen.items() if n > 1]

    # -- life -------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        server = self

        class Handler(_Handler):
            fake = server

        httpd = _Server((self.host, self.port), Handler)
        self.port = httpd.server_address[1]
        self._httpd = httpd
        # A short poll: stop() waits until serve_forever next looks (tests/loopback.py; this module
        # keeps to the standard library so that it runs as a script).
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.005}, name=f"fake-openai-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self):
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- called by the handler --------------------------------------------

    def _begin(self, record: dict) -> _Fault | None:
        with self._lock:
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._faults.popleft() if self._faults else None

    def _admit(self) -> bool:
        """Take one of the max_concurrent places: False (refuse) or wait (queue) when none is free."""
        if not self.max_concurrent:
            return True
        with self._place_free:
            if self._working >= self.max_concurrent:
                if self.over_cap == "refuse":
                    with self._lock:
                        self.refused += 1
                    return False
                with self._lock:
                    self.queued += 1
                while self._working >= self.max_concurrent:
                    self._place_free.wait()
            self._working += 1
            return True

    def _leave(self) -> None:
        if not self.max_concurrent:
            return
        with self._place_free:
            self._working -= 1
            self._place_free.notify()

    def _end(self, record: dict, outcome: str):
        with self._lock:
            self.in_flight -= 1
            record["outcome"] = outcome
        if self.log_file:
            line = json.dumps({k: record.get(k) for k in ("at", "done", "path", "outcome", "body")}, ensure_ascii=False)
            with self._lock, open(self.log_file, "a", encoding="utf-8") as log:
                log.write(line + "\n")

    @staticmethod
    def has_image(body: dict) -> bool:
        return any(
            isinstance(part, dict) and part.get("type") == "image_url"
            for message in body.get("messages") or []
            if isinstance(message.get("content"), list)
            for part in message["content"]
        )

    def capability_refusal(self, body: dict) -> str | None:
        if not self.accepts_images and self.has_image(body):
            return "This model does not support image input."
        if self.refuse_logprobs and body.get("logprobs"):
            return "logprobs is not supported by this model."
        return None

    def completion_body(self, body: dict) -> dict:
        text = self.image_colour if self.image_colour and self.has_image(body) else self.reply(body)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        words = text.split()
        finish = "stop"
        if max_tokens and len(words) > max_tokens:
            text, finish = " ".join(words[:max_tokens]), "length"
        if self.prompt_tokens is not None:
            prompt_tokens = self.prompt_tokens(body)
        else:
            prompt_tokens = sum(count_tokens(message_text(m)) for m in body.get("messages") or [])
        completion_tokens = count_tokens(text)
        choice: dict = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish,
            "logprobs": None,
        }
        scripted = (
            self.top_tokens(body)
            if self.top_tokens and body.get("logprobs") and max_tokens == 1 and not self.omit_logprobs
            else None
        )
        if scripted:
            ranked = sorted(scripted.items(), key=lambda kv: kv[1], reverse=True)
            n_top = int(body.get("top_logprobs") or 0)
            text = ranked[0][0]
            top = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in ranked[:n_top]]
            choice["message"]["content"] = text
            choice["logprobs"] = {
                "content": [{"token": text, "logprob": ranked[0][1], "bytes": list(text.encode()), "top_logprobs": top}]
            }
        elif body.get("logprobs") and not self.omit_logprobs and self.token_alternatives is not None:
            n_top = int(body.get("top_logprobs") or 0)
            content = []
            for token in re.findall(r"\s*\S+", text):
                scripted_top = self.token_alternatives(body, token) or {token: -0.01}
                ranked = sorted(scripted_top.items(), key=lambda kv: kv[1], reverse=True)
                logprob = scripted_top.get(token, ranked[0][1])
                top = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in ranked[:n_top]]
                content.append({"token": token, "logprob": logprob, "bytes": list(token.encode()), "top_logprobs": top})
            choice["logprobs"] = {"content": content}
        elif body.get("logprobs") and not self.omit_logprobs:
            n_top = int(body.get("top_logprobs") or 0)
            content = []
            for i, word in enumerate(text.split()):
                logprob = -0.05 * (i + 1)
                top = [{"token": word, "logprob": logprob, "bytes": list(word.encode())}]
                top += [{"token": f"{word}~{k}", "logprob": logprob - k, "bytes": None} for k in range(1, n_top)]
                content.append(
                    {"token": word, "logprob": logprob, "bytes": list(word.encode()), "top_logprobs": top[:n_top]}
                )
            choice["logprobs"] = {"content": content}
        if self.refusal is not None:
            choice["message"] = {"role": "assistant", "content": None, "refusal": self.refusal}
            choice["logprobs"] = None
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "system_fingerprint": self.fingerprint,
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The benchmark opens 64+ connections at once; the default backlog of 5 would refuse some.
    request_queue_size = 256
    allow_reuse_address = True


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    # Keep-alive, as real endpoints do: the client's pool reuses connections.
    protocol_version = "HTTP/1.1"

    # Headers and body go out in two writes; with Nagle on, each reply would wait ~40 ms for an ACK.
    disable_nagle_algorithm = True

    def log_message(self, format, *args):
        pass

    def _send_json(self, status: int, payload, headers: dict | None = None):
        data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        fake = self.fake
        if self.path == "/_stats":
            with fake._lock:
                payload = {
                    "requests": len(fake.requests),
                    "in_flight": fake.in_flight,
                    "max_in_flight": fake.max_in_flight,
                    "max_concurrent": fake.max_concurrent,
                    "refused": fake.refused,
                    "queued": fake.queued,
                }
            return self._send_json(200, payload)
        if self.path == "/_requests":
            with fake._lock:
                payload = [{k: r.get(k) for k in ("at", "path", "outcome", "body")} for r in fake.requests]
            return self._send_json(200, payload)
        if self.path in {"/v1/models", "/models"}:
            return self._send_json(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
        if self.path.startswith(("/v1/models/", "/models/")):
            card = {"id": self.path.split("/models/", 1)[1], "object": "model", "owned_by": "fake"}
            if fake.context_length:
                card["max_model_len"] = fake.context_length
            if fake.root:
                card["root"] = fake.root
            return self._send_json(200, card)
        return self._send_json(404, {"error": {"message": f"No route {self.path}", "type": "not_found"}})

    def do_POST(self):
        fake = self.fake
        raw = self._read_body()
        if self.path == "/_reset":
            fake.reset()
            return self._send_json(200, {"ok": True})
        if self.path not in CHAT_PATHS:
            return self._send_json(404, {"error": {"message": f"No route {self.path}", "type": "not_found"}})
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        record = {
            "at": time.time(),
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body,
            "outcome": "pending",
        }
        fault = fake._begin(record)
        outcome = "ok"
        admitted = False
        try:
            admitted = fake._admit()
            if not admitted:
                outcome = "refused"
                return self._send_json(
                    429,
                    {"error": {"message": "Too many concurrent requests.", "type": "rate_limit_exceeded"}},
                    {"Retry-After": "1"},
                )
            delay = fake.latency_ms + (fault.ms if fault and fault.kind == "slow" else 0)
            if delay:
                time.sleep(delay / 1000.0)
            # The place is freed before the reply goes out (see max_concurrent).
            record["done"] = time.time()
            fake._leave()
            admitted = False
            if body is None or not isinstance(body.get("messages"), list) or not body.get("messages"):
                outcome = "invalid"
                return self._send_json(
                    400,
                    {
                        "error": {
                            "message": "'messages' must be a non-empty array.",
                            "type": "invalid_request_error",
                            "param": "messages",
                        }
                    },
                )
            refusal = fake.capability_refusal(body) if fault is None or fault.kind == "slow" else None
            if refusal:
                outcome = "refused_capability"
                return self._send_json(400, {"error": {"message": refusal, "type": "invalid_request_error"}})
            if fault is None or fault.kind == "slow":
                return self._send_json(200, fake.completion_body(body))
            outcome = fault.label()
            if fault.kind == "drop":
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault.kind == "malformed":
                return self._send_json(200, b'{"id": "chatcmpl-broken", "choices": [{"mess')
            if fault.kind == "html":
                page = b"<html><body>502 Bad Gateway</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            if fault.kind == "no_choices":
                return self._send_json(200, {"id": "chatcmpl-empty", "object": "chat.completion"})
            if fault.kind == "answer":
                return self._send_json(200, fault.body)
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            error_type = "invalid_request_error" if fault.status < 500 else "server_error"
            return self._send_json(fault.status, {"error": {"message": fault.message, "type": error_type}}, headers)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up first (its timeout): nothing to answer.
            outcome = "client_gone"
            self.close_connection = True
        finally:
            if admitted:
                fake._leave()
            fake._end(record, outcome)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="OpenAI-compatible fake chat server on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8999)
    parser.add_argument("--latency-ms", type=float, default=0)
    parser.add_argument("--fingerprint", default="fp_fake_0001")
    parser.add_argument("--reply", help="Answer every request with this text instead of the default reply.")
    parser.add_argument("--fail-429", type=int, default=0, metavar="K", help="Answer the first K requests with 429.")
    parser.add_argument("--fail-500", type=int, default=0, metavar="K", help="Answer the first K requests with 500.")
    parser.add_argument("--log", help="Append one JSON line per request to this file.")
    parser.add_argument(
        "--max-concurrent", type=int, default=0, help="Hard cap on chat requests worked on at once (0: none)."
    )
    parser.add_argument(
        "--over-cap", choices=["refuse", "queue"], default="refuse", help="Beyond the cap: 429, or wait for a place."
    )
    parser.add_argument(
        "--max-seconds", type=float, default=3600, help="Stop by itself after this long (0: until interrupted)."
    )
    args = parser.parse_args(argv)

    reply = (lambda body: args.reply) if args.reply is not None else None
    server = FakeOpenAI(
        host=args.host,
        port=args.port,
        latency_ms=args.latency_ms,
        reply=reply,
        fingerprint=args.fingerprint,
        log_file=args.log,
        max_concurrent=args.max_concurrent or None,
        over_cap=args.over_cap,
    )
    if args.fail_429:
        server.fail(429, times=args.fail_429)
    if args.fail_500:
        server.fail(500, times=args.fail_500)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with server:
        print(f"fake OpenAI server on {server.base_url} (latency {args.latency_ms} ms)", flush=True)
        stop.wait(args.max_seconds or None)
    print(f"served {server.count} requests, at most {server.max_in_flight} at once", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
