"""LLM access for judges and methods: client factory, response cache, token and cost accounting.

``make_client`` builds a real :class:`openai.OpenAI` client for any OpenAI-compatible endpoint,
with an explicit timeout and retry count (the client retries 408/409/429/5xx and connection
errors with backoff, honouring ``retry-after``). :class:`LLM` wraps a client and one model:
``complete(messages, response_format=...)`` returns a :class:`Completion` with the text, the
tokens and the cost. Answers are cached in the workspace (``cache/llm.jsonl``), keyed by the
sha256 of (base URL, model, messages, parameters), so the same request is never paid twice; the
async layer below (:class:`AsyncLLM`, used by methods and runs) uses the same keys, so judges and
methods share answers.
Costs come from :data:`PRICES` (USD per million tokens); the Batch API costs half.
The API key is read from the environment (``core.base.settings``) and never printed or logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from core.base.errors import UnknownNameError, WorkbenchError
from core.base.files import json_problem
from core.base.settings import env, openai_settings, redact, require_writable
from core.jobs.execution import AppendLog
from core.llm.cache import GroupCommit as GroupCommit
from core.llm.cache import ResponseCache as ResponseCache
from core.llm.cache import max_answer_bytes
from core.llm.cache import workspace_cache as workspace_cache

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


def env_prices() -> dict[str, tuple[float, float]]:
    """Prices of models without a list price: ``$WORKBENCH_PRICES="my-model=0.2/0.8,other=1/4"``
    (USD per million input / output tokens); malformed items are ignored."""
    out: dict[str, tuple[float, float]] = {}
    for item in (env("WORKBENCH_PRICES") or "").split(","):
        name, _, value = item.strip().partition("=")
        parts = value.split("/")
        try:
            price = tuple(float(p) for p in parts)
        except ValueError:
            continue
        if name and len(price) == 2 and all(math.isfinite(p) and p >= 0 for p in price):
            out[name] = (price[0], price[1])
    return out


def price_for(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model`` (list prices, then ``$WORKBENCH_PRICES``),
    or None when unknown.

    >>> price_for("gpt-4o-mini-2024-07-18")
    (0.15, 0.6)
    >>> price_for("my-local-model") is None
    True
    """
    table = {**PRICES, **env_prices()}
    if model in table:
        return table[model]
    bases = [name for name in table if model.startswith(name + "-")]
    return table[max(bases, key=len)] if bases else None


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int, *, batch: bool = False,
             price: tuple[float, float] | None = None) -> float | None:
    """Cost of one call in USD (half price with ``batch``); None when the model has no price
    (``price`` overrides the model's).

    >>> cost_usd("gpt-4o-mini", 1_000_000, 1_000_000)
    0.75
    >>> cost_usd("gpt-4o-mini", 1_000_000, 1_000_000, batch=True)
    0.375
    >>> cost_usd("mine", 1_000_000, 0, price=(2.0, 8.0))
    2.0
    """
    price = price or price_for(model)
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
        ReadOnlyError: a read-only demo calls no LLM endpoint.
    """
    require_writable("call an LLM endpoint")
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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json_content(content: str | None) -> tuple[Any, str | None]:
    """(parsed JSON, None) or (None, error message) for a model's answer text; ``NaN`` and
    ``Infinity`` are not JSON and make the answer invalid (they would rank as a score otherwise).

    >>> parse_json_content('{"a": 1}')
    ({'a': 1}, None)
    >>> parse_json_content('{"a": ')[1].startswith('invalid JSON')
    True
    >>> parse_json_content('{"risk_score": NaN}')[1]
    'invalid JSON: NaN is not a JSON number'
    """
    if content is None or not content.strip():
        return None, "empty answer"
    text = content.strip()
    if text.startswith("```"):  # some servers fence JSON even in JSON mode
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text, parse_constant=_no_constant), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {json_problem(exc, with_line=True)}"
    except (ValueError, RecursionError) as exc:
        return None, f"invalid JSON: {exc}"


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


# ---------------------------------------------------------------------------------------------
# The async client layer used by methods and runs (and usable by judges): named endpoints,
# bounded concurrency, our own retries (exponential backoff with jitter, honouring retry-after),
# a per-request timeout, structured output with a tolerant parser, the shared response cache.
# ---------------------------------------------------------------------------------------------

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
AUTH_STATUSES = frozenset({401, 403})
BACKOFF_BASE = 0.25  # seconds before the first retry; doubled each attempt, with full jitter
BACKOFF_MAX = 8.0
OFFLINE_MODEL = "heuristic"


TRANSPORT, MODEL = "transport", "model"  # the two kinds of failed sample (ERROR_KINDS)
ERROR_KINDS = (TRANSPORT, MODEL)


class LLMCallError(WorkbenchError):
    """A call that failed for good (retries spent, or an error that is not retried).

    ``kind`` is ``transport`` when no answer arrived (timeouts, connection errors, 429, 5xx, other
    API errors) and ``model`` when one did but cannot be used (e.g. too large).
    """

    def __init__(self, message: str, *, attempts: int = 1, status: int | None = None, kind: str = TRANSPORT) -> None:
        super().__init__(message)
        self.attempts, self.status, self.kind = attempts, status, kind


class EndpointAuthError(LLMCallError):
    """The endpoint refused the key (401/403): every later call would fail the same way."""


@dataclass(frozen=True)
class Endpoint:
    """A named OpenAI-compatible endpoint. The key is read from ``key_env`` when a client is made."""

    name: str
    base_url: str | None
    key_env: str = "OPENAI_API_KEY"

    @property
    def is_local(self) -> bool:
        return _is_local(self.base_url)

    def api_key(self) -> str | None:
        return env(self.key_env)


def endpoints() -> dict[str, Endpoint]:
    """Named endpoints from the environment (values of secrets.toml arrive the same way).

    ``default`` is ``$OPENAI_BASE_URL`` (None: api.openai.com) with ``$OPENAI_API_KEY``;
    ``$WORKBENCH_ENDPOINTS="local=http://127.0.0.1:8000/v1,hosted=https://api.openai.com/v1"``
    adds more, each with its key in ``$WORKBENCH_ENDPOINT_<NAME>_KEY`` (upper case), falling
    back to ``$OPENAI_API_KEY`` when that is unset.
    """
    out = {"default": Endpoint("default", env("OPENAI_BASE_URL"))}
    for item in (env("WORKBENCH_ENDPOINTS") or "").split(","):
        name, _, url = item.strip().partition("=")
        if name and url:
            key_env = f"WORKBENCH_ENDPOINT_{name.upper().replace('-', '_')}_KEY"
            out[name] = Endpoint(name, url.strip(), key_env if env(key_env) else "OPENAI_API_KEY")
    return out


def get_endpoint(name: str | None) -> Endpoint:
    """The endpoint ``name`` (None: default); an unknown name lists the valid ones."""
    table = endpoints()
    if (name or "default") not in table:
        raise UnknownNameError("endpoint", str(name), list(table))
    return table[name or "default"]


def request_key(base_url: str | None, model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """The cache key: sha256 of the canonical JSON of (base URL, model, messages, parameters).

    >>> a = request_key("http://x/v1", "m", [{"role": "user", "content": "hi"}], {"seed": 1})
    >>> a == request_key("http://x/v1", "m", [{"role": "user", "content": "hi"}], {"seed": 1})
    True
    >>> a == request_key("http://y/v1", "m", [{"role": "user", "content": "hi"}], {"seed": 1})
    False
    """
    blob = json.dumps(
        {"base_url": (base_url or "").rstrip("/"), "model": model, "messages": messages, "params": params},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def parse_json_loose(content: str | None) -> tuple[Any, str | None]:
    """Like :func:`parse_json_content`, but tolerant: a fenced block or the first top-level JSON
    object in prose. An object nested inside a truncated one is not an answer: a cut-off answer
    is an error (so it is not cached, and a resumed run asks again).

    >>> parse_json_loose('Sure! ```json\\n{"a": 1}\\n``` done')
    ({'a': 1}, None)
    >>> parse_json_loose('The answer is {"a": {"b": "}"}} as asked')
    ({'a': {'b': '}'}}, None)
    >>> parse_json_loose('no json here')[1]
    'no JSON object in the answer'
    >>> parse_json_loose('{"verdict": "High Risk", "evidences": [{"review_id": "r1"}, {"rev')[1]
    'truncated JSON: the answer ends inside an object'
    """
    parsed, error = parse_json_content(content)
    if error is None or content is None or not content.strip():
        return parsed, error
    fence = re.search(r"```(?:json)?\s*(.*?)```", content, re.S)
    if fence:
        parsed2, error2 = parse_json_content(fence.group(1))
        if error2 is None:
            return parsed2, None
    decoder = json.JSONDecoder(parse_constant=_no_constant)
    start = _next_open(content, 0)
    while start >= 0:
        try:
            obj, _ = decoder.raw_decode(content, start)
        except (json.JSONDecodeError, ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            return obj, None
        end = _block_end(content, start)
        if end is None:
            return None, "truncated JSON: the answer ends inside an object"
        start = _next_open(content, end)
    return None, "no JSON object in the answer"


def _next_open(text: str, pos: int) -> int:
    return text.find("{", pos)


def _block_end(text: str, start: int) -> int | None:
    """Where the bracketed block opening at ``start`` closes (strings skipped), None when the text ends first."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def json_schema_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` argument for a strict JSON schema."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


