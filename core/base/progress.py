"""One progress callback shape for long work, fed to a CLI bar or to ``st.progress``.

A callback is called as ``progress(done, total, message)``; ``total`` may be 0 when unknown.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TextIO

Progress = Callable[[int, int, str], None]


def no_progress(done: int, total: int, message: str = "") -> None:
    """A callback that shows nothing."""


LOG_INTERVAL_SECONDS = 5.0


@contextlib.contextmanager
def log_progress(desc: str, *, stream: TextIO | None = None, interval: float = LOG_INTERVAL_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> Iterator[Progress]:
    """Progress for a log or CI: one plain line at most every ``interval`` seconds, and one at the end.

    A bar redraws itself hundreds of times, which a file or a pipe keeps as hundreds of lines.
    """
    out = stream if stream is not None else sys.stderr
    state = _LogState(last=clock())

    def update(done: int, total: int, message: str = "") -> None:
        state.done, state.total, state.message = done, total or state.total, message[:60]
        now = clock()
        if now - state.last >= interval:
            print(state.line(desc), file=out, flush=True)
            state.last, state.printed = now, True

    try:
        yield update
    finally:
        if state.done or state.printed:
            print(state.line(desc), file=out, flush=True)


@dataclass
class _LogState:
    last: float
    done: int = 0
    total: int = 0
    message: str = ""
    printed: bool = False

    def line(self, desc: str) -> str:
        share = f"{self.done:,}/{self.total:,} ({100 * self.done / self.total:.0f}%)" if self.total else f"{self.done:,}"
        return f"{desc}: {share}" + (f" {self.message}" if self.message else "")


@contextlib.contextmanager
def cli_progress(desc: str, *, enabled: bool = True, stream: TextIO | None = None) -> Iterator[Progress]:
    """A tqdm bar on a terminal's stderr, or a line every few seconds when stderr is a log or a pipe."""
    if not enabled:
        yield no_progress
        return
    out = stream if stream is not None else sys.stderr
    if not (hasattr(out, "isatty") and out.isatty()):
        with log_progress(desc, stream=out) as update:
            yield update
        return
    # deferred: heavy optional import (tqdm, ~50 ms), only needed when cli_progress() runs
    from tqdm import tqdm

    bar = tqdm(total=0, desc=desc, file=out, unit="", dynamic_ncols=True, leave=True)
    try:

        def update(done: int, total: int, message: str = "") -> None:
            if total and bar.total != total:
                bar.total = total
            bar.n = done
            if message:
                bar.set_postfix_str(message[:40], refresh=False)
            bar.refresh()

        yield update
    finally:
        bar.close()
