"""Source files: which format (JSONL or Parquet), which layout, and their records one by one.

Records come with their 1-based line number (for Parquet: the 1-based row), so every error can
name the place. Blank lines are skipped (they still count for numbering), a UTF-8 byte-order mark
on the first line is tolerated; anything else that is not one JSON object per line is an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from core.base.errors import DataError
from core.base.files import json_problem, parse_json_text, require_file

JSONL, PARQUET = "jsonl", "parquet"
SCALE, FLAT_REVIEW, FLAT_BUSINESS = "scale", "flat-review", "flat-business"
_JSON_SUFFIXES = {".jsonl", ".json", ".ndjson"}
_PARQUET_SUFFIXES = {".parquet", ".pq"}
# Names the Yelp Open Dataset (and its Parquet conversions) use, for a folder given as PATH.
_REVIEW_NAMES = ("review", "yelp_academic_dataset_review")
_BUSINESS_NAMES = ("business", "yelp_academic_dataset_business")
# Streaming reads: bytes of JSON lines, or rows of Parquet, per chunk. Blocks stay below glibc's
# largest mmap threshold (32 MB), so their buffers are reused instead of being mapped, faulted in
# and unmapped for every block (64 MB blocks cost ~0.8 CPU s more per million reviews).
BLOCK_BYTES = 16 << 20
BATCH_ROWS = 100_000


def file_format(path: Path) -> str:
    """``"jsonl"`` or ``"parquet"``, from the suffix, else from the first bytes."""
    if not path.is_file():
        if not path.exists():
            raise DataError("no such file", path=path)
        require_file(path)  # says what it is: a folder, a device (/dev/zero), a pipe
    if path.stat().st_size == 0:
        raise DataError("empty file: no records", path=path)
    suffix = path.suffix.lower()
    if suffix in _PARQUET_SUFFIXES:
        return PARQUET
    if suffix in _JSON_SUFFIXES:
        return JSONL
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head.startswith(b"PAR1"):
        return PARQUET
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return JSONL
    raise DataError(
        f"unknown layout: {path.suffix or 'no suffix'} is neither JSON lines nor Parquet "
        "(compressed files must be decompressed first)",
        path=path,
    )


def find_in_folder(folder: Path, names: tuple[str, ...]) -> Path | None:
    """The first ``{name}.jsonl|.json|.parquet`` of ``names`` inside ``folder``."""
    for name in names:
        for suffix in (".json", ".jsonl", ".ndjson", ".parquet"):
            if (folder / f"{name}{suffix}").is_file():
                return folder / f"{name}{suffix}"
    return None


def resolve_paths(path: Path, business_path: Path | None) -> tuple[Path, Path | None]:
    """Accept a Yelp folder as ``path``: pick its review and business files."""
    if not path.is_dir():
        return path, business_path
    review = find_in_folder(path, _REVIEW_NAMES)
    if review is None:
        raise DataError("folder holds no review.json / review.parquet (pass the file itself)", path=path)
    return review, business_path or find_in_folder(path, _BUSINESS_NAMES)


def _decode_line(raw: bytes, path: Path, line: int) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})", path=path, line=line
        ) from None
    if line == 1:
        text = text.lstrip("\ufeff")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            raise DataError("truncated JSON: the line ends before the value is complete", path=path, line=line) from None
        raise DataError(f"not valid JSON: {json_problem(exc)}", path=path, line=line) from None
    except RecursionError:
        raise DataError("JSON nested too deeply", path=path, line=line) from None
    if "\\u" in text:  # an escaped lone surrogate cannot be stored (parse_json_text names it)
        return parse_json_text(text, path=path, line=line)
    return value


def iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each non-blank line of a JSON-lines file."""
    with open(path, "rb") as fh:
        for line, raw in enumerate(fh, start=1):
            if raw.strip():
                yield line, _decode_line(raw, path, line)


