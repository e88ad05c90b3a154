""":class:`AsyncLLM`: one model on one endpoint, asynchronously, with bounded concurrency, our
retries, an overall deadline per call, a cap on answer size, and the shared response cache."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from core.base.errors import WorkbenchError
from core.base.settings import env, require_writable
from core.jobs.execution import AppendLog, run_sync
from core.llm.cache import ResponseCache, max_answer_bytes
from core.llm.calls import (
    AUTH_STATUSES,
    BACKOFF_BASE,
    BACKOFF_MAX,
    MODEL,
    RETRY_STATUSES,
    AnswerTooLargeError,
    CallResult,
    Endpoint,
    EndpointAuthError,
    LLMCallError,
    _read_capped,
    _retry_after,
    _tokens,
    client_base_url,
    get_endpoint,
    parse_json_content,
    parse_json_loose,
    request_key,
)
from core.llm.client import Completion, UsageTotals, describe_error
from core.llm.pricing import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, cost_usd

R = TypeVar("R")


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
        api_key: the key to send (default: the endpoint's, from the environment).
        max_tokens: upper bound on an answer's tokens (sent as ``max_completion_tokens``; not part
            of the cache key; None: not sent).
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
        api_key: str | None = None,
        max_tokens: int | None = None,
    ) -> None:

        self.model, self.endpoint, self.cache = model, endpoint or get_endpoint(None), cache
        self.timeout = timeout if timeout is not None else float(env("WORKBENCH_LLM_TIMEOUT", str(DEFAULT_TIMEOUT)))  # type: ignore[arg-type]
        self.max_retries = max_retries if max_retries is not None else int(
            env("WORKBENCH_LLM_MAX_RETRIES", str(DEFAULT_MAX_RETRIES)))  # type: ignore[arg-type]
        self.temperature, self.seed, self.price, self.max_tokens = temperature, seed, price, max_tokens
        self.concurrency = max(1, int(concurrency))
        self._semaphore = asyncio.Semaphore(self.concurrency)
        self._own_client = client is None
        if client is None:
            require_writable("call an LLM endpoint")
            self._key = api_key or self.endpoint.api_key()
            if not self._key:
                if not self.endpoint.is_local:
                    raise WorkbenchError(
                        f"no API key for endpoint {self.endpoint.name!r}: set {self.endpoint.key_env} "
                        "(or point OPENAI_BASE_URL at a local OpenAI-compatible server)"
                    )
                self._key = "local-endpoint-no-key"
        self._client = client  # None: made on the first call that reaches the endpoint (openai loads then)
        self._url: str | None = None
        self.totals = UsageTotals()
        self._cache_log = AppendLog(cache.path) if cache is not None and cache.path is not None else None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def client(self) -> Any:
        """The ``openai.AsyncOpenAI`` client: the one given, or one made on first use (a run whose
        calls are all cached, and the pre-flight, never import openai)."""
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def _new_client(self) -> Any:
        import openai  # deferred: heavy optional import (~520 ms), only needed when an endpoint is called

        return openai.AsyncOpenAI(base_url=self.endpoint.base_url, api_key=self._key, timeout=self.timeout,
                                  max_retries=0)

    def _bind(self) -> None:
        """Use the running event loop: the semaphore, the cache's group commit and a client made
        here are bound to one loop, so a later loop (the next :meth:`run_sync`) gets new ones."""
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return
        if self._loop is not None:
            self._unbind()
        self._loop = loop

    def _unbind(self) -> None:
        self._semaphore = asyncio.Semaphore(self.concurrency)
        if self._cache_log is not None:
            self._cache_log = AppendLog(self._cache_log.path)
        if self._own_client:
            self._client = None  # the next call makes a new one, on its loop
        self._loop = None

    def set_concurrency(self, concurrency: int) -> None:
        """At most ``concurrency`` requests in flight from now on (set before the calls start)."""
        self.concurrency = max(1, int(concurrency))
        self._semaphore = asyncio.Semaphore(self.concurrency)

    def run_sync(self, coro: Coroutine[Any, Any, R]) -> R:
        """Run ``coro`` (which uses this LLM) from synchronous code in an event loop of its own; a
        client made here is closed before that loop ends (the next loop gets a new one). For calls
        from one thread at a time; :class:`core.llm.sync.SyncLLM` serves several threads."""
        async def once() -> R:
            try:
                return await coro
            finally:
                await self.release()

        return run_sync(once())

    async def release(self) -> None:
        """End this event loop's use: a client made here is closed (the next loop gets a new one)."""
        if self._own_client:
            await self.aclose()
        self._unbind()

    @property
    def base_url(self) -> str:
        if self._client is None:  # the URL the client will have, without making it (part of every key)
            if self._url is None:
                self._url = client_base_url(self.endpoint.base_url)
            return self._url
        return str(getattr(self._client, "base_url", self.endpoint.base_url or ""))

    def params(self, response_format: dict[str, Any] | None) -> dict[str, Any]:
        """Everything besides model and messages that shapes the answer (part of the cache key)."""
        return {"response_format": response_format, "temperature": self.temperature, "seed": self.seed}

    def key(self, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None) -> str:
        return request_key(self.base_url, self.model, messages, self.params(response_format))

    def request_body(self, messages: list[dict[str, Any]], *,
                     response_format: dict[str, Any] | None = None) -> dict[str, Any]:
        """The chat-completions request body (also one line's ``body`` in a Batch API file)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        body.update((name, value) for name, value in self.params(response_format).items() if value is not None)
        if self.max_tokens is not None:
            body["max_completion_tokens"] = self.max_tokens
        return body

    def cached(self, key: str) -> Completion | None:
        """The cached answer of request ``key`` (see :meth:`key`), or None."""
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is None:
            return None
        prompt_tokens, completion_tokens = _tokens(hit.get("prompt_tokens")), _tokens(hit.get("completion_tokens"))
        return Completion(hit["content"], self.model, prompt_tokens, completion_tokens,
                          cost_usd(self.model, prompt_tokens, completion_tokens, price=self.price), cached=True)

    def completion_from_body(self, body: dict[str, Any], *, batch: bool = False) -> Completion:
        """A :class:`Completion` from a chat-completion response body (a Batch API output line)."""
        content = (((body.get("choices") or [{}])[0] or {}).get("message") or {}).get("content") or ""
        usage = body.get("usage") or {}
        prompt_tokens, completion_tokens = _tokens(usage.get("prompt_tokens")), _tokens(usage.get("completion_tokens"))
        return Completion(content, self.model, prompt_tokens, completion_tokens,
                          cost_usd(self.model, prompt_tokens, completion_tokens, batch=batch, price=self.price),
                          batch=batch)

    def record(self, key: str, completion: Completion, *, json_expected: bool = False) -> None:
        """Count and cache an answer obtained outside :meth:`complete` (Batch API output); an
        answer that should be JSON and is not is not cached (a later run asks again)."""
        if self.cache is not None and self.cache.get(key) is None and not (
                json_expected and parse_json_content(completion.content)[1] is not None):
            self.cache.put(key, {"model": self.model, "base_url": self.base_url, "content": completion.content,
                                 "prompt_tokens": completion.prompt_tokens,
                                 "completion_tokens": completion.completion_tokens, "batch": completion.batch})
        self.totals.add(completion)

    def is_cached(self, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None) -> bool:
        return self.cache is not None and self.cache.get(self.key(messages, response_format)) is not None

    async def check(self) -> None:
        """Fail fast when the endpoint refuses the key (one cheap request: list models).

        Raises:
            EndpointAuthError: 401/403. Other answers (404 on servers without ``/models``) pass.
        """
        import openai  # deferred: heavy optional import (~520 ms), only needed when an endpoint is called

        self._bind()
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
        self, messages: list[dict[str, Any]], *, response_format: dict[str, Any] | None = None,
        strict_json: bool = False,
    ) -> CallResult:
        """Ask the model (or the cache); parse JSON answers tolerantly. With ``strict_json`` an
        answer that is not strict JSON (:func:`parse_json_content`) is not cached: a judge records
        it as a parse error and a resumed run asks again.

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

        self._bind()
        body = self.request_body(messages, response_format=response_format)
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
                return await self._answered(key, data, started, attempt, response_format, strict_json)
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
                        response_format: dict[str, Any] | None, strict_json: bool = False) -> CallResult:
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
        if self.cache is not None and result.parse_error is None and not (
                strict_json and response_format is not None and parse_json_content(content)[1] is not None):
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

        self._bind()
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
        close = getattr(self._client, "close", None)  # none made: nothing to close
        if close is not None:
            await close()
