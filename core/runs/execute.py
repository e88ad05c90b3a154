"""``execute_run``: run a plan, one sample at a time per slot, never losing finished work.

Layout of ``runs/{run_id}/``: ``config.json`` (the configuration, GT reference, pre-flight
figures; written when the run starts), ``samples.jsonl`` (one fsync'd line per finished sample,
SPEC §4.2), ``status.json`` (status, pid, counts, tokens, cost; rewritten as it goes),
``spec.json`` (amos: the compiled spec), ``results.json`` (written at the end), and
``cancel.request`` while a cancel is pending.

Before anything is written, an LLM run asks the endpoint once (list models): a refused key fails
fast with one line and leaves no run folder. A call that fails for good is recorded on its sample
(``error``) and the run goes on; a resumed run skips every sample in ``samples.jsonl``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from core.base.files import make_dirs, remove_file, write_json_atomic
from core.base.progress import Progress, no_progress
from core.base.settings import env
from core.jobs.execution import ExecutionReport, execute_async, read_log, run_sync
from core.llm import MODEL, TRANSPORT, EndpointAuthError, LLMCallError
from core.methods import METHODS
from core.methods.base import RestaurantInput
from core.runs.plan import SAMPLE_KEY, RunPlan
from core.runs.records import CANCEL_FILE, CONFIG_FILE, SAMPLES_FILE, SPEC_FILE, STATUS_FILE, read_prepared
from core.runs.results import finalize_results
from core.runs.spend import Budget, request_bound, retry_filter
from core.workspace.locks import run_lock

STATUS_EVERY = 0.5  # seconds between status.json rewrites


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class RunState:
    """Counts, tokens and cost as the run goes; writes ``status.json`` now and then."""

    def __init__(self, plan: RunPlan, progress: Progress, on_status: Callable[[dict[str, Any]], None] | None,
                 budget: Budget) -> None:
        self.plan, self.progress, self.on_status, self.budget = plan, progress, on_status, budget
        self.started = time.monotonic()
        self.started_at = _now()
        self.prompt_tokens = self.completion_tokens = self.llm_calls = self.cached_calls = 0
        self.cost = 0.0
        self.spent_before = budget.spent  # what earlier starts of this run paid
        self.new_done = 0
        self._last = 0.0
        self.status: dict[str, Any] = {}

    def add_usage(self, usage: dict[str, Any]) -> None:
        """Count calls made outside the samples (a method's prepare step, e.g. amos's compile call)."""
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.llm_calls += int(usage.get("llm_calls") or 0)
        self.cached_calls += int(usage.get("cached_calls") or 0)
        self.cost += float(usage.get("cost_usd") or 0.0)
        self.budget.settle("", float(usage.get("cost_usd") or 0.0))

    def update(self, report: ExecutionReport, record: dict[str, Any] | None, *, status: str = "running",
               force: bool = False) -> None:
        if record is not None:
            self.new_done += 1
            self.prompt_tokens += int(record.get("prompt_tokens") or 0)
            self.completion_tokens += int(record.get("completion_tokens") or 0)
            self.llm_calls += int(record.get("llm_calls") or 0)
            self.cached_calls += int(record.get("cached_calls") or 0)
            self.cost += float(record.get("cost_usd") or 0.0)
            self.budget.settle(str(record.get(SAMPLE_KEY)), float(record.get("cost_usd") or 0.0))
        done = report.skipped + report.done
        elapsed = time.monotonic() - self.started
        remaining = report.total - done
        eta = elapsed / self.new_done * remaining if self.new_done and remaining else (0.0 if not remaining else None)
        preflight = self.plan.preflight
        self.status = {
            "run_id": self.plan.run_id, "status": status, "pid": os.getpid(), "started_at": self.started_at,
            "updated_at": _now(), "done": done, "total": report.total, "errors": report.errors,
            "errors_transport": report.error_kinds.get(TRANSPORT, 0), "errors_model": report.error_kinds.get(MODEL, 0),
            "resumed_from": report.skipped, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "cost_usd": round(self.cost, 6),
            "total_cost_usd": round(self.spent_before + self.cost, 6),
            "calls_cached": self.cached_calls, "calls_new": self.llm_calls - self.cached_calls,
            "est_cost_usd": preflight.get("est_cost_usd"), "est_cost_usd_low": preflight.get("est_cost_usd_low"),
            "est_cost_usd_high": preflight.get("est_cost_usd_high"), **self.budget.as_dict(),
            "elapsed_s": round(elapsed, 2), "eta_s": None if eta is None else round(eta, 1),
        }
        self.progress(done, report.total, progress_text(self.status))
        now = time.monotonic()
        if force or now - self._last >= STATUS_EVERY:
            self._last = now
            write_json_atomic(self.plan.run_dir / STATUS_FILE, self.status)
            if self.on_status:
                self.on_status(self.status)


USAGE_KEYS = ("prompt_tokens", "completion_tokens", "cost_usd", "llm_calls", "cached_calls")


def _add_usage(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two usage records added key by key (a resumed run compiles again: its earlier calls still count)."""
    return {k: (a.get(k) or 0) + (b.get(k) or 0) for k in USAGE_KEYS}