@dataclass(frozen=True)
class CallResult:
    """One answered call: text, parsed JSON (or the parse error), tokens, cost, latency, origin."""

    content: str
    parsed: Any
    parse_error: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    latency_ms: float
    cached: bool = False
    attempts: int = 1
    offline: bool = False

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": 0 if self.cached else self.prompt_tokens,
            "completion_tokens": 0 if self.cached else self.completion_tokens,
            "cost_usd": 0.0 if self.cached else (self.cost_usd or 0.0),
        }


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A rough prompt size: 4 characters per token plus 4 per message (for pre-flight figures)."""
    return sum(len(str(m.get("content") or "")) // 4 + 4 for m in messages)


DEFAULT_MAX_RETRY_AFTER = 60.0


def max_retry_after() -> float:
    """The longest ``retry-after`` honoured, in seconds: ``$WORKBENCH_LLM_MAX_RETRY_AFTER`` (default 60)."""
    try:
        value = float(env("WORKBENCH_LLM_MAX_RETRY_AFTER") or DEFAULT_MAX_RETRY_AFTER)
    except ValueError:
        return DEFAULT_MAX_RETRY_AFTER
    return value if math.isfinite(value) and value >= 0 else DEFAULT_MAX_RETRY_AFTER


def _retry_after(exc: BaseException) -> float | None:
    """The wait an error response asks for, capped at :func:`max_retry_after` (``inf``, 3600 or a
    date do not stall a run); None when it asks for none or something unreadable.

    >>> class R: headers = {"retry-after": "inf"}
    >>> class E(Exception): response = R()
    >>> _retry_after(E()) == max_retry_after()
    True
    """
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            wait = float(headers["retry-after-ms"]) / 1000
        elif headers.get("retry-after"):
            wait = float(headers["retry-after"])
        else:
            return None
    except (TypeError, ValueError):
        return None
    if math.isnan(wait):
        return None
    return min(max(wait, 0.0), max_retry_after())


def _tokens(value: Any) -> int:
    """A token count from a usage record: a non-negative finite integer, else 0 (an endpoint's
    ``"NaN"`` or ``-5`` must not reach costs).

    >>> _tokens(12), _tokens("7"), _tokens(float("nan")), _tokens(-5), _tokens(None)
    (12, 7, 0, 0, 0)
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return int(number) if math.isfinite(number) and number > 0 else 0


