"""LLM access for judges, methods, gold grading and studies: one client, the response cache,
token and cost accounting.

:class:`AsyncLLM` is the one client: one model on one OpenAI-compatible endpoint, with bounded
concurrency, one retry policy (429/5xx/timeouts/connection errors with jittered backoff, honouring
``retry-after``), an overall deadline per call and a cap on answer size. Runs and the LLM judge
await it in their event loop; :class:`SyncLLM` serves synchronous callers (gold answers and
grading, study responders) from an event loop of its own. Answers are cached in the workspace
(``cache/llm.jsonl``), keyed by the sha256 of (base URL, model, messages, parameters), so the same
request is never paid twice and judges and methods share answers.
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
    parse_json_content,
    parse_json_loose,
    request_key,
)
from core.llm.client import Completion, UsageTotals, describe_error
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
from core.llm.sync import SyncLLM, endpoint_options

__all__ = [
    "AUTH_STATUSES",
    "AnswerTooLargeError",
    "AsyncLLM",
    "BACKOFF_BASE",
    "BACKOFF_MAX",
    "BATCH_DISCOUNT",
    "CallResult",
    "Completion",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_RETRY_AFTER",
    "DEFAULT_TIMEOUT",
    "ERROR_KINDS",
    "Endpoint",
    "EndpointAuthError",
    "GroupCommit",
    "LLMCallError",
    "LOCAL_HOSTS",
    "MODEL",
    "OFFLINE_MODEL",
    "PRICES",
    "RETRY_STATUSES",
    "ResponseCache",
    "SyncLLM",
    "TRANSPORT",
    "UsageTotals",
    "cost_usd",
    "describe_error",
    "endpoint_options",
    "endpoints",
    "env_prices",
    "estimate_tokens",
    "get_endpoint",
    "json_schema_format",
    "max_retry_after",
    "parse_json_content",
    "parse_json_loose",
    "price_for",
    "request_key",
    "workspace_cache",
]
