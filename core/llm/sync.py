""":class:`SyncLLM`: :class:`core.llm.AsyncLLM` from synchronous code (gold answers and grading,
study responders), with the one client, retry policy and cache of runs and judges.

One event loop runs in a daemon thread for the façade's life; every call is a coroutine submitted
to it, so calls from several threads at once (a study's collection pool) share one client, one
semaphore and one group commit of the cache. :meth:`SyncLLM.close` (or leaving a ``with`` block,
or the façade being collected) closes the client and ends the thread.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Coroutine
from typing import Any, TypeVar

from core.llm.async_client import AsyncLLM
from core.llm.calls import Endpoint
from core.llm.client import Completion, UsageTotals

R = TypeVar("R")


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)
        if thread is not threading.current_thread():
            thread.join(timeout=5)


class SyncLLM:
    """Blocking calls to an :class:`AsyncLLM` (thread-safe).

    Args:
        llm: the model on its endpoint; its ``concurrency`` bounds the calls in flight.
    """

    def __init__(self, llm: AsyncLLM) -> None:
        self.llm = llm
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def model(self) -> str:
        return self.llm.model

    @property
    def totals(self) -> UsageTotals:
        return self.llm.totals

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="llm-loop", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
                weakref.finalize(self, _stop, loop, thread)
            return self._loop

    def run(self, coro: Coroutine[Any, Any, R]) -> R:
        """Run ``coro`` in the façade's event loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._running_loop()).result()

    def complete(self, messages: list[dict[str, Any]], *,
                 response_format: dict[str, Any] | None = None) -> Completion:
        """Ask the model (or the cache). An answer that should be JSON and is not strict JSON is not
        cached (a later run asks again).

        Raises:
            LLMCallError: the call failed for good (:class:`AsyncLLM`'s retries spent).
        """
        result = self.run(self.llm.complete(messages, response_format=response_format, strict_json=True))
        return Completion.of(result)

    def close(self) -> None:
        """Close the client and end the loop's thread (a later call starts them again)."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.llm.release(), loop).result()
        _stop(loop, thread)
        loop.close()

    def __enter__(self) -> SyncLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def endpoint_options(client: Any) -> dict[str, Any]:
    """:class:`AsyncLLM` options for the endpoint of an ``openai`` client (sync or async): its base
    URL, key, timeout and retries (the client itself is not used: AsyncLLM makes its own)."""
    timeout = getattr(client, "timeout", None)
    retries = getattr(client, "max_retries", None)
    return {"endpoint": Endpoint("default", str(client.base_url)), "api_key": getattr(client, "api_key", None),
            "timeout": float(timeout) if isinstance(timeout, int | float) else None,
            "max_retries": retries if isinstance(retries, int) else None}
