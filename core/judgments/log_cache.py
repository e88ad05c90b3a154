"""A columnar copy of a large judgment log, so that reading 1 M judgments does not parse 1 M JSON lines.

A judgment log (``judgments/{dataset}/{task}/{judge}.jsonl``, :mod:`core.judgments.store`) only
grows: records are appended, never edited (``judgments prune`` rewrites it as a new file). For a
log of :data:`MIN_BYTES` or more, the rows of its first ``offset`` bytes are kept beside it as
Parquet, without the ``raw`` column (the rules or the model's answer: most of the bytes, read by
no view): ``.{judge_file}.cache.parquet`` with ``.{judge_file}.cache.json``, hidden files that no
log listing sees. A read takes the cached rows and parses only the lines appended since.

The copy is used only while it provably describes the log's first ``offset`` bytes: same file
(inode), at least that long, and the same first and last 4 KiB of that span (sha256); and only
for the same columns (a task whose fields changed makes a new one). Anything else (no copy, a
pruned or replaced log, a damaged copy, the ``raw`` column asked for) reads the log as before.
The copy is rewritten when a read finds a tenth more rows than it holds, and by the judge at the
end of a run from the lines it appended (:func:`extend_cache`), so the first GT after judging
does not parse the log either. A crash between the two files leaves a copy that fails the checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from core.base.files import atomic_path, read_json, write_json_atomic
from core.base.settings import read_only

VERSION = 1
MIN_BYTES = 16 << 20  # smaller logs parse in well under a second: no copy
UNCACHED = ("raw",)
_SPAN = 4096


@dataclass(frozen=True)
class Appended:
    """Bytes appended to a log at ``start`` (its size before) up to ``end`` (after), and their rows."""

    start: int
    end: int
    rows: pl.DataFrame


def cache_paths(log: Path) -> tuple[Path, Path]:
    """(Parquet rows, JSON description) of a log's columnar copy."""
    return log.with_name(f".{log.stem}.cache.parquet"), log.with_name(f".{log.stem}.cache.json")


def cached_columns(schema: dict[str, Any]) -> list[str]:
    """The log columns the copy holds (every one but :data:`UNCACHED`)."""
    return [c for c in schema if c not in UNCACHED]


def _digest(fh: Any, start: int, end: int) -> str:
    fh.seek(start)
    return hashlib.sha256(fh.read(end - start)).hexdigest()


def _stamp(log: Path, offset: int, schema: dict[str, Any], rows: int) -> dict[str, Any]:
    with open(log, "rb") as fh:
        return {"version": VERSION, "inode": os.fstat(fh.fileno()).st_ino, "offset": offset, "rows": rows,
                "columns": {c: str(schema[c]) for c in cached_columns(schema)},
                "head": _digest(fh, 0, min(_SPAN, offset)), "tail": _digest(fh, max(0, offset - _SPAN), offset)}


def _valid(log: Path, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The copy's description when it still describes the log's first ``offset`` bytes, else None."""
    rows_path, meta_path = cache_paths(log)
    try:
        meta = read_json(meta_path)
        with open(log, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            ok = (isinstance(meta, dict) and meta.get("version") == VERSION
                  and meta.get("columns") == {c: str(schema[c]) for c in cached_columns(schema)}
                  and meta.get("inode") == os.fstat(fh.fileno()).st_ino and 0 < meta.get("offset", -1) <= size
                  and meta.get("head") == _digest(fh, 0, min(_SPAN, meta["offset"]))
                  and meta.get("tail") == _digest(fh, max(0, meta["offset"] - _SPAN), meta["offset"])
                  and rows_path.exists())
    except (OSError, ValueError, TypeError):
        return None
    return meta if ok else None


def _parse(data: bytes, schema: dict[str, Any]) -> pl.DataFrame | None:
    """The records of whole JSON lines; None when polars cannot read them (the caller falls back)."""
    if not data.strip():
        return pl.DataFrame(schema=schema)
    try:
        return pl.read_ndjson(io.BytesIO(data), schema=schema)
    except pl.exceptions.PolarsError:
        return None


def parse_lines(data: bytes, schema: dict[str, Any]) -> pl.DataFrame | None:
    """The cached columns of the records in ``data`` (whole lines), or None if they cannot be read."""
    frame = _parse(data, schema)
    return None if frame is None else frame.select(cached_columns(schema))


def read_cached(log: Path, schema: dict[str, Any], columns: Sequence[str]) -> pl.DataFrame | None:
    """The log's rows (``columns``, in file order) from its copy plus the lines appended since, or
    None when the copy cannot serve (small log, ``raw`` asked for, no valid copy and an unreadable
    line): the caller reads the log itself. Refreshes the copy when it lacks a tenth of the rows."""
    if any(c in UNCACHED for c in columns) or log.stat().st_size < MIN_BYTES:
        return None
    meta = _valid(log, schema)
    offset = meta["offset"] if meta else 0
    with open(log, "rb") as fh:
        fh.seek(offset)
        rest = fh.read()
    whole = rest[: rest.rfind(b"\n") + 1]
    new = _parse(whole, schema)
    tail = _parse(rest[len(whole):], schema) if rest[len(whole):].strip() else None
    if new is None:
        return None
    held = 0 if meta is None else int(meta["rows"])
    if meta is None or new.height >= max(1, held // 10):
        old = pl.read_parquet(cache_paths(log)[0], glob=False) if meta else pl.DataFrame(schema=schema).select(cached_columns(schema))
        full = pl.concat([old, new.select(cached_columns(schema))])
        _write(log, full, offset + len(whole), schema)
        rows = full.select(columns)
    else:
        rows = pl.concat([pl.read_parquet(cache_paths(log)[0], columns=list(columns), glob=False), new.select(columns)])
    return rows if tail is None else pl.concat([rows, tail.select(columns)])


def _write(log: Path, rows: pl.DataFrame, offset: int, schema: dict[str, Any]) -> None:
    if read_only():  # a read-only deployment writes nothing, a copy neither
        return
    rows_path, meta_path = cache_paths(log)
    with contextlib.suppress(OSError):  # a read-only folder reads without a copy
        with atomic_path(rows_path, suffix=".parquet") as tmp:
            rows.write_parquet(tmp, compression="zstd", statistics=False)
        write_json_atomic(meta_path, _stamp(log, offset, schema, rows.height))


def extend_cache(log: Path, schema: dict[str, Any], appended: Sequence[Appended]) -> bool:
    """Extend the copy by a run's appends, when they follow it byte for byte: the copy (or an empty
    log) ends where the first append starts, each append starts where the previous one ended, and
    the log ends where the last one did. Returns whether the copy was written."""
    if not appended or appended[-1].end < MIN_BYTES:
        return False
    first = appended[0].start
    contiguous = all(a.start == b.end for a, b in zip(appended[1:], appended, strict=False))
    if not contiguous or log.stat().st_size != appended[-1].end:
        return False
    if first == 0:
        old = pl.DataFrame(schema=schema).select(cached_columns(schema))
    else:
        meta = _valid(log, schema)
        if meta is None or meta["offset"] != first:
            return False
        old = pl.read_parquet(cache_paths(log)[0], glob=False)
    _write(log, pl.concat([old, *(a.rows for a in appended)]), appended[-1].end, schema)
    return True
