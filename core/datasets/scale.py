"""The SCALE layout (SPEC §1.1): one restaurant per line, its reviews nested, newest first.

A review's ``idx`` is its position in the restaurant's list: the file's order is kept as given.
Restaurants are small in number, so one pass of checked Python over the records is fast enough
(and it is the layout whose errors need the most precise places: ``reviews[17].date``). Reviews
are staged on disk every :data:`STAGE_ROWS` (:mod:`core.datasets.staging`), restaurants are kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from core.base.progress import Progress, no_progress
from core.datasets.schema import (
    BUSINESS_SOURCE_FIELDS,
    RESTAURANT_SCHEMA,
    REVIEW_SCHEMA,
    REVIEW_SOURCE_FIELDS,
    Where,
    check_business,
    check_review,
    columns_frame,
)
from core.datasets.sources import iter_records
from core.datasets.staging import Stager

_REVIEW_FIELDS = (*REVIEW_SOURCE_FIELDS, "idx")
STAGE_ROWS = 100_000


def _business_of(rec: Any, where: Where) -> tuple:
    if not isinstance(rec, dict):
        raise where.error("expected a JSON object (one restaurant per line)")
    business = rec.get("business")
    if not isinstance(business, dict):
        raise where.error("missing (required)" if business is None else "expected an object", "business")
    top_id = rec.get("business_id")
    if top_id is not None and "business_id" not in business:
        business = {**business, "business_id": top_id}
    values = check_business(business, Where(where.path, where.line, "business."))
    if top_id is not None and top_id != values[0]:
        raise where.error(f"{top_id!r} differs from business.business_id {values[0]!r}", "business_id")
    return values


class _Seen:
    """First line of every id, to name both lines of a duplicate."""

    def __init__(self) -> None:
        self.businesses: dict[str, int] = {}
        self.reviews: dict[str, tuple[int, int]] = {}

    def business(self, business_id: str, where: Where) -> None:
        first = self.businesses.setdefault(business_id, where.line)
        if first != where.line:
            raise where.error(f"duplicate business_id {business_id!r}: also at line {first}", "business_id")

    def review(self, review_id: str, where: Where, position: int) -> None:
        first = self.reviews.setdefault(review_id, (where.line, position))
        if first != (where.line, position):
            raise where.error(
                f"duplicate review_id {review_id!r}: also at line {first[0]} (reviews[{first[1]}])", "review_id"
            )


def stage_scale(
    path: Path, fmt: str, work: Path, *, progress: Progress | None = None
) -> tuple[pl.DataFrame, Stager, list[str]]:
    """Read and check a SCALE file; returns (restaurants, the reviews staged in ``work``, warnings).

    Call ``finish(..., number=False)`` on the stager to write the reviews sorted by idx.

    Raises:
        DataError: the first bad record, naming the file, line and field.
    """
    stager = Stager(work)
    try:
        restaurants, warnings = _read(path, fmt, stager, progress or no_progress)
    except BaseException:
        stager.close()
        raise
    return restaurants, stager, warnings


def _read(path: Path, fmt: str, stager: Stager, progress: Progress) -> tuple[pl.DataFrame, list[str]]:
    businesses: list[tuple] = []
    reviews: list[tuple] = []
    seen = _Seen()
    unordered: list[str] = []
    n_reviews = 0
    for line, rec in iter_records(path, fmt):
        where = Where(path, line)
        business = _business_of(rec, where)
        business_id = business[0]
        seen.business(business_id, where)
        items = rec.get("reviews")
        if not isinstance(items, list):
            raise where.error("missing (required)" if items is None else "expected a list of reviews", "reviews")
        dates = []
        for position, item in enumerate(items):
            at = Where(path, line, f"reviews[{position}].")
            values = check_review(item, at, business_id=business_id)
            seen.review(values[1], at, position)
            reviews.append((*values, position))
            dates.append(values[2])
        if len(reviews) >= STAGE_ROWS:
            n_reviews += len(reviews)
            stager.add(columns_frame(reviews, _REVIEW_FIELDS, REVIEW_SCHEMA))
            reviews = []
        if any(a < b for a, b in zip(dates, dates[1:], strict=False)):
            unordered.append(business_id)
        businesses.append(business)
        if len(businesses) % 100 == 0:
            progress(len(businesses), 0, f"{n_reviews + len(reviews):,} reviews read")
    warnings = []
    if unordered:
        warnings.append(
            f"{len(unordered)} restaurant(s) list reviews not newest first (e.g. {unordered[0]}); "
            "idx keeps the file's order"
        )
    stager.add(columns_frame(reviews, _REVIEW_FIELDS, REVIEW_SCHEMA))
    stager.wait()
    return columns_frame(businesses, BUSINESS_SOURCE_FIELDS, RESTAURANT_SCHEMA), warnings
