"""Bulk (offline) judges over many reviews: chunks judged in worker processes, stored in order.

An offline judge (``concurrent = False``: heuristic-v1/v2, the cue judge, ensembles of them) is
pure Python over each review's text, so one process judges on one core. A large plan
(:data:`POOL_MIN_ROWS` reviews or more) is cut into chunks that worker processes judge and
encode into the judgment log's exact JSONL lines (:func:`core.judgments.encode_judgments`); the
calling process appends them in plan order, so the log holds the same lines in the same order as
a run in one process (only ``created_at`` differs, as between any two runs).

Workers are forked (they inherit the judge; nothing is pickled but the rows, the judge's screen of
them and the lines), with the collector's view of the parent's objects frozen so that the
children's collections do not copy the parent's pages. A judge with a vectorised ``screen`` (the
heuristic judges: :mod:`core.judgments.judges.heuristic_screen`) screens each chunk here, in
polars, and its workers run the rules only on the reviews that can fire one. A chunk whose encoding fails in a worker (a record outside the task's
schema) is sent back as records and encoded again here, so the error is raised by the caller.
``WORKBENCH_JUDGE_WORKERS`` sets the number of worker processes (1: judge in this process).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from core.judgments.judges.base import Judge, is_failure, review_key
from core.judgments.store import encode_judgments
from core.tasks import Task

CHUNK = 1000  # rows per call of a bulk judge in this process
POOL_CHUNK = 4000  # rows per worker task (fewer, larger appends: each one is fsynced)
POOL_MIN_ROWS = 20_000  # smaller plans are judged in this process (forking costs more than it saves)
MAX_WORKERS = 8
WORKERS_ENV = "WORKBENCH_JUDGE_WORKERS"


@dataclass
class JudgedChunk:
    """One judged chunk: its JSONL lines (or its records, when they must be encoded by the caller),
    the keys of its judgments without a parse error, counts and failures."""

    data: bytes = b""
    judged: int = 0
    parse_errors: int = 0
    finished_keys: list[tuple[str, int]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    records: list[dict[str, Any]] | None = None  # set instead of ``data`` when encoding failed


def judge_chunk(judge: Judge, spec: Task, dataset: str, rows: Sequence[dict[str, Any]],
                fire: Sequence[bool] | None = None) -> JudgedChunk:
    """Judge ``rows`` and encode the judgments as the judgment log's lines.

    A judge with ``encode_lines(spec, dataset, rows, fire)`` (the heuristic judges) writes the lines
    itself, reading only the rows ``fire`` (its ``screen`` of the texts) marks; when it declines
    (None), the records are made and encoded as for any judge.
    """
    encode_lines = getattr(judge, "encode_lines", None)
    data = encode_lines(spec, dataset, rows, fire) if callable(encode_lines) else None
    if data is not None:
        return JudgedChunk(data=data, judged=len(rows), finished_keys=[review_key(r) for r in rows])
    records = judge.judge(rows)
    judgments = [r for r in records if not is_failure(r)]
    chunk = JudgedChunk(
        judged=len(judgments), parse_errors=sum(1 for r in judgments if r.get("parse_error")),
        finished_keys=[review_key(r) for r in judgments if not r.get("parse_error")],
        failures=[r for r in records if is_failure(r)],
    )
    try:
        chunk.data = encode_judgments(spec, dataset, judge.judge_id, judgments)
    except Exception:  # noqa: BLE001 - re-raised by the caller, which encodes the records again
        chunk.records = judgments
    return chunk


def screen(judge: Judge, rows: Sequence[dict[str, Any]]) -> list[bool] | None:
    """The judge's vectorised screen of the rows' texts (``judge.screen``; in the calling process,
    never in a forked worker: polars' threads do not survive a fork), or None without one."""
    method = getattr(judge, "screen", None)
    return method([r.get("text") for r in rows]) if callable(method) else None


def worker_count(n_rows: int) -> int:
    """Worker processes for a plan of ``n_rows`` reviews: ``$WORKBENCH_JUDGE_WORKERS`` if set, else
    the CPU count (at most :data:`MAX_WORKERS`) for a large plan where processes can be forked, else 1."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured:
        try:
            workers = int(configured)
        except ValueError:
            raise ValueError(f"{WORKERS_ENV} must be a whole number, got {configured!r}") from None
        return max(1, workers)
    if n_rows < POOL_MIN_ROWS or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


# The judge a forked worker inherits (set by _start_worker in the child only).
_WORKER: dict[str, Any] = {}


def _start_worker(judge: Judge, spec: Task, dataset: str) -> None:
    _WORKER.update(judge=judge, spec=spec, dataset=dataset)


def _judge_in_worker(rows: Sequence[dict[str, Any]], fire: Sequence[bool] | None) -> JudgedChunk:
    return judge_chunk(_WORKER["judge"], _WORKER["spec"], _WORKER["dataset"], rows, fire)


def judge_in_chunks(rows: Sequence[dict[str, Any]], judge: Judge, spec: Task, dataset: str, *,
                    store: Callable[[JudgedChunk, int], None], stop: Callable[[], bool], workers: int = 1) -> bool:
    """Judge ``rows`` chunk by chunk and hand each chunk to ``store(chunk, rows_done)`` in order.

    With ``workers > 1`` the chunks are judged in that many forked processes, at most two chunks
    per worker ahead of the one being stored. Once ``stop()`` is true no new chunk is started;
    the chunks being judged are stored. Returns True when stopped before the last chunk.
    """
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for start in range(0, len(rows), CHUNK):
            if stop():
                return True
            chunk = rows[start : start + CHUNK]
            store(judge_chunk(judge, spec, dataset, chunk, screen(judge, chunk)), start + len(chunk))
        return False
    return _judge_in_pool(rows, judge, spec, dataset, store=store, stop=stop, workers=workers)


def _judge_in_pool(rows: Sequence[dict[str, Any]], judge: Judge, spec: Task, dataset: str, *,
                   store: Callable[[JudgedChunk, int], None], stop: Callable[[], bool], workers: int) -> bool:
    pending: deque[tuple[int, Future[JudgedChunk]]] = deque()
    stopped = False
    gc.freeze()  # the forked children's collections then leave the parent's objects (and pages) alone
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_start_worker, initargs=(judge, spec, dataset))
    try:
        for start in range(0, len(rows), POOL_CHUNK):
            while len(pending) >= 2 * workers:
                end, future = pending.popleft()
                store(future.result(), end)
            if stop():
                stopped = True
                break
            chunk = rows[start : start + POOL_CHUNK]
            pending.append((start + len(chunk), pool.submit(_judge_in_worker, chunk, screen(judge, chunk))))
        while pending:  # chunks being judged are stored, also after a stop
            end, future = pending.popleft()
            store(future.result(), end)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()
    return stopped
