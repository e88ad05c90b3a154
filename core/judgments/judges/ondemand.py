"""On-demand judging, one review per call, in an event loop: the runs' concurrency model.

``concurrency`` workers take the plan's reviews in order and await the judge's ``ajudge(row)``
(:class:`core.judgments.judges.openai_judge.OpenAIJudge` calls :class:`core.llm.AsyncLLM`; a judge
without ``ajudge`` is called in a thread). A writer stores what came in meanwhile in plan order, in
one append (one fsync) run in a thread, so the loop keeps serving the network while the disk
syncs. Once ``stop()`` is true, or the budget refuses the next review, no new review is sent; the
calls in flight are awaited and stored, so a resumed run repeats none of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from core.base.progress import Progress
from core.judgments.judges.base import Judge
from core.judgments.judges.spend import spent
from core.llm.budget import Budget


class _Calls:
    """The state shared by the workers and the writer of one run (one event loop: no locks)."""

    def __init__(self, rows: tuple[dict[str, Any], ...], judge: Judge, budget: Budget | None,
                 stop: Callable[[], bool]) -> None:
        self.rows, self.judge, self.budget, self.stop = rows, judge, budget, stop
        self.next = 0
        self.stopped = False
        self.answered: list[tuple[int, list[dict[str, Any]]]] = []
        self.wake = asyncio.Event()
        self.ended = False

    def take(self) -> int | None:
        """The index of the next review to send, or None (all sent, or stopped)."""
        if self.stopped or self.next >= len(self.rows):
            return None
        i = self.next
        if self.stop() or (self.budget is not None and not self.budget.admit(str(i), self.rows[i])):
            self.stopped = True
            return None
        self.next += 1
        return i

    async def call(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        ajudge = getattr(self.judge, "ajudge", None)
        if ajudge is not None:
            return list(await ajudge(row))
        return list(await asyncio.to_thread(self.judge.judge, [row]))

    async def worker(self) -> None:
        while (i := self.take()) is not None:
            records = await self.call(self.rows[i])
            if self.budget is not None:  # what came back is paid for: its reservation becomes the cost counted
                self.budget.reserved.pop(str(i), None)
                self.budget.spent = spent(self.judge)
            self.answered.append((i, records))
            self.wake.set()


async def judge_calls(rows: tuple[dict[str, Any], ...], judge: Judge, store: Callable[[list[dict[str, Any]]], Any],
                      *, concurrency: int, progress: Progress, message: Callable[[], str],
                      stop: Callable[[], bool], budget: Budget | None = None) -> bool:
    """Judge ``rows`` one per call with ``concurrency`` calls in flight; ``store(records)`` (run in
    a thread) keeps each group of answers. True when stopped (asked, or at the budget's cap) before
    the last review was sent."""
    calls = _Calls(rows, judge, budget, stop)
    writer = asyncio.create_task(_write(calls, store, progress, message))
    try:
        await asyncio.gather(*(calls.worker() for _ in range(max(1, min(concurrency, len(rows))))))
    finally:
        calls.ended = True
        calls.wake.set()
        await writer  # what was answered is stored, also when a worker failed
    return calls.stopped


async def _write(calls: _Calls, store: Callable[[list[dict[str, Any]]], Any], progress: Progress,
                 message: Callable[[], str]) -> None:
    finished = 0
    try:
        while True:
            await calls.wake.wait()
            calls.wake.clear()
            while calls.answered:
                batch, calls.answered = sorted(calls.answered, key=lambda a: a[0]), []
                await asyncio.to_thread(store, [record for _, records in batch for record in records])
                finished += len(batch)
                progress(finished, len(calls.rows), message())
            if calls.ended:
                return
    except BaseException:
        calls.stopped = True  # the log cannot be written: send no further review
        raise
