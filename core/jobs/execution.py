"""Bounded concurrency + an append-only resume log + a progress callback, for any per-item work.

``execute(items, work, log_path=..., key=..., concurrency=C)`` runs the async ``work(item)`` on
every item whose key is not in the log yet, at most ``C`` at a time, and appends each finished
record to the log at once (fsync'd, :func:`core.base.files.append_jsonl`), so a killed process loses
only the items in flight and a resumed run repeats no finished one. A record is whatever ``work``
returns (it should carry its own error when the item failed: the run goes on). ``stop`` is polled
before every new item starts and while items are in flight: a cancel starts no new item and lets
the items in flight finish within a grace period. An exception raised by ``work`` (e.g. an
endpoint refusing the key) cancels the items in flight and propagates.

>>> import tempfile, os
>>> async def double(x): return {"id": str(x), "value": 2 * x}
>>> log = os.path.join(tempfile.mkdtemp(), "log.jsonl")
>>> report = execute([1, 2, 3], double, log_path=log, key=lambda x: str(x), concurrency=2)
>>> report.done, report.skipped, sorted(r["value"] for r in read_log(log))
(3, 0, [2, 4, 6])
>>> execute([1, 2, 3, 4], double, log_path=log, key=lambda x: str(x)).skipped
3
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from core.base.files import append_jsonl, read_jsonl_log

T = TypeVar("T")
R = TypeVar("R")
KEY_FIELD = "id"
Update = Callable[["ExecutionReport", dict[str, Any] | None], None]


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The finished records of a resume log (a torn last line is dropped)."""
    return read_jsonl_log(path)


def finished_keys(path: str | Path, key_field: str = KEY_FIELD) -> set[str]:
    """Keys of the records already in the log."""
    return {str(r[key_field]) for r in read_log(path) if key_field in r}


class AppendLog:
    """Group commit for an append-only JSONL log from async code.

    ``await log.append(record)`` returns once the record is on disk (fsync'd). Records that arrive
    while a write is under way go together in the next write, and the write runs in a thread, so
    the event loop keeps serving the network while the disk syncs.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._pending: list[dict[str, Any]] = []
        self._seq = 0
        self._flushed = 0
        self._lock: asyncio.Lock | None = None

    async def append(self, record: dict[str, Any]) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        self._seq += 1
        mine = self._seq
        self._pending.append(record)
        async with self._lock:
            if self._flushed >= mine:
                return  # written by the previous batch
            batch, self._pending, upto = self._pending, [], self._seq
            await asyncio.to_thread(append_jsonl, self.path, batch)
            self._flushed = upto


@dataclass
class ExecutionReport:
    """What an execution did; ``on_record`` sees it after every finished item.

    ``errors`` and ``error_kinds`` (a record's ``error_kind``, else ``error``) count every item's
    latest record, the ones finished before a resume included, so they agree with the log.
    ``refused`` is set when ``admit`` turned an item down (e.g. a spending cap): the execution
    stopped there, as cancelled.
    """

    total: int = 0
    skipped: int = 0
    done: int = 0
    errors: int = 0
    cancelled: bool = False
    refused: bool = False
    error_kinds: dict[str, int] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)

    def count_error(self, record: dict[str, Any], sign: int = 1) -> None:
        if record.get("error"):
            self.errors += sign
            kind = str(record.get("error_kind") or "error")
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + sign


STOP_POLL = 0.2  # seconds between checks of ``stop`` while items are in flight


def _latest(path: str | Path, key_field: str) -> dict[str, dict[str, Any]]:
    """The latest record of each key in the log (a later line supersedes an earlier one: a retry)."""
    return {str(r[key_field]): r for r in read_log(path) if key_field in r}


async def execute_async(
    items: Sequence[T],
    work: Callable[[T], Awaitable[dict[str, Any]]],
    *,
    log_path: str | Path,
    key: Callable[[T], str],
    concurrency: int = 8,
    key_field: str = KEY_FIELD,
    on_record: Update | None = None,
    stop: Callable[[], bool] | None = None,
    durable: bool = True,
    redo: Callable[[dict[str, Any]], bool] | None = None,
    admit: Callable[[T], bool] | None = None,
    stop_grace: float = 10.0,
) -> ExecutionReport:
    """Run ``work`` over the items not yet in the log (see the module docstring).

    ``redo(record)`` picks finished records to run again (their new record supersedes the old
    line). ``admit(item)`` is asked before an item starts; False stops the execution there
    (``refused``). Once ``stop()`` turns true no item starts, and items still in flight after
    ``stop_grace`` seconds are cancelled (not recorded: a resume runs them), so a call stalled on
    a server cannot hold a cancel. ``durable=False`` (generated data that is rebuilt from scratch,
    e.g. the demo) writes the new records once at the end instead of one fsync'd append per item.
    """
    latest = _latest(log_path, key_field)
    todo = [item for item in items if key(item) not in latest or (redo is not None and redo(latest[key(item)]))]
    report = ExecutionReport(total=len(items), skipped=len(items) - len(todo))
    planned = {key(item) for item in todo}
    for item in items:
        record = latest.get(key(item))
        if record is not None and key(item) not in planned:
            report.count_error(record)
    if on_record:
        on_record(report, None)
    log = AppendLog(log_path)
    queue: asyncio.Queue[T] = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)

    async def worker() -> None:
        while not queue.empty():
            if stop is not None and stop():
                report.cancelled = True
                return
            item = queue.get_nowait()
            if admit is not None and not admit(item):
                report.refused = report.cancelled = True
                return
            record = await work(item)
            record = {key_field: key(item), **record}
            if durable:
                await log.append(record)
            report.done += 1
            report.count_error(record)
            report.records.append(record)
            if on_record:
                on_record(report, record)

    tasks = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(todo) or 1)))]
    watcher = asyncio.create_task(_watch(stop, tasks, report, stop_grace)) if stop is not None else None
    try:
        await _wait_all(tasks)
    finally:
        if watcher is not None:
            watcher.cancel()
    if not durable and report.records:
        append_jsonl(log_path, report.records)
    return report


async def _watch(stop: Callable[[], bool], tasks: list[asyncio.Task[None]], report: ExecutionReport,
                 grace: float) -> None:
    """Cancel the workers still busy ``grace`` seconds after ``stop()`` turned true."""
    while not stop():
        await asyncio.sleep(STOP_POLL)
    report.cancelled = True
    await asyncio.sleep(grace)
    for task in tasks:
        task.cancel()


async def _wait_all(tasks: list[asyncio.Task[None]]) -> None:
    """Wait for the workers; the first error cancels the others and propagates (a cancelled worker
    is one the stop watcher gave up on)."""
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    failed = [t for t in done if not t.cancelled() and t.exception() is not None]
    if failed:
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        error = failed[0].exception()
        assert error is not None
        raise error
    if pending:  # only cancellations can leave some: wait for them to unwind
        await asyncio.gather(*pending, return_exceptions=True)


def run_sync(coro: Coroutine[Any, Any, R]) -> R:
    """Run ``coro`` to completion from synchronous code, also when this thread already runs an
    event loop (a notebook, Playwright's sync API): then in a fresh thread with its own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def execute(items: Iterable[T], work: Callable[[T], Awaitable[dict[str, Any]]], **kwargs: Any) -> ExecutionReport:
    """:func:`execute_async` from synchronous code (its own event loop)."""
    return run_sync(execute_async(list(items), work, **kwargs))
