"""What every LLM call reports: :class:`Completion` (one answer's text, tokens and cost),
:class:`UsageTotals` (a run's running totals) and :func:`describe_error` (a failed call in one line,
never a key). The one client is :class:`core.llm.AsyncLLM` (:class:`core.llm.sync.SyncLLM` from
synchronous code)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from core.base.settings import redact
from core.llm.calls import CallResult, LLMCallError, parse_json_content


def describe_error(exc: BaseException) -> str:
    """A one-line description of a failed call (status and message; never a key). An
    :class:`core.llm.LLMCallError` already is one (its message names the status)."""
    if isinstance(exc, LLMCallError):
        return redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
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

    @classmethod
    def of(cls, result: CallResult) -> Completion:
        """The completion of an :class:`core.llm.AsyncLLM` answer (tokens kept for a cached one)."""
        return cls(result.content, result.model, result.prompt_tokens, result.completion_tokens, result.cost_usd,
                   cached=result.cached)

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


__all__ = ["Completion", "UsageTotals", "describe_error", "parse_json_content"]
