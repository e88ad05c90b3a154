"""A local OpenAI-compatible HTTP server for tests (no internet, no key).

It speaks enough of the API for the real ``openai`` client: chat completions (with
``response_format`` json_schema), embeddings (:func:`word_hash_embedding`, a deterministic
bag-of-words vector), file upload and download, and batches. Answers come from a
pluggable *responder*; faults are scripted per review key (429 with retry-after, 500, a delay
longer than the client timeout, any raw content such as invalid JSON, or one field patched to an
out-of-enum value). Every chat request is counted per review key, parsed from the prompt with
``key_pattern`` (default: the ``Review ID: ...`` line the judges write): ``requests_by_key`` counts
arrivals, ``answered_by_key`` answers delivered to a client still listening (a killed client's
request is asked but never answered), so a test can assert that a resumed run repeated nothing.
``heuristic_responder`` answers G1a judging prompts like heuristic-v1 (a deterministic model);
``offline_responder`` answers every method prompt like the offline ``heuristic`` model (count
requests per restaurant with ``key_pattern=RUN_KEY_PATTERN``).

Modes: ``delay_all = 0.2`` (latency mode), ``fault_rate = 0.3`` (faulty mode: a random 429, 500,
timeout, invalid JSON or out-of-contract answer), ``required_key`` (any other key gets 401).
``in_flight`` / ``max_in_flight`` count concurrent chat requests; ``/v1/models``,
``/v1/embeddings`` (hashed bag-of-words vectors) and ``/v1/_stats`` are served too;
``python -m tests.helpers.llm_server 0.2`` runs one in its own process (bench/runs.py).

Use the ``llm_server`` fixture (import it into a test module or a conftest), or the class directly::

    with LLMServer(responder) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import random
import re
import select
import socket
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.loopback_server import LoopbackServer

Responder = Callable[[dict[str, Any], "str | None"], "str | dict[str, Any]"]


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour, used for one request.

    kind: ``status`` (answer ``status`` with an error body, optional ``retry-after-ms`` or a raw
    ``retry-after`` header such as ``"inf"`` or ``"3600"``), ``delay`` (sleep ``seconds`` before
    answering normally), ``content`` (answer ``content`` verbatim as the message), ``patch`` (the
    responder's answer with ``field`` set to ``value``), ``drip`` (the normal answer, one byte
    every ``seconds``: a server that never times out between bytes).
    """

    kind: str
    status: int = 0
    retry_after_ms: int | None = None
    retry_after: str | None = None
    seconds: float = 0.0
    content: str = ""
    field: str = ""
    value: Any = None


def rate_limited(retry_after_ms: int = 20) -> Fault:
    """A 429 with a ``retry-after-ms`` header."""
    return Fault("status", status=429, retry_after_ms=retry_after_ms)


def retry_after(value: str, status: int = 429) -> Fault:
    """A 429 with a raw ``retry-after`` header (``"inf"``, ``"3600"``)."""
    return Fault("status", status=status, retry_after=value)


def drip(seconds_per_byte: float) -> Fault:
    """The normal answer sent one byte every ``seconds_per_byte`` (a stalling endpoint)."""
    return Fault("drip", seconds=seconds_per_byte)


def huge_answer(n_bytes: int) -> Fault:
    """An answer of ``n_bytes`` bytes of content (an endpoint filling memory and disk)."""
    return Fault("content", content='{"verdict": "Low Risk", "padding": "' + "x" * n_bytes + '"}')


def server_error(status: int = 500) -> Fault:
    """An internal server error (retried by the client)."""
    return Fault("status", status=status)


def slow(seconds: float) -> Fault:
    """Answer only after ``seconds`` (longer than the client timeout: a timeout)."""
    return Fault("delay", seconds=seconds)


def raw_content(text: str) -> Fault:
    """Answer ``text`` as the message content (e.g. invalid JSON)."""
    return Fault("content", content=text)


