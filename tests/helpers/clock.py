"""The one fake clock of the tests: a callable returning a datetime that moves only when told."""

from __future__ import annotations

from datetime import datetime, timedelta


class Clock:
    """``Clock()`` stands still at ``start`` until :meth:`advance`; with ``step`` seconds each call
    first moves it on by ``step`` (every record gets its own time)."""

    def __init__(self, start: datetime = datetime(2026, 3, 1, 12, 0, 0), step: float = 0.0) -> None:
        self.now = start
        self.step = timedelta(seconds=step)

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
