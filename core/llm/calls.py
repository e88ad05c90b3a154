"""What every LLM call shares: named endpoints, request keys, the retry policy (statuses,
backoff, a capped ``retry-after``), tolerant JSON parsing, call results and their error kinds."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from core.base.errors import UnknownNameError, WorkbenchError
from core.base.files import json_problem
from core.base.settings import env
from core.llm.pricing import LOCAL_HOSTS

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
        return is_local_url(self.base_url)

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


OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


def client_base_url(base_url: str | None) -> str:
    """The ``base_url`` an ``openai.AsyncOpenAI(base_url=base_url)`` reports, without importing
    openai (about a second): parsed and normalised by its HTTP client's ``URL``, a trailing slash
    added to the path, ``$OPENAI_BASE_URL`` and then api.openai.com when None, as the client does
    (``tests/core/test_llm_lazy.py`` compares the two). Part of every cache key.

    >>> client_base_url("HTTP://LocalHost:8000/v1")
    'http://localhost:8000/v1/'
    """
    import httpx2  # the client's URL type (~0.15 s), not the whole client

    url = httpx2.URL(base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL)
    path, separator, query = url.raw_path.partition(b"?")
    return str(url if path.endswith(b"/") else url.copy_with(raw_path=path + b"/" + separator + query))


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


def is_local_url(base_url: str | None) -> bool:
    """Whether ``base_url`` points at this machine (a local endpoint: no key needed, no cost)."""
    return bool(base_url) and (urlparse(base_url).hostname or "") in LOCAL_HOSTS


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