def patched(field: str, value: Any) -> Fault:
    """The normal answer with ``field`` replaced by ``value`` (e.g. an out-of-enum value)."""
    return Fault("patch", field=field, value=value)


def schema_default_answer(request: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    """A responder: the first enum value of every schema property, "" for free strings."""
    schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    answer: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if prop.get("enum"):
            answer[name] = prop["enum"][0]
        elif prop.get("type") in ("number", "integer"):
            answer[name] = 0
        elif prop.get("type") == "boolean":
            answer[name] = False
        else:
            answer[name] = ""
    return answer


def review_text_in_prompt(request: dict[str, Any]) -> str:
    """The review text a judging prompt quotes (between triple quotes), or the whole last message."""
    prompt = request["messages"][-1]["content"]
    match = re.search(r'"""\n(.*)\n"""', prompt, re.S)
    return match.group(1) if match else prompt


def heuristic_responder(request: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    """A deterministic stand-in G1a model: heuristic-v1's answer for the review in the prompt."""
    from core.judgments.judges.heuristic import judge_text

    fields, excerpt, _ = judge_text(review_text_in_prompt(request))
    return {**fields, "excerpt": excerpt}


EMBEDDING_DIM = 64


def word_hash_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic embedding: lower-cased words counted into ``dim`` buckets by sha256."""
    import hashlib

    vector = [0.0] * dim
    for word in text.lower().split():
        vector[int(hashlib.sha256(word.encode("utf-8")).hexdigest(), 16) % dim] += 1.0
    return vector


def offline_responder(request: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    """A deterministic stand-in for every method prompt: the offline heuristic model's answer."""
    from core.methods.offline import answer_for

    return answer_for(request["messages"], request.get("response_format"))


RUN_KEY_PATTERN = r"(?:Restaurant ID|Review ID): (\S+)"  # a restaurant prompt, else an amos extraction


def _words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(v.get("text", "")) if isinstance(v, dict) else _words(v) for v in value)
    return 0


class LLMServer(LoopbackServer):
    """The server: start it, point a client at ``base_url``, read the counters."""

    thread_name = "llm-server"

    def __init__(self, responder: Responder | None = None, *, key_pattern: str = r"Review ID: (\S+)") -> None:
        self.responder: Responder = responder or schema_default_answer
        self.key_pattern = re.compile(key_pattern)
        self.requests_by_key: Counter[str] = Counter()  # every chat request that arrived (on-demand or batch)
        self.answered_by_key: Counter[str] = Counter()  # 200 answers delivered to a client still listening
        self.batch_requests_by_key: Counter[str] = Counter()
        self.last_request: dict[str, dict[str, Any]] = {}  # the last request body per review key
        self.log: list[dict[str, Any]] = []  # {key, status, via}
        self.delay_all = 0.0  # seconds added to every on-demand chat request (latency mode: 0.2)
        self.gate = threading.Event()  # chat answers wait while it is clear (``close_gate``/``open_gate``)
        self.gate.set()
        self.fault_rate = 0.0  # faulty mode: this share of chat requests gets a random fault (random_fault)
        self.fault_timeout = 2.0  # seconds a "timeout" fault of the faulty mode sleeps
        self.required_key: str | None = None  # when set, any other bearer key gets 401
        self.in_flight = 0  # chat requests being answered right now
        self.max_in_flight = 0  # the most ever in flight at once
        self.chat_requests = 0  # every chat request that arrived
        self.first_request_at = 0.0  # wall clock (time.time) of the first chat request, 0 before
        self.last_answer_at = 0.0  # wall clock of the latest chat answer sent
        self.embedding_requests = 0  # every embeddings request
        self._rng = random.Random(0)
        self.batch_polls_before_done = 1  # retrieves that still say in_progress
        self.embedding_inputs: list[str] = []  # every text sent to /v1/embeddings
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._faults: dict[str | None, deque[Fault]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()

    # lifecycle (LoopbackServer)
    def handler(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"server_state": self})

    def stop(self) -> None:
        self._stopping.set()  # delayed answers stop waiting
        super().stop()

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    # scripting
    def close_gate(self) -> None:
        """Hold every chat answer until :meth:`open_gate` (a run kept "running" for as long as a test needs)."""
        self.gate.clear()

    def open_gate(self) -> None:
        self.gate.set()

    def add_faults(self, key: str | None, *faults: Fault) -> None:
        """Queue ``faults`` for the next requests of review ``key`` (None: of any request)."""
        with self._lock:
            self._faults[key].extend(faults)

    def repeated_keys(self, *, answered: bool = False) -> dict[str, int]:
        """Review keys asked more than once (``answered``: answered more than once), with their counts.

        A request whose client was gone (killed) before the answer was ready is counted as asked,
        not as answered: nobody received (or paid for) that answer.
        """
        counter = self.answered_by_key if answered else self.requests_by_key
        with self._lock:
            return {k: n for k, n in counter.items() if n > 1}

    def count_answered(self, key: str | None, via: str) -> None:
        """Record that a 200 answer for ``key`` reached its client."""
        if key is not None:
            with self._lock:
                self.answered_by_key[key] += 1

    def _next_fault(self, key: str | None) -> Fault | None:
        with self._lock:
            for k in (key, None):  # faults scripted for this review first, then for any request
                if self._faults.get(k):
                    return self._faults[k].popleft()
            if self.fault_rate and self._rng.random() < self.fault_rate:
                return self.random_fault()
        return None

    def random_fault(self) -> Fault:
        """One fault of the faulty mode: 429, 500, a timeout, invalid JSON or an out-of-contract answer."""
        kind = self._rng.choice(("429", "500", "timeout", "invalid_json", "out_of_contract"))
        if kind == "429":
            return rate_limited(20)
        if kind == "500":
            return server_error(500)
        if kind == "timeout":
            return slow(self.fault_timeout)
        if kind == "invalid_json":
            return raw_content('{"verdict": "High Risk", "evidences": [')
        return raw_content('{"verdict": "Somewhat risky", "risk_score": "high", "evidences": "none"}')

    def authorized(self, header: str | None) -> bool:
        return self.required_key is None or header == f"Bearer {self.required_key}"

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.chat_requests += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.first_request_at = self.first_request_at or time.time()

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1
            self.last_answer_at = time.time()

    def _key_of(self, body: dict[str, Any]) -> str | None:
        for message in body.get("messages") or []:
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            match = self.key_pattern.search(text or "")
            if match:
                return match.group(1)
        return None

    # chat
    def answer_chat(self, body: dict[str, Any], *, via: str) -> tuple[int, dict[str, str], dict[str, Any], float]:
        """(status, headers, json body, delay seconds) for one chat completion request."""
        key = self._key_of(body)
        fault = self._next_fault(key)
        with self._lock:
            if key is not None:
                self.requests_by_key[key] += 1
                self.last_request[key] = body
                if via == "batch":
                    self.batch_requests_by_key[key] += 1
        delay = self.delay_all if via == "ondemand" else 0.0
        if fault is not None and fault.kind == "status":
            headers = {"retry-after-ms": str(fault.retry_after_ms)} if fault.retry_after_ms is not None else {}
            if fault.retry_after is not None:
                headers["retry-after"] = fault.retry_after
            error = {"error": {"message": f"scripted {fault.status}", "type": "server_error", "code": None}}
            self._record(key, fault.status, via)
            return fault.status, headers, error, delay
        if fault is not None and fault.kind == "delay":
            delay += fault.seconds
        if fault is not None and fault.kind == "content":
            content = fault.content
        else:
            answer = self.responder(body, key)
            if fault is not None and fault.kind == "patch":
                answer = dict(answer) if isinstance(answer, dict) else json.loads(answer)
                answer[fault.field] = fault.value
            content = answer if isinstance(answer, str) else json.dumps(answer)
        self._record(key, 200, via)
        headers = {"x-drip": str(fault.seconds)} if fault is not None and fault.kind == "drip" else {}
        return 200, headers, self._completion(body, content), delay

    def _record(self, key: str | None, status: int, via: str) -> None:
        with self._lock:
            self.log.append({"key": key, "status": status, "via": via})

    def _completion(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        prompt_tokens = sum(_words(m.get("content")) for m in body.get("messages") or [])
        completion_tokens = len(content.split())
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    # files and batches
    def add_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{next(self._ids)}"
        meta = {
            "id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
            "filename": filename, "purpose": purpose, "status": "processed",
        }
        with self._lock:
            self.files[file_id] = {"meta": meta, "data": data}
        return meta

    def create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("input_file_id") not in self.files:
            raise KeyError(body.get("input_file_id"))
        batch_id = f"batch_{next(self._ids)}"
        batch = {
            "id": batch_id, "object": "batch", "endpoint": body.get("endpoint"), "errors": None,
            "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window", "24h"),
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": int(time.time()), "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"), "_polls": 0,
        }
        with self._lock:
            self.batches[batch_id] = batch
        return _public(batch)

    def retrieve_batch(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        if batch["status"] not in ("completed", "failed"):
            batch["_polls"] += 1
            if batch["_polls"] > self.batch_polls_before_done:
                self._run_batch(batch)
            else:
                batch["status"] = "in_progress"
                batch["in_progress_at"] = int(time.time())
        return _public(batch)

    def _run_batch(self, batch: dict[str, Any]) -> None:
        lines = self.files[batch["input_file_id"]]["data"].decode("utf-8").splitlines()
        outputs, errors = [], []
        for line in filter(None, (ln.strip() for ln in lines)):
            request = json.loads(line)
            status, _headers, payload, _delay = self.answer_chat(request["body"], via="batch")
            if status == 200:
                self.count_answered(self._key_of(request["body"]), "batch")
            record = {
                "id": f"batch_req_{next(self._ids)}", "custom_id": request["custom_id"],
                "response": {"status_code": status, "request_id": f"req_{next(self._ids)}", "body": payload},
                "error": None,
            }
            (outputs if status == 200 else errors).append(record)
        batch["request_counts"] = {"total": len(outputs) + len(errors), "completed": len(outputs), "failed": len(errors)}
        if outputs:
            out = "".join(json.dumps(r) + "\n" for r in outputs).encode()
            batch["output_file_id"] = self.add_file(out, "batch_output.jsonl", "batch_output")["id"]
        if errors:
            err = "".join(json.dumps(r) + "\n" for r in errors).encode()
            batch["error_file_id"] = self.add_file(err, "batch_errors.jsonl", "batch_output")["id"]
        batch["status"] = "completed"
        batch["completed_at"] = int(time.time())


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


def _parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    raw = f"Content-Type: {content_type}\r\n\r\n".encode() + body
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
    parts: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        parts[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
    return parts


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_state: LLMServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        return

    def _client_gone(self) -> bool:
        """True when the client closed the connection while we were delaying the answer."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and not self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None, raw: bytes | None = None) -> bool:
        data = raw if raw is not None else json.dumps(payload).encode("utf-8")
        headers = dict(headers or {})
        drip_every = float(headers.pop("x-drip", 0) or 0)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream" if raw is not None else "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if drip_every:
                for i in range(len(data)):
                    if self.server_state._stopping.wait(drip_every):
                        return False
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                return True
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False  # the client gave up (timeout); nothing to answer

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        state = self.server_state
        body = self._body()
        if not state.authorized(self.headers.get("Authorization")):
            self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                       "code": "invalid_api_key"}})
            return
        if self.path.startswith("/v1/chat/completions"):
            request = json.loads(body or b"{}")
            state.enter()
            try:
                status, headers, payload, delay = state.answer_chat(request, via="ondemand")
                while not state.gate.wait(0.1):
                    if state._stopping.is_set():
                        return
                if delay and state._stopping.wait(delay):
                    return
                if delay and self._client_gone():
                    return  # the client timed out or was killed: this answer reaches nobody
                if self._send(status, payload, headers) and status == 200:
                    state.count_answered(state._key_of(request), "ondemand")
            finally:
                state.leave()
        elif self.path.startswith("/v1/embeddings"):
            request = json.loads(body or b"{}")
            texts = request.get("input") or []
            texts = [texts] if isinstance(texts, str) else texts
            with state._lock:
                state.embedding_inputs.extend(str(t) for t in texts)
                state.embedding_requests += 1
            data = [{"object": "embedding", "index": i, "embedding": word_hash_embedding(str(t))}
                    for i, t in enumerate(texts)]
            tokens = sum(len(str(t).split()) for t in texts)
            self._send(200, {"object": "list", "data": data, "model": request.get("model", "test-embedding"),
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
        elif self.path.startswith("/v1/files"):
            parts = _parse_multipart(self.headers.get("Content-Type", ""), body)
            filename, data = parts.get("file", (None, b""))
            purpose = parts.get("purpose", (None, b"batch"))[1].decode()
            self._send(200, state.add_file(data, filename or "upload.jsonl", purpose))
        elif self.path.startswith("/v1/batches"):
            try:
                self._send(200, state.create_batch(json.loads(body or b"{}")))
            except KeyError as exc:
                self._send(404, {"error": {"message": f"no such file {exc}", "type": "invalid_request_error"}})
        else:
            self._send(404, {"error": {"message": f"unknown path {self.path}", "type": "invalid_request_error"}})

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        state = self.server_state
        if not state.authorized(self.headers.get("Authorization")):
            self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                       "code": "invalid_api_key"}})
            return
        if self.path.rstrip("/") == "/v1/_stats":  # counters for a client in another process (bench)
            self._send(200, {"chat_requests": state.chat_requests, "max_in_flight": state.max_in_flight,
                             "first_request_at": state.first_request_at, "last_answer_at": state.last_answer_at})
            return
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "test-model", "object": "model", "created": 0,
                                                          "owned_by": "test"}]})
            return
        match_content = re.fullmatch(r"/v1/files/([^/]+)/content", self.path)
        match_file = re.fullmatch(r"/v1/files/([^/]+)", self.path)
        match_batch = re.fullmatch(r"/v1/batches/([^/]+)", self.path)
        if match_content and match_content.group(1) in state.files:
            self._send(200, None, raw=state.files[match_content.group(1)]["data"])
        elif match_file and match_file.group(1) in state.files:
            self._send(200, state.files[match_file.group(1)]["meta"])
        elif match_batch and match_batch.group(1) in state.batches:
            self._send(200, state.retrieve_batch(match_batch.group(1)))
        else:
            self._send(404, {"error": {"message": f"not found: {self.path}", "type": "invalid_request_error"}})


def serve_forever(latency: float = 0.0, mode: str = "runs") -> None:
    """Run a server in this process and print its base URL: ``runs`` answers method prompts with the
    offline responder (bench/runs.py), ``judge`` answers G1a judging prompts like heuristic-v1
    (bench/judge_endpoint.py)."""
    if mode == "judge":
        server = LLMServer(heuristic_responder).start()
    else:
        import core.methods.offline  # noqa: F401 - load the responder's code before the first request

        server = LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN).start()
    server.delay_all = latency
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    finally:
        server.stop()


if __name__ == "__main__":
    import sys

    serve_forever(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0, sys.argv[2] if len(sys.argv) > 2 else "runs")


@pytest.fixture()
def llm_server() -> Iterator[LLMServer]:
    """A started :class:`LLMServer` on 127.0.0.1 (random port), stopped after the test."""
    server = LLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def run_server(monkeypatch) -> Iterator[LLMServer]:
    """An offline-answering server that method runs reach through ``OPENAI_BASE_URL``."""
    with LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        yield srv
