"""The flat Yelp layout (SPEC §1.2): ``review.json`` + ``business.json``, JSONL or Parquet.

Reviews take the fast path: polars reads the whole file with the source schema and a handful of
set-wise checks decide whether it is clean. Polars says *that* something is wrong, not *where*,
and it quietly turns a number into a string where a string is expected; so any file the fast path
doubts goes through the checked Python loop of :mod:`core.datasets.schema`, which either names
the exact line and field or, when the doubt was unfounded (a review whose whole text is "5"),
returns the same frame the fast path would have. Each business's reviews are then sorted newest
first (ties: review_id ascending) and numbered from idx 0.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

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
from core.datasets.sources import JSONL, iter_records, read_parquet
from core.errors import DataError
from core.progress import Progress, no_progress

SOURCE_SCHEMA = {f: REVIEW_SCHEMA[f] for f in REVIEW_SOURCE_FIELDS}
_STRING_FIELDS = [f for f, t in SOURCE_SCHEMA.items() if t == pl.String()]
_REQUIRED = ("business_id", "review_id", "date", "text")
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


def _fast_frame(path: Path, fmt: str) -> pl.DataFrame | None:
    """The reviews as polars reads them, or None when polars cannot read them as typed."""
    if fmt == JSONL:
        try:
            frame = pl.read_ndjson(path, schema=SOURCE_SCHEMA)
        except pl.exceptions.PolarsError:
            return None
        # polars reads an escaped lone surrogate ("\ud800") as NUL without a word: a frame with a NUL
        # or a replacement character goes through the checked loop, which accepts a real one and
        # names the line of a surrogate
        strings = [c for c, t in frame.schema.items() if t == pl.String]
        suspicious = pl.any_horizontal(pl.col(c).str.contains("\x00", literal=True)
                                       | pl.col(c).str.contains("\ufffd", literal=True) for c in strings)
        if strings and frame.select(suspicious.any()).item():
            return None
        return frame
    frame = read_parquet(path, list(SOURCE_SCHEMA))
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


def _is_clean(frame: pl.DataFrame, business_ids: pl.Series) -> bool:
    """True when every set-wise check passes (the Python loop is not needed)."""
    counts = pl.min_horizontal("useful", "funny", "cool")
    doubts = [
        pl.any_horizontal(pl.col(c).is_null() for c in _REQUIRED).any(),
        pl.any_horizontal(pl.col(c).str.len_bytes() == 0 for c in ("business_id", "review_id")).any(),
        pl.any_horizontal(pl.col(c).str.contains(_STRINGIFIED) for c in _STRING_FIELDS).any(),
        (~pl.col("date").str.contains(DATE_PATTERN)).any(),
        pl.col("date").str.strptime(pl.Datetime, DATE_FORMAT, strict=False).is_null().any(),
        (~pl.col("stars").is_between(0.0, 5.0)).any(),
        (counts < 0).any(),
        pl.col("review_id").is_duplicated().any(),
        (~pl.col("business_id").is_in(business_ids.implode())).any(),
    ]
    return not any(frame.select(d.alias(f"doubt{i}") for i, d in enumerate(doubts)).row(0))


def _checked_frame(path: Path, fmt: str, business_ids: set[str], business_path: Path) -> pl.DataFrame:
    """The reviews through the checked Python loop: raises at the first bad line."""
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
    if not rows:
        raise DataError("empty file: no reviews", path=path)
    return columns_frame(rows, REVIEW_SOURCE_FIELDS, REVIEW_SCHEMA)


def number_newest_first(reviews: pl.DataFrame) -> pl.DataFrame:
    """Sort each business's reviews newest first (ties: review_id) and assign idx from 0."""
    ordered = reviews.sort(["business_id", "date", "review_id"], descending=[False, True, False])
    return ordered.with_columns(idx=pl.int_range(pl.len(), dtype=pl.Int32).over("business_id"))


def read_flat(
    review_path: Path,
    review_fmt: str,
    business_path: Path,
    business_fmt: str,
    *,
    progress: Progress | None = None,
    checked: bool = False,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read and check a flat pair of files; returns (restaurants, reviews with idx).

    Args:
        checked: skip the fast path (the reference the tests compare it with).

    Raises:
        DataError: the first bad record, naming the file, line and field.
    """
    progress = progress or no_progress
    progress(0, 3, f"reading {business_path.name}")
    restaurants = read_businesses(business_path, business_fmt)
    progress(1, 3, f"reading {review_path.name}")
    reviews = None if checked else _fast_frame(review_path, review_fmt)
    if reviews is None or not reviews.height or not _is_clean(reviews, restaurants["business_id"]):
        progress(1, 3, f"checking {review_path.name} line by line")
        ids = set(restaurants["business_id"].to_list())
        reviews = _checked_frame(review_path, review_fmt, ids, business_path)
    progress(2, 3, "sorting reviews newest first")
    return restaurants, number_newest_first(reviews)