def read_parquet(path: Path, columns: list[str] | None = None) -> pl.DataFrame:
    """Read a (small) Parquet file whole (only the ``columns`` it has, of those asked for)."""
    try:
        if columns is not None:
            present = set(pl.scan_parquet(path, glob=False).collect_schema())
            columns = [c for c in columns if c in present]
        return pl.read_parquet(path, columns=columns, glob=False)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise DataError(f"cannot read Parquet: {str(exc).splitlines()[0][:200]}", path=path) from None


def parquet_batches(path: Path, columns: list[str] | None = None, batch_rows: int | None = None) -> Iterator[pl.DataFrame]:
    """A Parquet file as frames of at most ``batch_rows`` (default :data:`BATCH_ROWS`) rows (only
    the ``columns`` it has)."""
    batch_rows = batch_rows or BATCH_ROWS
    try:
        source = pq.ParquetFile(path)
        if columns is not None:
            present = set(source.schema_arrow.names)
            columns = [c for c in columns if c in present]
        for batch in source.iter_batches(batch_size=batch_rows, columns=columns):
            frame = pl.from_arrow(batch)
            assert isinstance(frame, pl.DataFrame)
            yield frame
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"cannot read Parquet: {str(exc).splitlines()[0][:200]}", path=path) from None


def iter_parquet_rows(path: Path, columns: list[str] | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(row_number, record)`` for each row of a Parquet file (structs become dicts)."""
    row = 0
    for frame in parquet_batches(path, columns):
        for rec in frame.iter_rows(named=True):
            row += 1
            yield row, rec


def line_blocks(path: Path, block_bytes: int | None = None) -> Iterator[bytes]:
    """A JSON-lines file as blocks of whole lines, about ``block_bytes`` (default
    :data:`BLOCK_BYTES`) each: a block ends after its last newline (or at the end of the file)."""
    block_bytes = block_bytes or BLOCK_BYTES
    with open(path, "rb") as fh:
        while block := fh.read(block_bytes):
            cut = block.rfind(b"\n") + 1
            while cut == 0 and (more := fh.read(block_bytes)):  # a line longer than a block
                found = more.rfind(b"\n") + 1
                cut = len(block) + found if found else 0
                block += more
            if 0 < cut < len(block):
                fh.seek(cut - len(block), os.SEEK_CUR)  # the partial line starts the next block
                block = block[:cut]
            yield block


def iter_records(path: Path, fmt: str, columns: list[str] | None = None) -> Iterator[tuple[int, Any]]:
    """Records of a source file in either format, with their line (or row) numbers."""
    return iter_json_lines(path) if fmt == JSONL else iter_parquet_rows(path, columns)


def detect_layout(path: Path, fmt: str, *, default: str | None = None) -> str:
    """``"scale"``, ``"flat-review"`` or ``"flat-business"``, from the first record's fields.

    Args:
        default: the layout to assume when the fields fit none (the caller knows the file's role,
            and the record checks then name the missing field); without it that is an error.
    """
    if fmt == PARQUET:
        try:
            keys = set(pl.scan_parquet(path, glob=False).collect_schema())
            n_rows = pl.scan_parquet(path, glob=False).select(pl.len()).collect().item()
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise DataError(f"cannot read Parquet: {str(exc).splitlines()[0][:200]}", path=path) from None
        if n_rows == 0:
            raise DataError("empty file: no rows", path=path)
        line = 1
    else:
        first = next(iter_json_lines(path), None)
        if first is None:
            raise DataError("empty file: no records (only blank lines)", path=path)
        line, record = first
        if not isinstance(record, dict):
            raise DataError(f"unknown layout: expected a JSON object per line, got {type(record).__name__}", path=path, line=line)
        keys = set(record)
    if "reviews" in keys or "business" in keys:
        return SCALE
    if "review_id" in keys:
        return FLAT_REVIEW
    if "business_id" in keys and "name" in keys:
        return FLAT_BUSINESS
    if default is not None:
        return default
    raise DataError(
        "unknown layout: expected a SCALE restaurant (business, reviews) or a Yelp review "
        f"(review_id, business_id, text, date); found fields {sorted(keys)[:12]}",
        path=path,
        line=line,
    )