class AnswerTooLargeError(Exception):
    """The endpoint's answer went over :func:`core.llm.cache.max_answer_bytes`."""


async def _read_capped(response: Any, cap: int) -> bytes:
    """The body of a streamed response, refused once it passes ``cap`` bytes."""
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise AnswerTooLargeError(f"the answer is larger than {cap:,} bytes "
                                      "($WORKBENCH_LLM_MAX_ANSWER_BYTES); it was not kept")
        chunks.append(chunk)
    return b"".join(chunks)


class AsyncLLM:
    """One model on one endpoint, asynchronously, with bounded concurrency, retries and the cache.

    Args:
        model: model id (sent to the endpoint, used for the price).
        endpoint: where to send requests (default: the ``default`` endpoint).
        cache: response cache shared with the judges (None: none).
        concurrency: at most this many requests in flight at once (retries included).
        timeout: seconds per attempt; max_retries: retries after the first attempt.
        temperature, seed: sampling parameters (part of the cache key; None: not sent, the model's
            default, which some models require).
        client: an ``openai.AsyncOpenAI`` to use instead of building one.
        price: (input, output) USD per million tokens, for a model without a list price.
    """

    offline = False

    def __init__(
        self,
        model: str,
        *,
        endpoint: Endpoint | None = None,
        cache: ResponseCache | None = None,
        concurrency: int = 8,
        timeout: float | None = None,
        max_retries: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        client: Any = None,
        price: tuple[float, float] | None = None,
    ) -> None:

        self.model, self.endpoint, self.cache = model, endpoint or get_endpoint(None), cache
        self.timeout = timeout if timeout is not None else float(env("WORKBENCH_LLM_TIMEOUT", str(DEFAULT_TIMEOUT)))  # type: ignore[arg-type]
        self.max_retries = max_retries if max_retries is not None else int(
            env("WORKBENCH_LLM_MAX_RETRIES", str(DEFAULT_MAX_RETRIES)))  # type: ignore[arg-type]
        self.temperature, self.seed, self.price = temperature, seed, price
        self.concurrency = max(1, int(concurrency))
        self._semaphore = asyncio.Semaphore(self.concurrency)
        if client is None:
            require_writable("call an LLM endpoint")
            key = self.endpoint.api_key()
            if not key:
                if not self.endpoint.is_local:
                    raise WorkbenchError(
                        f"no API key for endpoint {self.endpoint.name!r}: set {self.endpoint.key_env} "
                        "(or point OPENAI_BASE_URL at a local OpenAI-compatible server)"
                    )
                key = "local-endpoint-no-key"
            import openai  # deferred: heavy optional import (~520 ms), only needed when an endpoint is called

            client = openai.AsyncOpenAI(base_url=self.endpoint.base_url, api_key=key, timeout=self.timeout, max_retries=0)
        self.client = client
        self.totals = UsageTotals()
        self._cache_log = AppendLog(cache.path) if cache is not None and cache.path is not None else None

    @property
    def base_url(self) -> str:
        return str(getattr(self.client, "base_url", self.endpoint.base_url or ""))

    def params(self, response_format: dict[str, Any] | None) -> dict[str, Any]:
        """Everything besides model and messages that shapes the answer (part of the cache key)."""
        return {"response_format": response_format, "temperature": self.temperature, "seed": self.seed}

    def key(self, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None) -> str:
        return request_key(self.base_url, self.model, messages, self.params(response_format))

    def is_cached(self, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None) -> bool:
        return self.cache is not None and self.cache.get(self.key(messages, response_format)) is not None

    async def check(self) -> None:
        """Fail fast when the endpoint refuses the key (one cheap request: list models).

        Raises:
            EndpointAuthError: 401/403. Other answers (404 on servers without ``/models``) pass.
        """
        import openai  # deferred: heavy optional import (~520 ms), only needed when an endpoint is called

        try:
            await self.client.models.list()
        except openai.APIStatusError as exc:
            if exc.status_code in AUTH_STATUSES:
                raise EndpointAuthError(
                    f"endpoint {self.endpoint.name!r} ({self.base_url}) refused the key: {describe_error(exc)}",
                    status=exc.status_code,
                ) from None
        except openai.APIConnectionError as exc:
            raise LLMCallError(f"cannot reach endpoint {self.endpoint.name!r} ({self.base_url}): {describe_error(exc)}") from None

    async def complete(
        self, messages: list[dict[str, Any]], *, response_format: dict[str, Any] | None = None
    ) -> CallResult:
        """Ask the model (or the cache); parse JSON answers tolerantly.

        Raises:
            EndpointAuthError: the key was refused (never retried).
            LLMCallError: retries spent on 429/5xx/timeouts/connection errors, or another API error.
        """

        key = self.key(messages, response_format)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            result = self._result(hit["content"], _tokens(hit.get("prompt_tokens")), _tokens(hit.get("completion_tokens")),
                                  0.0, cached=True, attempts=0, want_json=response_format is not None)
            self.totals.add(Completion(result.content, self.model, result.prompt_tokens, result.completion_tokens,
                                       result.cost_usd, cached=True))
            return result
        import openai  # deferred: heavy optional import (~520 ms), only needed when an endpoint is called

        body: dict[str, Any] = {"model": self.model, "messages": messages}
        for name, value in self.params(response_format).items():
            if value is not None:
                body[name] = value
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                async with self._semaphore:
                    data = await self._post_chat(body)
            except openai.APIStatusError as exc:
                if exc.status_code in AUTH_STATUSES:
                    raise EndpointAuthError(f"endpoint refused the key: {describe_error(exc)}", attempts=attempt,
                                            status=exc.status_code) from None
                if exc.status_code not in RETRY_STATUSES or attempt > self.max_retries:
                    raise LLMCallError(describe_error(exc), attempts=attempt, status=exc.status_code) from None
                wait = _retry_after(exc)
            except (openai.APITimeoutError, openai.APIConnectionError, TimeoutError) as exc:
                if attempt > self.max_retries:
                    what = (f"no complete answer within the {self.timeout:g} s deadline"
                            if isinstance(exc, TimeoutError) else describe_error(exc))
                    raise LLMCallError(what, attempts=attempt) from None
                wait = None
            except AnswerTooLargeError as exc:  # retrying would pay for it again
                raise LLMCallError(str(exc), attempts=attempt, kind=MODEL) from None
            else:
                return await self._answered(key, data, started, attempt, response_format)
            backoff = min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (attempt - 1)) * random.random()  # noqa: S311 - jitter
            await asyncio.sleep(max(wait or 0.0, backoff))

    async def _post_chat(self, body: dict[str, Any]) -> Any:
        """One attempt: the chat completion's JSON, within an overall deadline of ``timeout``
        seconds (not only between bytes: an endpoint dripping bytes is cut off) and at most
        :func:`max_answer_bytes` long."""
        import httpx2  # deferred with openai (its HTTP client), only needed when an endpoint is called

        async with asyncio.timeout(self.timeout):
            # the client's documented raw POST, streamed: the same request, retries and errors as
            # chat.completions.create, without re-walking the (large) schema on every call
            response = await self.client.post("/chat/completions", cast_to=httpx2.Response, body=body,
                                              options={"timeout": self.timeout}, stream=True)
            try:
                raw = await _read_capped(response, max_answer_bytes())
            finally:
                await response.aclose()
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    async def _answered(self, key: str, data: Any, started: float, attempt: int,
                        response_format: dict[str, Any] | None) -> CallResult:
        """The result of an answered call, counted and cached (a parse error is not worth keeping)."""
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            # e.g. an HTML login page answered with status 200: retrying will not help
            raise LLMCallError("the endpoint answered something that is not a chat completion "
                               f"({' '.join(str(data).split())[:60]!r}); check the endpoint's base URL",
                               attempts=attempt)
        latency = (time.perf_counter() - started) * 1000
        choices = data.get("choices") or [{}]
        content = ((choices[0] or {}).get("message") or {}).get("content") or ""
        usage = data.get("usage") or {}
        result = self._result(content, _tokens(usage.get("prompt_tokens")), _tokens(usage.get("completion_tokens")),
                              latency, attempts=attempt, want_json=response_format is not None)
        if self.cache is not None and result.parse_error is None:
            row = self.cache.remember(key, {"model": self.model, "base_url": self.base_url, "content": content,
                                            "prompt_tokens": result.prompt_tokens,
                                            "completion_tokens": result.completion_tokens})
            if row is not None and self._cache_log is not None:
                await self._cache_log.append(row)  # on disk before the answer is used
        self.totals.add(Completion(content, self.model, result.prompt_tokens, result.completion_tokens,
                                   result.cost_usd))
        return result

    def _result(self, content: str, prompt_tokens: int, completion_tokens: int, latency: float, *,
                cached: bool = False, attempts: int = 1, want_json: bool = True) -> CallResult:
        parsed, error = parse_json_loose(content) if want_json else (content, None)
        return CallResult(content, parsed, error, self.model, prompt_tokens, completion_tokens,
                          cost_usd(self.model, prompt_tokens, completion_tokens, price=self.price), latency, cached,
                          attempts)

    async def embed(self, texts: list[str], model: str) -> list[list[float]]:
        """Embeddings of ``texts`` with embedding ``model`` on this endpoint (cached like answers).

        Raises:
            LLMCallError: the call failed for good (retried like a chat call).
        """
        key = request_key(self.base_url, model, [{"role": "embed", "content": t} for t in texts], {"kind": "embeddings"})
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            return [list(v) for v in json.loads(hit["content"])]
        import openai  # deferred: heavy optional import (~520 ms), only needed when an endpoint is called

        attempt = 0
        while True:
            attempt += 1
            try:
                async with self._semaphore:
                    response = await self.client.embeddings.create(model=model, input=texts, timeout=self.timeout)
                break
            except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                if status in AUTH_STATUSES:
                    raise EndpointAuthError(f"endpoint refused the key: {describe_error(exc)}", status=status) from None
                if (status is not None and status not in RETRY_STATUSES) or attempt > self.max_retries:
                    raise LLMCallError(describe_error(exc), attempts=attempt, status=status) from None

                await asyncio.sleep(max(_retry_after(exc) or 0.0, min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (attempt - 1)) * random.random()))  # noqa: S311
        vectors = [list(d.embedding) for d in sorted(response.data, key=lambda d: d.index)]
        usage = getattr(response, "usage", None)
        tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        self.totals.add(Completion("", model, tokens, 0, cost_usd(model, tokens, 0)))
        if self.cache is not None:
            row = self.cache.remember(key, {"model": model, "base_url": self.base_url, "content": json.dumps(vectors),
                                            "prompt_tokens": tokens, "completion_tokens": 0})
            if self._cache_log is not None and row is not None:
                await self._cache_log.append(row)
        return vectors

    async def aclose(self) -> None:
        close = getattr(self.client, "close", None)
        if close is not None:
            await close()