def progress_text(s: dict[str, Any]) -> str:
    """``errors 1 · 12,345 tok · $0.0123 · ETA 4s`` for a progress bar (``of $0.50`` under a cap)."""
    eta = "" if s.get("eta_s") is None else f" · ETA {s['eta_s']:.0f}s"
    tokens = int(s.get("prompt_tokens", 0)) + int(s.get("completion_tokens", 0))
    cap = f" of ${s['max_cost_usd']:.2f}" if s.get("max_cost_usd") is not None else ""
    return f"errors {s.get('errors', 0)} · {tokens:,} tok · ${s.get('cost_usd', 0):.4f}{cap}{eta}"


def cancel_requested(plan: RunPlan) -> bool:
    return (plan.run_dir / CANCEL_FILE).exists()


async def execute_run_async(
    plan: RunPlan,
    llm: Any,
    progress: Progress | None = None,
    *,
    stop: Callable[[], bool] | None = None,
    on_status: Callable[[dict[str, Any]], None] | None = None,
    durable: bool = True,
) -> dict[str, Any]:
    """Run ``plan`` with ``llm`` (see the module docstring); returns the final status.

    One process executes a run at a time (:func:`core.workspace.locks.run_lock`): a second start of the
    same run fails at once with :class:`core.workspace.locks.LockBusyError`, before any call or write.
    ``durable=False`` is for generated runs (the demo): samples are written once at the end.
    """
    with run_lock(plan.ws, plan.run_id):
        return await _execute_locked(plan, llm, progress, stop=stop, on_status=on_status, durable=durable)


async def _execute_locked(plan: RunPlan, llm: Any, progress: Progress | None, *, stop: Callable[[], bool] | None,
                          on_status: Callable[[dict[str, Any]], None] | None, durable: bool) -> dict[str, Any]:
    config = plan.config
    method = METHODS[config.method]
    if method.uses_llm and may_call_endpoint(plan):
        await llm.check()  # a refused key stops here, before the run folder exists
    make_dirs(plan.run_dir)  # never through a link planted below the workspace root (core.base.files)
    remove_file(plan.run_dir / CANCEL_FILE)
    write_json_atomic(plan.run_dir / CONFIG_FILE, {
        **plan.as_dict(), "method_description": method.description, "prompts": list(method.prompts),
        "offline": bool(getattr(llm, "offline", False)) or not method.uses_llm, "created_at": _now(),
    })
    ctx = plan.context(llm if method.uses_llm else None)
    budget = Budget(config.max_cost, spent_before(plan), lambda r: sample_bound(plan, ctx, method, r))
    state = RunState(plan, progress or no_progress, on_status, budget)
    if method.prepare is not None:
        prepared = await method.prepare(ctx) or {}
        state.add_usage(prepared.get("usage") or {})  # the compile call counts in this execution's tokens
        write_json_atomic(plan.run_dir / SPEC_FILE, {**prepared, "usage": _add_usage(
            (read_prepared(plan.run_dir) or {}).get("usage") or {}, prepared.get("usage") or {})})  # every start's calls
    offline = bool(getattr(llm, "offline", False))

    async def work(r: RestaurantInput) -> dict[str, Any]:
        return await run_sample(plan, ctx, method, r, offline=offline)

    def should_stop() -> bool:
        return cancel_requested(plan) or bool(stop and stop())

    report = await execute_async(
        list(plan.restaurants), work, log_path=plan.run_dir / SAMPLES_FILE, key=lambda r: r.business_id,
        concurrency=config.concurrency, key_field=SAMPLE_KEY, on_record=state.update, stop=should_stop,
        durable=durable, redo=retry_filter(plan.retry_errors), admit=lambda r: budget.admit(r.business_id, r),
        stop_grace=cancel_grace(),
    )
    if report.cancelled:
        state.update(report, None, status="cancelled", force=True)
        remove_file(plan.run_dir / CANCEL_FILE)
        return state.status
    samples = read_log(plan.run_dir / SAMPLES_FILE)
    finalize_results(plan, samples, status=state.status)
    state.update(report, None, status="finished", force=True)
    return state.status


