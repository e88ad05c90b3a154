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

from core.llm.async_client import (
    AsyncLLM,
)
from core.llm.cache import GroupCommit, ResponseCache, workspace_cache
from core.llm.calls import (
    AUTH_STATUSES,
    BACKOFF_BASE,
    BACKOFF_MAX,
    DEFAULT_MAX_RETRY_AFTER,
    ERROR_KINDS,
    MODEL,
    OFFLINE_MODEL,
    RETRY_STATUSES,
    TRANSPORT,
    AnswerTooLargeError,
    CallResult,
    Endpoint,
    EndpointAuthError,
    LLMCallError,
    endpoints,
    estimate_tokens,
    get_endpoint,
    json_schema_format,
    max_retry_after,
    parse_json_loose,
    request_key,
)
from core.llm.client import (
    LLM,
    BadResponseError,
    Completion,
    UsageTotals,
    cache_key,
    describe_error,
    make_client,
    parse_json_content,
)
from core.llm.pricing import (
    BATCH_DISCOUNT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    LOCAL_HOSTS,
    PRICES,
    cost_usd,
    env_prices,
    price_for,
)

__all__ = [
    "AUTH_STATUSES",
    "AnswerTooLargeError",
    "AsyncLLM",
    "BACKOFF_BASE",
    "BACKOFF_MAX",
    "BATCH_DISCOUNT",
    "BadResponseError",
    "CallResult",
    "Completion",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_RETRY_AFTER",
    "DEFAULT_TIMEOUT",
    "ERROR_KINDS",
    "Endpoint",
    "EndpointAuthError",
    "GroupCommit",
    "LLM",
    "LLMCallError",
    "LOCAL_HOSTS",
    "MODEL",
    "OFFLINE_MODEL",
    "PRICES",
    "RETRY_STATUSES",
    "ResponseCache",
    "TRANSPORT",
    "UsageTotals",
    "cache_key",
    "cost_usd",
    "describe_error",
    "endpoints",
    "env_prices",
    "estimate_tokens",
    "get_endpoint",
    "json_schema_format",
    "make_client",
    "max_retry_after",
    "parse_json_content",
    "parse_json_loose",
    "price_for",
    "request_key",
    "workspace_cache",
]
