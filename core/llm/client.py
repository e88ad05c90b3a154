"""The synchronous client of the judges: :func:`make_client` (a real :class:`openai.OpenAI` for
any OpenAI-compatible endpoint), :class:`LLM` (one model, cached answers, tokens and cost)."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from core.base.errors import WorkbenchError
from core.base.settings import env, openai_settings, redact, require_writable
from core.llm.cache import ResponseCache
from core.llm.calls import is_local_url, parse_json_content, request_key
from core.llm.pricing import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, cost_usd


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
        ReadOnlyError: a read-only demo calls no LLM endpoint.
    """
    require_writable("call an LLM endpoint")
    settings = openai_settings()
    base_url = base_url or settings["base_url"]
    api_key = api_key or settings["api_key"]
    if not api_key:
        if not is_local_url(base_url):
            raise WorkbenchError(
                "no API key: set OPENAI_API_KEY (or OPENAI_BASE_URL to a local OpenAI-compatible server)"
            )
        api_key = "local-endpoint-no-key"
    if timeout is None:
        timeout = float(env("WORKBENCH_LLM_TIMEOUT", str(DEFAULT_TIMEOUT)))  # type: ignore[arg-type]
    if max_retries is None:
        max_retries = int(env("WORKBENCH_LLM_MAX_RETRIES", str(DEFAULT_MAX_RETRIES)))  # type: ignore[arg-type]
    import openai  # deferred: heavy optional import (~520 ms), only needed when an endpoint is called

    return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries)


class BadResponseError(Exception):
    """The endpoint answered status 200 with something that is not a chat completion.

    Not an ``openai.OpenAIError`` (that would import openai with this module); callers that
    record a failed call catch both (:class:`core.judgments.judges.openai_judge.OpenAIJudge`).
    """


def describe_error(exc: BaseException) -> str:
    """A one-line description of a failed call (status and message; never a key)."""
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", None) or exc).splitlines()[0] if str(exc) else ""
    kind = type(exc).__name__
    return redact(f"{kind} {status}: {message}" if status else f"{kind}: {message}")


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
        """The cache key of a request: the same as :meth:`AsyncLLM.key` for the same endpoint, so
        judges and methods share answers (e.g. amos's extractions and the openai judge's)."""
        params = {"response_format": response_format, "temperature": self.temperature, "seed": self.seed}
        return request_key(str(getattr(self.client, "base_url", "") or ""), self.model, messages, params)

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
