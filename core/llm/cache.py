"""The response cache: answers by request hash in an append-only JSONL file shared by processes.

A process keeps only an **index** in memory (key → where its line is in the file), never the
answers themselves: ``get`` reads the one line it needs. The index is built from the file's tail
the first time a key is missing and extended whenever the file has grown since (another process
appended), so a process sees what others stored meanwhile and its memory grows with the number of
answers, not their size. Answers above :func:`max_answer_bytes` are never stored.

``put`` appends through a :class:`GroupCommit` (threads storing answers at once share one fsync);
``remember`` keeps a row in memory for a caller that appends it itself (the async group commit).
"""

from __future__ import annotations

import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from core.base.files import append_jsonl
from core.base.settings import env

DEFAULT_MAX_ANSWER_BYTES = 1_000_000
_KEY_PREFIX = re.compile(rb'^\{"key": "([^"\\]{1,256})"')  # how append_jsonl writes a row: key first


def max_answer_bytes() -> int:
    """The largest answer body kept or accepted: ``$WORKBENCH_LLM_MAX_ANSWER_BYTES`` (default 1 MB)."""
    try:
        return max(1, int(env("WORKBENCH_LLM_MAX_ANSWER_BYTES") or DEFAULT_MAX_ANSWER_BYTES))
    except ValueError:
        return DEFAULT_MAX_ANSWER_BYTES


class GroupCommit:
    """Durable appends to a JSONL log from many threads, one fsync per group (group commit).

    ``append(row)`` returns once ``row`` is on disk. The first caller to find no write under way
    writes every row queued so far in one append (flush + fsync) while the others queue theirs for
    the next one; no lock is held during the write, so queuing never waits for a disk sync. A
    failed write raises in every caller whose row it carried.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cond = threading.Condition()
        self._queue: list[dict[str, Any]] = []
        self._queued = 0  # rows ever queued (a row's sequence number)
        self._durable = 0  # rows whose write finished
        self._writing = False
        self._failures: list[tuple[int, int, BaseException]] = []

    def append(self, row: dict[str, Any]) -> None:
        with self._cond:
            self._queue.append(row)
            self._queued += 1
            mine = self._queued
            while self._durable < mine:
                if self._writing:
                    self._cond.wait()
                    continue
                self._write_queued()
            for first, last, error in self._failures:
                if first <= mine <= last:
                    raise error

    def _write_queued(self) -> None:
        """Write the queue (called holding the condition, which is released during the write)."""
        batch, self._queue, first, last = self._queue, [], self._durable + 1, self._queued
        self._writing = True
        self._cond.release()
        error: BaseException | None = None
        try:
            append_jsonl(self.path, batch)
        except BaseException as exc:  # noqa: BLE001 - raised in every caller whose row was in the batch
            error = exc
        finally:
            self._cond.acquire()
            self._writing = False
            self._durable = last
            if error is not None:
                self._failures.append((first, last, error))
            self._cond.notify_all()


def _key_of(line: bytes) -> str | None:
    """The ``key`` of one cache line: read from its prefix (no parse of a large answer), else parsed."""
    match = _KEY_PREFIX.match(line)
    if match:
        return match.group(1).decode("utf-8", "replace")
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None  # a damaged line: a cache skips it
    key = row.get("key") if isinstance(row, dict) else None
    return key if isinstance(key, str) else None


class ResponseCache:
    """Answers by request hash, kept as an append-only JSONL file (shared by processes); see the
    module docstring. The in-memory lock guards the index only: no lock is held across a disk sync."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._index: dict[str, tuple[int, int]] = {}  # key -> (offset, length) of its latest line
        self._scanned = 0  # bytes of the file indexed so far (whole lines only)
        self._recent: dict[str, dict[str, Any]] = {}  # rows of this process not yet indexed from the file
        self._lock = threading.Lock()
        self._log = GroupCommit(self.path) if self.path is not None else None

    def _refresh(self) -> None:
        """Index the lines appended since the last scan (by this process or any other)."""
        if self.path is None:
            return
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            self._index, self._scanned = {}, 0
            return
        if size < self._scanned:  # replaced or truncated: start over
            self._index, self._scanned = {}, 0
        if size == self._scanned:
            return
        pos = self._scanned
        with open(self.path, "rb") as fh:
            fh.seek(pos)
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # a line still being written (or torn by a killed writer): not yet
                if line.strip():
                    key = _key_of(line)
                    if key is not None:
                        self._index[key] = (pos, len(line))
                pos += len(line)
        self._scanned = pos
        for key in [k for k in self._recent if k in self._index]:
            del self._recent[key]  # on disk and indexed: no longer held in memory

    def _read(self, key: str, where: tuple[int, int]) -> dict[str, Any] | None:
        assert self.path is not None
        try:
            with open(self.path, "rb") as fh:
                line = os.pread(fh.fileno(), where[1], where[0])
            row = orjson.loads(line)
        except (OSError, orjson.JSONDecodeError):
            return None
        return row if isinstance(row, dict) and row.get("key") == key else None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key`` or None."""
        with self._lock:
            if key in self._recent:
                return self._recent[key]
            where = self._index.get(key)
            if where is None:
                self._refresh()
                if key in self._recent:
                    return self._recent[key]
                where = self._index.get(key)
            if where is None:
                return None
        return self._read(key, where)

    def _row(self, key: str, entry: dict[str, Any]) -> dict[str, Any] | None:
        row = {"key": key, "created_at": datetime.now(UTC).isoformat(timespec="seconds"), **entry}
        content = row.get("content")
        if isinstance(content, str) and len(content.encode("utf-8")) > max_answer_bytes():
            return None  # never store a huge answer (an endpoint could fill the disk)
        return row

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store an answer durably (appended with fsync before the caller goes on)."""
        row = self._row(key, entry)
        if row is None:
            return
        if self._log is not None:
            self._log.append(row)  # on disk before anyone uses it; no lock held meanwhile
        with self._lock:
            self._recent[key] = row

    def remember(self, key: str, entry: dict[str, Any]) -> dict[str, Any] | None:
        """Keep an answer in memory only; returns the row for the caller to append (group commit),
        or None when it is too large to keep."""
        row = self._row(key, entry)
        if row is None:
            return None
        with self._lock:
            self._recent[key] = row
        return row

    def __len__(self) -> int:
        with self._lock:
            self._refresh()
            return len(self._index.keys() | self._recent.keys())


def workspace_cache(ws: Any) -> ResponseCache:
    """The response cache of workspace ``ws`` (``cache/llm.jsonl``)."""
    return ResponseCache(Path(ws.cache_dir) / "llm.jsonl")
