"""LLM access for judges and methods: client factory, response cache, token and cost accounting.

``make_client`` builds a real :class:`openai.OpenAI` client for any OpenAI-compatible endpoint,
with an explicit timeout and retry count (the client retries 408/409/429/5xx and connection
errors with backoff, honouring ``retry-after``). :class:`LLM` wraps a client and one model:
``complete(messages, response_format=...)`` returns a :class:`Completion` with the text, the
tokens and the cost. Answers are cached in the workspace (``cache/llm.jsonl``), keyed by the
sha256 of (model, messages, schema, temperature, seed), so the same request is never paid twice.
Costs come from :data:`PRICES` (USD per million tokens); the Batch API costs half.
The API key is read from the environment (``core.settings``) and never printed or logged.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import openai

from core.errors import WorkbenchError
from core.files import append_jsonl, read_jsonl_log
from core.settings import env, openai_settings, redact

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
BATCH_DISCOUNT = 0.5

# USD per 1M tokens (input, output), list prices of the standard tier; dated snapshots
# ("gpt-4o-mini-2024-07-18") use the price of their base name.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
}


def price_for(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model``, or None when unknown.

    >>> price_for("gpt-4o-mini-2024-07-18")
    (0.15, 0.6)
    >>> price_for("my-local-model") is None
    True
    """
    if model in PRICES:
        return PRICES[model]
    bases = [name for name in PRICES if model.startswith(name + "-")]
    return PRICES[max(bases, key=len)] if bases else None


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int, *, batch: bool = False) -> float | None:
    """Cost of one call in USD (half price with ``batch``); None when the model has no price.

    >>> cost_usd("gpt-4o-mini", 1_000_000, 1_000_000)
    0.75
    >>> cost_usd("gpt-4o-mini", 1_000_000, 1_000_000, batch=True)
    0.375
    """
    price = price_for(model)
    if price is None:
        return None
    total = (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
    return round(total * (BATCH_DISCOUNT if batch else 1.0), 10)


def _is_local(base_url: str | None) -> bool:
    return bool(base_url) and (urlparse(base_url).hostname or "") in LOCAL_HOSTS


def make_client(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> Any:
    """An ``openai.OpenAI`` client for the configured (or given) OpenAI-compatible endpoint.

    Args:
        base_url: endpoint, default ``$OPENAI_BASE_URL`` (None: api.openai.com).
        api_key: default ``$OPENAI_API_KEY``; a local endpoint (127.0.0.1/localhost) may go without.
        timeout: seconds per request attempt, default ``$WORKBENCH_LLM_TIMEOUT`` or 60.
        max_retries: retries after the first attempt, default ``$WORKBENCH_LLM_MAX_RETRIES`` or 3.

    Raises:
        WorkbenchError: no key for a remote endpoint.
    """

    settings = openai_settings()
    base_url = base_url or settings["base_url"]
    api_key = api_key or settings["api_key"]
    if not api_key:
        if not _is_local(base_url):
            raise WorkbenchError(
                "no API key: set OPENAI_API_KEY (or OPENAI_BASE_URL to a local OpenAI-compatible server)"
            )
        api_key = "local-endpoint-no-key"
    if timeout is None:
        timeout = float(env("WORKBENCH_LLM_TIMEOUT", str(DEFAULT_TIMEOUT)))  # type: ignore[arg-type]
    if max_retries is None:
        max_retries = int(env("WORKBENCH_LLM_MAX_RETRIES", str(DEFAULT_MAX_RETRIES)))  # type: ignore[arg-type]
    return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries)


class BadResponseError(openai.OpenAIError):
    """The endpoint answered status 200 with something that is not a chat completion."""


def describe_error(exc: BaseException) -> str:
    """A one-line description of a failed call (status and message; never a key)."""
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", None) or exc).splitlines()[0] if str(exc) else ""
    kind = type(exc).__name__
    return redact(f"{kind} {status}: {message}" if status else f"{kind}: {message}")


def parse_json_content(content: str | None) -> tuple[Any, str | None]:
    """(parsed JSON, None) or (None, error message) for a model's answer text.

    >>> parse_json_content('{"a": 1}')
    ({'a': 1}, None)
    >>> parse_json_content('{"a": ')[1].startswith('invalid JSON')
    True
    """
    if content is None or not content.strip():
        return None, "empty answer"
    text = content.strip()
    if text.startswith("```"):  # some servers fence JSON even in JSON mode
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"


@dataclass(frozen=True)
class Completion:
    """One model answer: its text, tokens, cost (None = unpriced model) and where it came from."""

    content: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    cached: bool = False
    batch: bool = False

    def usage(self) -> dict[str, Any]:
        """The ``usage`` dict stored with a judgment (cost 0 for a cached answer: nothing paid)."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": 0.0 if self.cached else self.cost_usd,
        }


@dataclass
class UsageTotals:
    """Thread-safe running totals of calls, tokens and cost."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, completion: Completion) -> None:
        """Count one answer (a cached one costs nothing and adds no tokens)."""
        with self._lock:
            if completion.cached:
                self.cached_calls += 1
                return
            self.calls += 1
            self.prompt_tokens += completion.prompt_tokens
            self.completion_tokens += completion.completion_tokens
            if completion.cost_usd is None:
                self.unpriced_calls += 1
            else:
                self.cost_usd += completion.cost_usd

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            return {
                "calls": self.calls,
                "cached_calls": self.cached_calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cost_usd": round(self.cost_usd, 10),
                "unpriced_calls": self.unpriced_calls,
            }


def cache_key(
    model: str, messages: list[dict[str, Any]], schema: Any, temperature: float | None, seed: int | None
) -> str:
    """sha256 of the canonical JSON of everything that determines an answer."""
    blob = json.dumps(
        {"model": model, "messages": messages, "schema": schema, "temperature": temperature, "seed": seed},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers by request hash, kept as an append-only JSONL file (shared by processes)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._entries: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            rows = read_jsonl_log(self.path) if self.path is not None else []
            self._entries = {r["key"]: r for r in rows if isinstance(r.get("key"), str)}
        return self._entries

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key`` or None."""
        with self._lock:
            return self._load().get(key)

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store an answer durably (appended with fsync before the caller goes on)."""
        row = {"key": key, "created_at": datetime.now(UTC).isoformat(timespec="seconds"), **entry}
        with self._lock:
            self._load()[key] = row
            if self.path is not None:
                append_jsonl(self.path, [row])

    def __len__(self) -> int:
        with self._lock:
            return len(self._load())


def workspace_cache(ws: Any) -> ResponseCache:
    """The response cache of workspace ``ws`` (``cache/llm.jsonl``)."""
    return ResponseCache(Path(ws.cache_dir) / "llm.jsonl")


class LLM:
    """One model behind one client, with cache and usage totals.

    Args:
        client: an ``openai.OpenAI`` (or anything with ``chat.completions.create``).
        model: model id sent to the endpoint and used for the price.
        cache: response cache (None: no cache).
        temperature, seed: sampling options sent with every request (None: not sent).
        max_tokens: upper bound on the answer's tokens (None: not sent).
    """

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        cache: ResponseCache | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.client, self.model, self.cache = client, model, cache
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.totals = UsageTotals()

    def request_body(self, messages: list[dict[str, Any]], *, response_format: dict[str, Any] | None = None) -> dict:
        """The chat-completions request body (also one line's ``body`` in a Batch API file)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if response_format is not None:
            body["response_format"] = response_format
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.seed is not None:
            body["seed"] = self.seed
        if self.max_tokens is not None:
            body["max_completion_tokens"] = self.max_tokens
        return body

    def key(self, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None) -> str:
        """The cache key of a request."""
        return cache_key(self.model, messages, response_format, self.temperature, self.seed)

    def cached(self, key: str) -> Completion | None:
        """The cached answer of request ``key`` (see :meth:`key`), or None."""
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is None:
            return None
        prompt_tokens, completion_tokens = int(hit.get("prompt_tokens", 0)), int(hit.get("completion_tokens", 0))
        return Completion(
            hit["content"], self.model, prompt_tokens, completion_tokens,
            cost_usd(self.model, prompt_tokens, completion_tokens), cached=True,
        )

    def complete(
        self, messages: list[dict[str, Any]], *, response_format: dict[str, Any] | None = None
    ) -> Completion:
        """Ask the model (or the cache). Raises the client's ``openai.APIError`` once retries are spent."""
        key = self.key(messages, response_format)
        completion = self.cached(key)
        if completion is None:
            response = self.client.chat.completions.create(**self.request_body(messages, response_format=response_format))
            if not hasattr(response, "model_dump"):  # e.g. an HTML login page answered with status 200
                raise BadResponseError(
                    "the endpoint answered something that is not a chat completion "
                    f"({redact(' '.join(str(response).split()))[:80]!r}); check OPENAI_BASE_URL")
            completion = self.completion_from_body(response.model_dump())
            self._cache(key, completion, json_expected=response_format is not None)
        self.totals.add(completion)
        return completion

    def completion_from_body(self, body: dict[str, Any], *, batch: bool = False) -> Completion:
        """A :class:`Completion` from a chat-completion response body (on-demand or batch output)."""
        choices = body.get("choices") or [{}]
        content = (choices[0].get("message") or {}).get("content") or ""
        usage = body.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
        return Completion(
            content, self.model, prompt_tokens, completion_tokens,
            cost_usd(self.model, prompt_tokens, completion_tokens, batch=batch), batch=batch,
        )

    def record(self, key: str, completion: Completion, *, json_expected: bool = False) -> None:
        """Count and cache an answer obtained outside :meth:`complete` (Batch API output)."""
        if self.cache is not None and self.cache.get(key) is None:
            self._cache(key, completion, json_expected=json_expected)
        self.totals.add(completion)

    def _cache(self, key: str, completion: Completion, *, json_expected: bool) -> None:
        # An answer that should be JSON and is not may be a transient failure: it is not cached,
        # so the next run (``--resume``) asks again instead of replaying the broken answer.
        if self.cache is None or (json_expected and parse_json_content(completion.content)[1] is not None):
            return
        self.cache.put(key, self._cache_entry(completion))

    def _cache_entry(self, completion: Completion) -> dict[str, Any]:
        return {
            "model": self.model,
            "content": completion.content,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "batch": completion.batch,
        }
