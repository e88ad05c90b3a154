"""The flat Yelp layout (SPEC §1.2): ``review.json`` + ``business.json``, JSONL or Parquet.

Reviews take the fast path: polars reads the file a chunk at a time (16 MB of lines, or 100,000
Parquet rows) with the source schema, and a handful of set-wise checks per chunk, plus one over
64-bit hashes of every review_id for duplicates, decide whether it is clean. Polars says *that*
something is wrong, not *where*, and it quietly turns a number into a string where a string is
expected; so any file the fast path doubts goes through the checked Python loop of
:mod:`core.datasets.schema`, which either names the exact line and field or, when the doubt was
unfounded (a review whose whole text is "5"), stages the same rows the fast path would have. Both
paths stage their chunks on disk (:mod:`core.datasets.staging`), which then sorts each business's
reviews newest first (ties: review_id ascending) and numbers them from idx 0.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from core.base.errors import DataError
from core.base.progress import Progress, no_progress
from core.datasets.schema import (
    BUSINESS_SOURCE_FIELDS,
    DATE_FORMAT,
    DATE_PATTERN,
    RESTAURANT_SCHEMA,
    REVIEW_SCHEMA,
    REVIEW_SOURCE_FIELDS,
    Where,
    check_business,
    check_review,
    columns_frame,
)
from core.datasets.sources import JSONL, iter_records, line_blocks, parquet_batches
from core.datasets.staging import Stager, bucket_bounds

SOURCE_SCHEMA = {f: REVIEW_SCHEMA[f] for f in REVIEW_SOURCE_FIELDS}
_STRING_FIELDS = [f for f, t in SOURCE_SCHEMA.items() if t == pl.String()]
_REQUIRED = ("business_id", "review_id", "date", "text")
# Rows the checked loop stages at a time.
CHECKED_ROWS = 100_000
# A NUL or a replacement character, in one regex pass a column (see _suspicious).
_SUSPICIOUS = "[\x00\ufffd]"
# What polars makes of a non-string JSON value read into a string column: 5, true, [..], {..}.
_STRINGIFIED = r"(?s)^(?:-?[0-9][0-9.eE+-]*|true|false|\[.*\]|\{.*\})$"


def read_businesses(path: Path, fmt: str) -> pl.DataFrame:
    """Read and check a business file (one business per line or row)."""
    rows: list[tuple] = []
    first_line: dict[str, int] = {}
    for line, rec in iter_records(path, fmt):
        where = Where(path, line)
        values = check_business(rec, where)
        first = first_line.setdefault(values[0], line)
        if first != line:
            raise where.error(f"duplicate business_id {values[0]!r}: also at line {first}", "business_id")
        rows.append(values)
    if not rows:
        raise DataError("empty file: no businesses", path=path)
    return columns_frame(rows, BUSINESS_SOURCE_FIELDS, RESTAURANT_SCHEMA)


def _suspicious(frame: pl.DataFrame) -> bool:
    """polars reads an escaped lone surrogate ("\\ud800") as NUL without a word: a frame with a NUL
    or a replacement character goes through the checked loop, which accepts a real one and names
    the line of a surrogate."""
    strings = [c for c, t in frame.schema.items() if t == pl.String]
    if not strings or not frame.height:
        return False
    suspicious = pl.any_horizontal(pl.col(c).str.contains(_SUSPICIOUS) for c in strings)
    return bool(frame.select(suspicious.any()).item())


def _typed(frame: pl.DataFrame) -> pl.DataFrame | None:
    """A Parquet batch in the source schema, or None when its types need the checked loop."""
    for name, dtype in SOURCE_SCHEMA.items():
        have = frame.schema.get(name)
        if have is None:
            frame = frame.with_columns(pl.lit(None, dtype=dtype).alias(name))
        elif have != dtype and not (
            (dtype == pl.String() and have == pl.Categorical())
            or (dtype == pl.Float64() and have.is_numeric())
            or (dtype == pl.Int64() and have.is_integer())
        ):
            return None
    try:
        return frame.select(pl.col(n).cast(t) for n, t in SOURCE_SCHEMA.items())
    except pl.exceptions.PolarsError:  # e.g. a UInt64 beyond Int64: the checked loop names the row
        return None


def _fast_chunks(path: Path, fmt: str) -> Iterator[tuple[int, pl.DataFrame | None]]:
    """The reviews as polars reads them, a chunk at a time, with the bytes (or rows) read so far;
    a chunk is None when polars cannot read it as typed."""
    if fmt == JSONL:
        done = 0
        for block in line_blocks(path):
            done += len(block)
            if not block.strip():
                continue
            try:
                frame = pl.read_ndjson(io.BytesIO(block), schema=SOURCE_SCHEMA)
            except pl.exceptions.PolarsError:
                yield done, None
                return
            yield done, None if _suspicious(frame) else frame
        return
    done = 0
    for batch in parquet_batches(path, list(SOURCE_SCHEMA)):
        done += batch.height
        yield done, _typed(batch)


def _is_clean(frame: pl.DataFrame, business_ids: pl.Series) -> bool:
    """True when every set-wise check of one chunk passes (the Python loop is not needed).

    Duplicate review_ids across chunks are checked by the caller."""
    counts = pl.min_horizontal("useful", "funny", "cool")
    doubts = [
        pl.any_horizontal(pl.col(c).is_null() for c in _REQUIRED).any(),
        pl.any_horizontal(pl.col(c).str.len_bytes() == 0 for c in ("business_id", "review_id")).any(),
        pl.any_horizontal(pl.col(c).str.contains(_STRINGIFIED) for c in _STRING_FIELDS).any(),
        (~pl.col("date").str.contains(DATE_PATTERN)).any(),
        pl.col("date").str.strptime(pl.Datetime, DATE_FORMAT, strict=False).is_null().any(),
        (~pl.col("stars").is_between(0.0, 5.0)).any(),
        (counts < 0).any(),
        (~pl.col("business_id").is_in(business_ids.implode())).any(),
    ]
    return not any(frame.select(d.alias(f"doubt{i}") for i, d in enumerate(doubts)).row(0))


def _fast_stage(path: Path, fmt: str, business_ids: pl.Series, stager: Stager, progress: Progress) -> bool:
    """Stage the reviews through polars; False (and nothing staged) when any chunk is in doubt."""
    total = path.stat().st_size if fmt == JSONL else _parquet_rows(path)
    id_hashes = []
    for done, frame in _fast_chunks(path, fmt):
        if frame is None or not _is_clean(frame, business_ids):
            return False
        id_hashes.append(frame["review_id"].hash(seed=0).to_numpy())
        stager.add(frame)
        progress(done, total, f"reading {path.name}")
    if not id_hashes or not stager.rows:
        return False
    # 64-bit hashes of every review_id: a repeat (or, once in 10^8 files this size, a collision)
    # sends the file through the checked loop, which names both lines of a real duplicate
    hashes = np.concatenate(id_hashes)
    hashes.sort()
    return not bool((hashes[1:] == hashes[:-1]).any())


def _parquet_rows(path: Path) -> int:
    return int(pq.ParquetFile(path).metadata.num_rows)


def _checked_frame(path: Path, fmt: str, business_ids: set[str], business_path: Path, stager: Stager) -> None:
    """Stage the reviews through the checked Python loop: raises at the first bad line."""
    rows: list[tuple] = []
    first_line: dict[str, int] = {}
    for line, rec in iter_records(path, fmt, list(SOURCE_SCHEMA)):
        where = Where(path, line)
        values = check_review(rec, where)
        if values[0] not in business_ids:
            raise where.error(f"{values[0]!r} has no row in {business_path.name}", "business_id")
        first = first_line.setdefault(values[1], line)
        if first != line:
            raise where.error(f"duplicate review_id {values[1]!r}: also at line {first}", "review_id")
        rows.append(values)
        if len(rows) == CHECKED_ROWS:
            stager.add(columns_frame(rows, REVIEW_SOURCE_FIELDS, REVIEW_SCHEMA))
            rows = []
    stager.add(columns_frame(rows, REVIEW_SOURCE_FIELDS, REVIEW_SCHEMA))
    stager.wait()
    if not stager.rows:
        raise DataError("empty file: no reviews", path=path)


def expected_rows(path: Path, fmt: str) -> int:
    """About how many reviews a file holds (JSONL: assuming short reviews, so buckets err small)."""
    return _parquet_rows(path) if fmt != JSONL else path.stat().st_size // 400 + 1


def stage_flat(
    review_path: Path,
    review_fmt: str,
    business_path: Path,
    business_fmt: str,
    work: Path,
    *,
    progress: Progress | None = None,
    checked: bool = False,
) -> tuple[pl.DataFrame, Stager]:
    """Read and check a flat pair of files; returns (restaurants, the reviews staged in ``work``).

    Call ``finish(..., number=True)`` on the stager to write the reviews sorted and numbered.

    Args:
        checked: skip the fast path (the reference the tests compare it with).

    Raises:
        DataError: the first bad record, naming the file, line and field.
    """
    progress = progress or no_progress
    progress(0, 0, f"reading {business_path.name}")
    restaurants = read_businesses(business_path, business_fmt)
    stager = Stager(work, bucket_bounds(restaurants, expected_rows(review_path, review_fmt)))
    try:
        if checked or not _fast_stage(review_path, review_fmt, restaurants["business_id"], stager, progress):
            stager.reset()
            progress(0, 0, f"checking {review_path.name} line by line")
            ids = set(restaurants["business_id"].to_list())
            _checked_frame(review_path, review_fmt, ids, business_path, stager)
        stager.wait()
    except BaseException:
        stager.close()
        raise
    return restaurants, stager


def read_flat(
    review_path: Path,
    review_fmt: str,
    business_path: Path,
    business_fmt: str,
    *,
    progress: Progress | None = None,
    checked: bool = False,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`stage_flat` of small files into memory: (restaurants, reviews with idx and
    text_hash, sorted by business_id and idx); for tests and small tools."""
    with tempfile.TemporaryDirectory(prefix="workbench-flat-") as tmp:
        restaurants, stager = stage_flat(review_path, review_fmt, business_path, business_fmt, Path(tmp) / "work",
                                         progress=progress, checked=checked)
        stager.finish(Path(tmp) / "reviews.parquet", "", number=True)
        reviews = pl.read_parquet(Path(tmp) / "reviews.parquet").drop("dataset")
    return restaurants, reviews
