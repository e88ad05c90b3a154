"""What a method is and what it gets: the restaurant input, the run context, the answer it returns.

A method's ``answer(ctx, restaurant)`` returns the method part of a sample record (SPEC §4.2):
``verdict, risk_score, parsed, response, prompt_tokens, completion_tokens, cost_usd, latency_ms,
llm_calls, cached_calls`` and ``error`` when the answer broke the contract. An LLM call that fails
for good raises :class:`core.llm.LLMCallError`; the run records it on the sample.
``requests(ctx, restaurant)`` lists the calls the method will make (best known before the run),
for pre-flight figures.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.ground_truth.policies import Policy
from core.llm import CallResult
from core.methods.contract import validate_contract
from core.tasks import Task

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"


@functools.cache
def prompt_template(name: str) -> str:
    """The text of a versioned prompt file ``prompts/{name}.txt`` (e.g. ``direct.v1``)."""
    return (PROMPT_DIR / f"{name}.txt").read_text(encoding="utf-8")


@dataclass(frozen=True)
class RestaurantInput:
    """One sample: a restaurant and its first K reviews (newest first)."""

    business_id: str
    name: str
    categories: str | None
    reviews: tuple[dict[str, Any], ...]  # review_id, idx, date, stars, text


@dataclass(frozen=True)
class Request:
    """One chat request a method makes."""

    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None
    completion_tokens: int  # expected answer size, for estimates


@dataclass
class MethodContext:
    """Everything a method needs besides the restaurant."""

    task: Task
    policy: Policy
    scale: tuple[str, ...]
    evidence_fields: tuple[str, ...]
    k: int
    llm: Any  # core.llm.AsyncLLM or core.methods.offline.OfflineModel; None for baselines
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] | None = None  # amos: the compiled extraction spec


class Usage:
    """Tokens, cost, latency and calls of one sample's LLM calls."""

    def __init__(self) -> None:
        self.prompt_tokens = self.completion_tokens = self.llm_calls = self.cached_calls = 0
        self.cost_usd = 0.0
        self.started = time.perf_counter()

    def add(self, result: CallResult) -> CallResult:
        self.llm_calls += 1
        self.cached_calls += int(result.cached)
        usage = result.usage()
        self.prompt_tokens += usage["prompt_tokens"]
        self.completion_tokens += usage["completion_tokens"]
        self.cost_usd += usage["cost_usd"]
        return result

    def fields(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 10), "latency_ms": round((time.perf_counter() - self.started) * 1000, 1),
            "llm_calls": self.llm_calls, "cached_calls": self.cached_calls,
        }


def contract_answer(ctx: MethodContext, result: CallResult, usage: Usage) -> dict[str, Any]:
    """The sample fields of one contract answer; a broken answer keeps its text and gets an error."""
    out: dict[str, Any] = {"response": result.content, **usage.fields()}
    if result.parse_error is not None:
        return {**out, "verdict": None, "risk_score": None, "parsed": None, "error": f"parse error: {result.parse_error}"}
    answer, problem = validate_contract(result.parsed, ctx.scale)
    if problem is not None:
        return {**out, "verdict": None, "risk_score": None, "parsed": answer, "error": f"out of contract: {problem}"}
    assert answer is not None
    score = answer.get("risk_score")
    return {**out, "verdict": answer["verdict"], "risk_score": score, "parsed": answer}


Answer = Callable[[MethodContext, RestaurantInput], Awaitable[dict[str, Any]]]
Requests = Callable[[MethodContext, RestaurantInput], list[Request]]


def _no_requests(ctx: MethodContext, restaurant: RestaurantInput) -> list[Request]:
    return []


@dataclass(frozen=True)
class Method:
    """A registered method (SPEC §4.1)."""

    name: str
    description: str
    uses_llm: bool
    answer: Answer
    requests: Requests = _no_requests
    prompts: tuple[str, ...] = ()
    prepare: Callable[[MethodContext], Awaitable[dict[str, Any] | None]] | None = None
    prepare_requests: Callable[[MethodContext], list[Request]] | None = None
