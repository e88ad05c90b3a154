"""Bounded concurrency + an append-only resume log + a progress callback, for any per-item work.

``execute(items, work, log_path=..., key=..., concurrency=C)`` runs the async ``work(item)`` on
every item whose key is not in the log yet, at most ``C`` at a time, and appends each finished
record to the log at once (fsync'd, :func:`core.base.files.append_jsonl`), so a killed process loses
only the items in flight and a resumed run repeats no finished one. A record is whatever ``work``
returns (it should carry its own error when the item failed: the run goes on). ``stop`` is polled
before every new item starts: a cancel lets the items in flight finish and starts no new one.
Exceptions listed in ``fatal`` (e.g. an endpoint refusing the key) stop everything and propagate.

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
    """What an execution did; ``on_record`` sees it after every finished item."""

    total: int = 0
    skipped: int = 0
    done: int = 0
    errors: int = 0
    cancelled: bool = False
    records: list[dict[str, Any]] = field(default_factory=list)


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
    fatal: tuple[type[BaseException], ...] = (),
    durable: bool = True,
) -> ExecutionReport:
    """Run ``work`` over the items not yet in the log (see the module docstring).

    ``durable=False`` (generated data that is rebuilt from scratch, e.g. the demo) writes the
    new records once at the end instead of one fsync'd append per item.
    """
    done_keys = finished_keys(log_path, key_field)
    todo = [item for item in items if key(item) not in done_keys]
    report = ExecutionReport(total=len(items), skipped=len(items) - len(todo))
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
            record = await work(item)
            record = {key_field: key(item), **record}
            if durable:
                await log.append(record)
            report.done += 1
            report.errors += int(bool(record.get("error")))
            report.records.append(record)
            if on_record:
                on_record(report, record)

    tasks = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(todo) or 1)))]
    try:
        await asyncio.gather(*tasks)
    except fatal:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    if not durable and report.records:
        append_jsonl(log_path, report.records)
    return report


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
