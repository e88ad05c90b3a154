"""The normalised tables' contract and the record checks every importer shares.

Each check takes one decoded JSON record (a dict) and returns the normalised values, or raises
:class:`core.base.errors.DataError` naming the file, the line and the field. These Python checks are
the reference: the fast polars path of the flat importer only decides whether a file is clean,
and hands any file it doubts to these checks (see :mod:`core.datasets.flat`).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from core.base.errors import DataError

RESTAURANT_SCHEMA: dict[str, pl.DataType] = {
    "dataset": pl.String(), "business_id": pl.String(), "name": pl.String(), "categories": pl.String(),
    "city": pl.String(), "state": pl.String(), "address": pl.String(), "postal_code": pl.String(),
    "latitude": pl.Float64(), "longitude": pl.Float64(), "stars": pl.Float64(),
    "review_count": pl.Int64(), "is_open": pl.Int64(), "attributes": pl.String(), "hours": pl.String(),
    "n_reviews": pl.Int64(),
}
REVIEW_SCHEMA: dict[str, pl.DataType] = {
    "dataset": pl.String(), "business_id": pl.String(), "review_id": pl.String(), "idx": pl.Int32(),
    "date": pl.String(), "stars": pl.Float64(), "useful": pl.Int64(), "funny": pl.Int64(),
    "cool": pl.Int64(), "text": pl.String(), "user_id": pl.String(), "text_hash": pl.String(),
}
# ``text_hash``: the first 16 hex characters of sha256 of the UTF-8 text (SPEC §2.2), computed by
# every write (core.datasets.staging.text_hashes), never read from a source.
# The review fields read from a source file (everything but dataset, idx and text_hash).
REVIEW_SOURCE_FIELDS = ("business_id", "review_id", "date", "stars", "useful", "funny", "cool", "text", "user_id")
BUSINESS_SOURCE_FIELDS = tuple(c for c in RESTAURANT_SCHEMA if c not in ("dataset", "n_reviews"))

DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
# Shape of "YYYY-MM-DD HH:MM:SS"; calendar validity (Feb 30) is checked by the parser after it.
DATE_PATTERN = r"^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]) (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d$"
_DATE_RE = re.compile(DATE_PATTERN)


class Where:
    """Where a record came from: a file and its 1-based line (the row, for Parquet)."""

    __slots__ = ("path", "line", "prefix")

    def __init__(self, path: str | Path, line: int, prefix: str = "") -> None:
        self.path, self.line, self.prefix = str(path), line, prefix

    def error(self, message: str, field: str | None = None) -> DataError:
        """A DataError at this place; ``field`` is prefixed (e.g. ``reviews[3].``)."""
        name = f"{self.prefix}{field}" if field else (self.prefix.rstrip(".") or None)
        return DataError(message, path=self.path, line=self.line, field=name)


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def check_str(rec: dict, key: str, where: Where, *, required: bool, allow_empty: bool = False) -> str | None:
    """A string field; ``required`` rejects null and (unless ``allow_empty``) the empty string."""
    value = rec.get(key)
    if value is None:
        if required:
            raise where.error("missing (required)" if key not in rec else "is null (required)", key)
        return None
    if not isinstance(value, str):
        raise where.error(f"expected a string, got {_type_name(value)} {json.dumps(value)[:40]}", key)
    if required and not value and not allow_empty:
        raise where.error("is empty (required)", key)
    return value


def check_number(rec: dict, key: str, where: Where, *, low: float, high: float) -> float | None:
    """An optional number within [low, high] (booleans are not numbers here)."""
    value = rec.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise where.error(f"expected a number, got {_type_name(value)} {json.dumps(value)[:40]}", key)
    if not low <= value <= high:  # also rejects NaN
        raise where.error(f"{value} is out of range [{low:g}, {high:g}]", key)
    return float(value)


def check_count(rec: dict, key: str, where: Where) -> int | None:
    """An optional non-negative integer."""
    value = rec.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"expected an integer, got {_type_name(value)} {json.dumps(value)[:40]}", key)
    if value < 0:
        raise where.error(f"{value} is negative", key)
    if value >= 2**63:
        raise where.error(f"{value} is too large for a 64-bit integer", key)
    return value


def check_date(rec: dict, key: str, where: Where) -> str:
    """A required date string "YYYY-MM-DD HH:MM:SS" naming a real calendar time."""
    value = check_str(rec, key, where, required=True)
    assert value is not None
    if _DATE_RE.match(value):
        try:
            datetime.fromisoformat(value)
            return value
        except ValueError:
            pass
    raise where.error(f"bad date {value[:40]!r}: expected 'YYYY-MM-DD HH:MM:SS'", key)


def check_review(rec: Any, where: Where, *, business_id: str | None = None) -> tuple:
    """Validate one review; returns its values in :data:`REVIEW_SOURCE_FIELDS` order.

    With ``business_id`` (SCALE layout) the review's own business_id may be absent, and must equal
    it when present.
    """
    if not isinstance(rec, dict):
        raise where.error(f"expected a JSON object, got {_type_name(rec)}")
    bid = check_str(rec, "business_id", where, required=business_id is None)
    if business_id is not None:
        if bid is not None and bid != business_id:
            raise where.error(f"{bid!r} differs from its restaurant's business_id {business_id!r}", "business_id")
        bid = business_id
    return (
        bid,
        check_str(rec, "review_id", where, required=True),
        check_date(rec, "date", where),
        check_number(rec, "stars", where, low=0, high=5),
        check_count(rec, "useful", where),
        check_count(rec, "funny", where),
        check_count(rec, "cool", where),
        check_str(rec, "text", where, required=True, allow_empty=True),
        check_str(rec, "user_id", where, required=False),
    )


def _json_field(rec: dict, key: str, where: Where) -> str | None:
    value = rec.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        # A Parquet struct carries every key of every row; a key that is null here was absent.
        return json.dumps({k: v for k, v in value.items() if v is not None}, ensure_ascii=False)
    raise where.error(f"expected an object, got {_type_name(value)}", key)


def _categories(rec: dict, where: Where) -> str | None:
    value = rec.get("categories")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return check_str(rec, "categories", where, required=False)


def check_business(rec: Any, where: Where) -> tuple:
    """Validate one business; returns its values in :data:`BUSINESS_SOURCE_FIELDS` order."""
    if not isinstance(rec, dict):
        raise where.error(f"expected a JSON object, got {_type_name(rec)}")
    is_open = check_count(rec, "is_open", where)
    if is_open not in (None, 0, 1):
        raise where.error(f"expected 0 or 1, got {is_open}", "is_open")
    return (
        check_str(rec, "business_id", where, required=True),
        check_str(rec, "name", where, required=True),
        _categories(rec, where),
        check_str(rec, "city", where, required=False),
        check_str(rec, "state", where, required=False),
        check_str(rec, "address", where, required=False),
        check_str(rec, "postal_code", where, required=False),
        check_number(rec, "latitude", where, low=-90, high=90),
        check_number(rec, "longitude", where, low=-180, high=180),
        check_number(rec, "stars", where, low=0, high=5),
        check_count(rec, "review_count", where),
        is_open,
        _json_field(rec, "attributes", where),
        _json_field(rec, "hours", where),
    )


def columns_frame(rows: list[tuple], fields: tuple[str, ...], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """A frame from value tuples (as the checks return them), typed per the contract ``schema``."""
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(fields)
    return pl.DataFrame(
        {f: pl.Series(f, list(col), dtype=schema[f]) for f, col in zip(fields, columns, strict=True)}
    )
