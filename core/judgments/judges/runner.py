"""Plan and execute judging runs (STYLE §7): ``plan_judging`` is pure-ish, ``execute_judging`` does I/O.

Only keyword-matched reviews are judged (SPEC §2), so the dataset needs its keyword index. The
plan lists the matched reviews that still need a judgment of this judge: with ``resume`` every
review key with a finished judgment in the judge's log is skipped (a parse error is stored but
asked again, since a bad answer may be transient; a judgment of a since-changed text is stale and
judged again), as is every review waiting in a submitted, uncollected batch. One run per
(dataset, task, judge) at a time (:func:`core.workspace.locks.judge_lock`). Execution appends each
finished judgment to the log at once (``append_judgments``, fsync), so killing the process loses
at most the calls in flight and a resumed run repeats no stored one. Failed calls are reported,
not stored. The judge's xnot-style extraction log (SPEC §2.4,
``judgments/{dataset}/{task}/{judge}.extraction_log.json``) is kept up to date: its counts are
kept as judgments arrive (work in proportion to the new judgments, never a pass over every
matched review) and it is rewritten every few seconds. An offline judge judges a large plan in
worker processes (:mod:`core.judgments.judges.pool`), stored in plan order.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from core.base.errors import DataError, IndexMissingError, WorkbenchError
from core.base.progress import Progress, no_progress
from core.base.settings import require_writable
from core.datasets import require_verified
from core.jobs.execution import run_sync
from core.judgments import judged_keys, stale_count
from core.judgments.judges.base import Judge, is_failure, now_iso, review_key
from core.judgments.judges.batch_records import pending_batch_keys
from core.judgments.judges.extraction_progress import ExtractionProgress
from core.judgments.judges.ondemand import judge_calls
from core.judgments.judges.pool import POOL_MIN_ROWS, JudgedChunk, judge_in_chunks, worker_count
from core.judgments.judges.spend import judging_budget
from core.judgments.log_cache import Appended, extend_cache, parse_lines
from core.judgments.store import append_encoded_judgments, encode_judgments, judgment_path, log_schema
from core.judgments.xnot_files import read_extraction_log, write_extraction_log
from core.llm.budget import Budget
from core.tasks import get_task
from core.tasks.keyword_index import matched_reviews
from core.workspace import Workspace
from core.workspace.locks import judge_lock

LOG_EVERY_SECONDS = 2.0
# The extraction log is rewritten at most every LOG_EVERY_SECONDS, and never spends more than
# 1/LOG_COST_SHARE of the run: at 150,000 restaurants one write takes a noticeable time.
LOG_COST_SHARE = 20


@dataclass(frozen=True, eq=False)
class JudgingPlan:
    """What a run will do. ``rows`` are the reviews to judge, in (business_id, idx) order."""

    ws: Workspace
    dataset: str
    task: str
    judge_id: str
    prompt_version: str
    rows: tuple[dict[str, Any], ...]
    matched: int
    already_judged: int
    in_pending_batches: int
    without_text: int
    limit: int | None
    resume: bool
    restaurants: pl.DataFrame  # business_id, name, matched (int): every restaurant of the dataset
    done_keys: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    matched_keys: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    stale: int = 0  # reviews whose stored judgment is of another text (judged again)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset, "task": self.task, "judge": self.judge_id,
            "prompt_version": self.prompt_version, "matched": self.matched, "to_judge": len(self.rows),
            "already_judged": self.already_judged, "in_pending_batches": self.in_pending_batches,
            "without_text": self.without_text, "limit": self.limit, "resume": self.resume, "stale": self.stale,
        }


@dataclass
class JudgingReport:
    """What a run did: counts, failures, tokens and cost."""

    dataset: str
    task: str
    judge: str
    mode: str = "ondemand"
    matched: int = 0
    planned: int = 0
    skipped: int = 0
    judged: int = 0
    parse_errors: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    seconds: float = 0.0
    batch: dict[str, Any] | None = None
    cancelled: bool = False  # stopped on request before every planned review was judged
    max_cost_usd: float | None = None  # the cap this run kept (None: no cap)
    stopped_at_cap: bool = False  # stopped before a review whose call could have passed the cap

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset, "task": self.task, "judge": self.judge, "mode": self.mode,
            "matched": self.matched, "planned": self.planned, "skipped_already_judged": self.skipped,
            "judged": self.judged, "parse_errors": self.parse_errors, "failures": len(self.failures),
            "failed_reviews": self.failures[:50], "usage": self.usage, "seconds": round(self.seconds, 3),
            "batch": self.batch, "cancelled": self.cancelled, "max_cost_usd": self.max_cost_usd,
            "stopped_at_cap": self.stopped_at_cap,
        }

    def summary_text(self) -> str:
        """A few lines for the CLI."""
        lines = [
            f"{self.judge} on {self.dataset}/{self.task} ({self.mode}): judged {self.judged}, "
            f"skipped {self.skipped} already judged, {self.parse_errors} parse errors, "
            f"{len(self.failures)} failures, {self.seconds:.1f} s",
        ]
        if self.usage:
            u = self.usage
            cost = f"${u.get('cost_usd', 0):.4f}" + (f" (+{u['unpriced_calls']} calls without a price)"
                                                      if u.get("unpriced_calls") else "")
            lines.append(f"tokens: {u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} completion "
                         f"in {u.get('calls', 0)} calls ({u.get('cached_calls', 0)} answered from cache); cost {cost}")
        for failure in self.failures[:5]:
            lines.append(f"  failed {failure['business_id']}#{failure['idx']}: {failure['error']}")
        if self.failures:
            lines.append("failed reviews are not stored; run again with --resume to retry them")
        if self.batch:
            lines.append(f"batch {self.batch.get('batch_id')}: {self.batch.get('status')}")
        if self.stopped_at_cap:
            lines.append(f"stopped at the cap of ${self.max_cost_usd:.4f}: the next review's call could have passed it; "
                         "--resume continues (with --max-cost for a new cap)")
        return "\n".join(lines)


def _matched_rows(ws: Workspace, dataset: str, task: str) -> pl.DataFrame:
    if not ws.dataset_dir(dataset).exists():
        raise WorkbenchError(f"dataset {dataset!r} is not imported in {ws.root}")
    try:
        return matched_reviews(ws, dataset, task, with_text=True)
    except IndexMissingError as exc:
        raise IndexMissingError(f"{exc}. Judging needs the keyword index: run python -m core index --dataset "
                                f"{dataset} first") from None


def plan_judging(
    ws: Workspace, dataset: str, task: str, judge: Judge, *, limit: int | None = None, resume: bool = True
) -> JudgingPlan:
    """Which keyword-matched reviews of ``dataset`` still need a judgment of ``judge``.

    Args:
        limit: judge at most this many reviews (the first in (business_id, idx) order).
        resume: skip reviews the judge already has a stored judgment for (else judge them again;
            the newer record wins, and the LLM cache answers repeated requests for free).

    Raises:
        WorkbenchError: dataset not imported or changed (lock), keyword index missing or stale.
    """
    spec = get_task(task, ws)
    require_verified(ws, dataset)
    matched = _matched_rows(ws, dataset, spec.task_id)
    restaurants = _restaurants(ws, dataset, matched)
    done = judged_keys(ws, dataset, spec.task_id, judge.judge_id)
    pending = pending_batch_keys(ws, dataset, spec.task_id, judge.judge_id)
    keys = list(zip(matched["business_id"].to_list(), matched["idx"].to_list(), strict=True))
    skip_done = done if resume else set()
    todo_mask = [k not in skip_done and k not in pending for k in keys]
    todo = matched.filter(pl.Series(todo_mask, dtype=pl.Boolean))
    without_text = int(todo["text"].is_null().sum())
    todo = todo.filter(pl.col("text").is_not_null())
    if limit is not None:
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        todo = todo.head(limit)
    rows = tuple({**r, "dataset": dataset, "idx": int(r["idx"])} for r in todo.iter_rows(named=True))
    return JudgingPlan(
        ws=ws, dataset=dataset, task=spec.task_id, judge_id=judge.judge_id, prompt_version=judge.prompt_version,
        rows=rows, matched=len(keys), already_judged=sum(1 for k in keys if k in skip_done),
        in_pending_batches=sum(1 for k in keys if k in pending and k not in skip_done),
        without_text=without_text, limit=limit, resume=resume, restaurants=restaurants,
        done_keys=frozenset(k for k in keys if k in done), matched_keys=frozenset(keys),
        stale=stale_count(ws, dataset, spec.task_id, judge.judge_id),
    )


def _restaurants(ws: Workspace, dataset: str, matched: pl.DataFrame) -> pl.DataFrame:
    rest = pl.read_parquet(ws.dataset_dir(dataset) / "restaurants.parquet", columns=["business_id", "name"], glob=False)
    counts = matched.group_by("business_id").len("matched")
    return rest.join(counts, on="business_id", how="left").with_columns(pl.col("matched").fill_null(0))


class _RunState:
    """Counts of a run, the keys stored so far, and the throttled extraction log."""

    def __init__(self, plan: JudgingPlan, report: JudgingReport) -> None:
        self.plan, self.report = plan, report
        self.done: set[tuple[str, int]] = set(plan.done_keys)
        self.extraction = ExtractionProgress(plan, self.done)
        self.started = _log_started(plan)
        self.spec = get_task(plan.task, plan.ws)
        self.path = judgment_path(plan.ws, plan.dataset, plan.task, plan.judge_id)
        self._last_log = 0.0
        self._log_cost = 0.0
        # a large run keeps the rows it appends, to extend the log's columnar copy at the end
        self.appended: list[Appended] | None = [] if len(plan.rows) >= POOL_MIN_ROWS else None

    def store(self, records: Iterable[dict[str, Any]]) -> None:
        """Store judged records (failures are reported, not stored)."""
        records = list(records)
        judgments = [r for r in records if not is_failure(r)]
        self.store_chunk(JudgedChunk(
            data=encode_judgments(self.spec, self.plan.dataset, self.plan.judge_id, judgments) if judgments else b"",
            judged=len(judgments), parse_errors=sum(1 for r in judgments if r.get("parse_error")),
            finished_keys=[review_key(r) for r in judgments if not r.get("parse_error")],
            failures=[r for r in records if is_failure(r)],
        ))

    def store_chunk(self, chunk: JudgedChunk) -> None:
        """Append a judged chunk's lines, count it, and rewrite the log when it is due."""
        data = chunk.data
        if chunk.records is not None:  # its encoding failed in a worker: raise the error here
            data = encode_judgments(self.spec, self.plan.dataset, self.plan.judge_id, chunk.records)
        self.report.failures.extend(chunk.failures)
        if chunk.judged:
            start, end = append_encoded_judgments(self.path, data)
            self._keep(start, end, data)
            self.report.judged += chunk.judged
            self.report.parse_errors += chunk.parse_errors
            for key in chunk.finished_keys:
                if key not in self.done:
                    self.done.add(key)
                    self.extraction.add(key)
        self.write_log()

    def _keep(self, start: int, end: int, data: bytes) -> None:
        if self.appended is not None:
            rows = parse_lines(data, log_schema(self.spec))
            self.appended = None if rows is None else [*self.appended, Appended(start, end, rows)]

    def finish(self) -> None:
        """Write the extraction log; extend the log's columnar copy by what this run appended."""
        self.write_log(force=True)
        if self.appended:
            extend_cache(self.path, log_schema(self.spec), self.appended)

    def write_log(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_log >= max(LOG_EVERY_SECONDS, LOG_COST_SHARE * self._log_cost):
            write_extraction_log(self.plan.ws, self.plan.dataset, self.plan.task, self.plan.judge_id,
                                 self.extraction.payload(started=self.started))
            self._last_log = time.monotonic()
            self._log_cost = self._last_log - now


def execute_judging(
    plan: JudgingPlan, judge: Judge, *, concurrency: int = 4, progress: Progress | None = None,
    stop: Callable[[], bool] | None = None, max_cost: float | None = None,
) -> JudgingReport:
    """Judge the plan's reviews and store every judgment as soon as it is made.

    A concurrent judge (one call per review) is awaited in an event loop with ``concurrency`` calls
    in flight (:mod:`core.judgments.judges.ondemand`, the runs' async path); a bulk judge gets chunks
    of rows, in worker processes for a large plan (:func:`core.judgments.judges.pool.judge_in_chunks`).
    The log is written by one writer at a time. Once ``stop()`` is true no new review is
    sent; the calls in flight are waited for and stored (so a resumed run repeats none of them)
    and the report says ``cancelled``. With ``max_cost`` (USD) no review is sent whose call could
    take the run past it (:mod:`core.judgments.judges.spend`): the run stops, ``cancelled`` and
    ``stopped_at_cap``.
    """
    require_writable("judge reviews")
    if judge.judge_id != plan.judge_id:
        raise ValueError(f"the plan is for judge {plan.judge_id!r}, not {judge.judge_id!r}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    budget = judging_budget(judge, max_cost)
    with judge_lock(plan.ws, plan.dataset, plan.task, plan.judge_id):
        return _execute(_fresh(plan), judge, concurrency=concurrency, progress=progress or no_progress,
                        stop=stop or _never, budget=budget)


def _never() -> bool:
    return False


def _fresh(plan: JudgingPlan) -> JudgingPlan:
    """The plan without the reviews a run that finished since it was made has judged (under the lock)."""
    if not plan.resume or not plan.rows:
        return plan
    done = judged_keys(plan.ws, plan.dataset, plan.task, plan.judge_id)
    rows = tuple(r for r in plan.rows if review_key(r) not in done)
    if len(rows) == len(plan.rows):
        return plan
    return dataclasses.replace(plan, rows=rows, already_judged=plan.already_judged + len(plan.rows) - len(rows),
                               done_keys=frozenset(plan.done_keys | done))


def _execute(plan: JudgingPlan, judge: Judge, *, concurrency: int, progress: Progress,
             stop: Callable[[], bool], budget: Budget | None = None) -> JudgingReport:
    report = JudgingReport(plan.dataset, plan.task, plan.judge_id, matched=plan.matched, planned=len(plan.rows),
                           skipped=plan.already_judged, max_cost_usd=budget.cap if budget else None)
    state = _RunState(plan, report)
    started = time.perf_counter()
    progress(0, len(plan.rows), "starting")
    try:
        if budget is not None or judge.concurrent:  # a model judge, or a capped one: one call per review
            report.cancelled = _run_calls(plan, judge, state, concurrency, progress, stop, budget)
            report.stopped_at_cap = bool(budget and budget.exhausted)
        else:
            report.cancelled = _run_chunks(plan, judge, state, progress, stop)
    finally:
        state.finish()
        report.seconds = time.perf_counter() - started
        totals = getattr(judge, "usage_totals", None)
        report.usage = totals() if callable(totals) else None
    return report


def _message(report: JudgingReport) -> str:
    return f"{report.parse_errors} parse errors, {len(report.failures)} failures"


def _run_chunks(plan: JudgingPlan, judge: Judge, state: _RunState, progress: Progress,
                stop: Callable[[], bool]) -> bool:
    """Judge in chunks (in worker processes for a large plan); True when stopped before the last one."""
    def store(chunk: JudgedChunk, done: int) -> None:
        state.store_chunk(chunk)
        progress(done, len(plan.rows), _message(state.report))

    return judge_in_chunks(plan.rows, judge, state.spec, plan.dataset, store=store, stop=stop,
                           workers=worker_count(len(plan.rows)))


def _run_calls(plan: JudgingPlan, judge: Judge, state: _RunState, concurrency: int, progress: Progress,
               stop: Callable[[], bool], budget: Budget | None = None) -> bool:
    """Judge one review per call in an event loop (:func:`core.judgments.judges.ondemand.judge_calls`);
    True when stopped (asked, or at the ``budget``'s cap) before the last review was sent."""
    set_concurrency = getattr(judge, "set_concurrency", None)
    if callable(set_concurrency):
        set_concurrency(concurrency)

    async def calls() -> bool:
        try:
            return await judge_calls(plan.rows, judge, state.store, concurrency=concurrency, progress=progress,
                                     message=lambda: _message(state.report), stop=stop, budget=budget)
        finally:
            close = getattr(judge, "aclose", None)
            if callable(close):
                await close()

    return run_sync(calls())


def _log_started(plan: JudgingPlan) -> str:
    """``started`` of the judge's extraction log when resuming it, else now."""
    if plan.resume:
        try:
            old = read_extraction_log(plan.ws, plan.dataset, plan.task, plan.judge_id)
        except DataError:
            old = None  # a damaged log is rewritten from the judgment log, which is the truth
        if old and old.get("started"):
            return str(old["started"])
    return now_iso()


def progress_log(plan: JudgingPlan, done: set[tuple[str, int]], *, started: str) -> dict[str, Any]:
    """The xnot ``extraction_log.json`` payload (SPEC §2.4) for a judge whose stored judgments are ``done``."""
    return ExtractionProgress(plan, done).payload(started=started)


def write_progress_log(plan: JudgingPlan, done: set[tuple[str, int]], *, started: str) -> None:
    """Write the judge's extraction log (``{judge}.extraction_log.json``, :mod:`core.judgments.xnot_files`)."""
    write_extraction_log(plan.ws, plan.dataset, plan.task, plan.judge_id, progress_log(plan, done, started=started))