def may_call_endpoint(plan: RunPlan) -> bool:
    """False when the pre-flight found every call of the run in the response cache, counted
    exactly (not amos's estimate): no request will reach the endpoint, so its key is not checked
    (and openai is not imported)."""
    figures = plan.preflight or {}
    return not (figures.get("new_calls") == 0 and not figures.get("estimated"))


def cancel_grace() -> float:
    """Seconds a cancel waits for the calls in flight before cutting them off (``$WORKBENCH_CANCEL_GRACE``, 10)."""
    try:
        return max(0.0, float(env("WORKBENCH_CANCEL_GRACE") or 10.0))
    except ValueError:
        return 10.0


def spent_before(plan: RunPlan) -> float:
    """What earlier starts of the run paid: every line of its log (a retried sample's first try
    too) and every compile call."""
    log = plan.run_dir / SAMPLES_FILE
    samples = sum(float(r.get("cost_usd") or 0.0) for r in read_log(log)) if log.exists() else 0.0
    prepared = float(((read_prepared(plan.run_dir) or {}).get("usage") or {}).get("cost_usd") or 0.0)
    return samples + prepared


def sample_bound(plan: RunPlan, ctx: Any, method: Any, r: RestaurantInput) -> float:
    """An upper bound on the cost of sample ``r``'s calls (cached ones cost nothing)."""
    llm = ctx.llm
    if llm is None or getattr(llm, "offline", False):
        return 0.0
    return sum(request_bound(plan.config.model, req.messages, req.completion_tokens, plan.config.price)
               for req in method.requests(ctx, r) if not llm.is_cached(req.messages, req.response_format))


async def run_sample(plan: RunPlan, ctx: Any, method: Any, r: RestaurantInput, *, offline: bool) -> dict[str, Any]:
    """One sample record (SPEC §4.2); a call that failed for good becomes the sample's error."""
    started = time.perf_counter()
    try:
        answer = await method.answer(ctx, r)
    except EndpointAuthError:
        raise
    except LLMCallError as exc:
        answer = {"verdict": None, "risk_score": None, "parsed": None, "response": None, "prompt_tokens": 0,
                  "completion_tokens": 0, "cost_usd": 0.0, "llm_calls": 0,
                  "error": f"LLM call failed after {exc.attempts} attempt(s): {exc}", "error_kind": exc.kind}
    gt = plan.gt.get(r.business_id)
    verdict = answer.get("verdict")
    record = {
        "business_id": r.business_id, "name": r.name, "n_reviews": len(r.reviews),
        "verdict": verdict, "risk_score": answer.get("risk_score"), "parsed": answer.get("parsed"),
        "response": answer.get("response"), "gt_verdict": gt,
        "correct": None if gt is None else verdict == gt,
        "prompt_tokens": answer.get("prompt_tokens", 0), "completion_tokens": answer.get("completion_tokens", 0),
        "cost_usd": answer.get("cost_usd", 0.0),
        "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        "llm_calls": answer.get("llm_calls", 0), "cached_calls": answer.get("cached_calls", 0),
    }
    if offline:
        record["offline"] = True
        record["model_note"] = "offline heuristic model (deterministic rules, no LLM)"
    for extra in ("extraction_errors",):
        if extra in answer:
            record[extra] = answer[extra]
    if answer.get("error"):
        record["error"] = answer["error"]
        record["error_kind"] = answer.get("error_kind") or MODEL  # an answer that arrived but cannot be used
    return record


def execute_run(
    plan: RunPlan,
    llm: Any,
    progress: Progress | None = None,
    *,
    stop: Callable[[], bool] | None = None,
    on_status: Callable[[dict[str, Any]], None] | None = None,
    durable: bool = True,
) -> dict[str, Any]:
    """:func:`execute_run_async` from synchronous code."""

    async def main() -> dict[str, Any]:
        try:
            return await execute_run_async(plan, llm, progress, stop=stop, on_status=on_status, durable=durable)
        finally:
            await llm.aclose()

    return run_sync(main())
