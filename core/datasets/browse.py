"""Queries behind the Data page: restaurants and reviews of a dataset, filtered and paged.

All filtering happens in DuckDB over the Parquet files with ``$name`` parameters, and every list
is paged with LIMIT/OFFSET, so a page stays fast on millions of reviews.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import polars as pl

from core.base.memo import stamped
from core.datasets.db import VIEWS, Database


@dataclass(frozen=True)
class RestaurantFilter:
    """What the restaurant list is narrowed to (empty values mean no filter)."""

    name: str = ""
    category: str = ""
    min_stars: float = 0.0
    max_stars: float = 5.0


@dataclass(frozen=True)
class ReviewFilter:
    """What a restaurant's review list is narrowed to (dates as "YYYY-MM-DD", inclusive)."""

    text: str = ""
    stars: tuple[float, ...] = ()
    date_from: str = ""
    date_to: str = ""


@dataclass(frozen=True)
class Page:
    """One page of rows and the total number of rows matching."""

    rows: pl.DataFrame
    total: int
    page: int
    page_size: int

    @property
    def n_pages(self) -> int:
        return max(1, -(-self.total // self.page_size))


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _restaurant_where(f: RestaurantFilter) -> tuple[str, dict]:
    clauses = ["dataset = $dataset"]
    params: dict = {}
    if (f.min_stars, f.max_stars) != (0.0, 5.0):  # the full range is no filter: restaurants without stars stay
        clauses.append("stars BETWEEN $min_stars AND $max_stars")
        params.update(min_stars=f.min_stars, max_stars=f.max_stars)
    if f.name.strip():
        clauses.append("name ILIKE $name ESCAPE '\\'")
        params["name"] = _like(f.name.strip())
    if f.category:
        clauses.append("list_contains(string_split(categories, ', '), $category)")
        params["category"] = f.category
    return " AND ".join(clauses), params


def _paged(db: Database, view: str, columns: str, where: str, order: str, params: dict, page: int,
           page_size: int) -> Page:
    """Count the rows of ``view`` matching ``where``, then fetch one page of them in ``order``.

    ``view``, ``columns``, ``where`` and ``order`` are SQL written in this module; every value
    is in ``params``.
    """
    total = int(db.scalar(f"SELECT count(*) FROM {view} WHERE {where}", params) or 0)  # noqa: S608
    rows = db.query(
        f"SELECT {columns} FROM {view} WHERE {where} ORDER BY {order} LIMIT $limit OFFSET $offset",  # noqa: S608
        {**params, "limit": page_size, "offset": page * page_size},
    )
    return Page(rows, total, page, page_size)


def list_restaurants(db: Database, dataset: str, f: RestaurantFilter, *, page: int = 0, page_size: int = 50) -> Page:
    """Restaurants of ``dataset`` matching ``f``, by name, one page of them."""
    where, params = _restaurant_where(f)
    params["dataset"] = db.require_dataset(dataset)
    return _paged(db, "restaurants", "business_id, name, categories, city, state, stars, n_reviews", where,
                  "name, business_id", params, page, page_size)


def restaurant_position(db: Database, dataset: str, f: RestaurantFilter, business_id: str) -> int | None:
    """0-based position of ``business_id`` in :func:`list_restaurants`'s order under ``f``, or None
    when the filter leaves it out (the page that holds it is ``position // page_size``)."""
    where, params = _restaurant_where(f)
    params.update(dataset=db.require_dataset(dataset), business_id=business_id)
    value = db.scalar(
        f"SELECT pos FROM (SELECT business_id, row_number() OVER (ORDER BY name, business_id) - 1 AS pos "  # noqa: S608
        f"FROM restaurants WHERE {where}) WHERE business_id = $business_id", params)
    return None if value is None else int(value)


def categories(db: Database, dataset: str, *, top: int = 200) -> list[str]:
    """The most common categories of a dataset's restaurants, most frequent first."""
    rows = db.query(
        "SELECT cat, count(*) AS n FROM (SELECT unnest(string_split(categories, ', ')) AS cat "
        "FROM restaurants WHERE dataset = $dataset AND categories IS NOT NULL) "
        "WHERE cat <> '' GROUP BY cat ORDER BY n DESC, cat LIMIT $top",
        {"dataset": db.require_dataset(dataset), "top": top},
    )
    return rows["cat"].to_list()


def restaurant(db: Database, dataset: str, business_id: str) -> dict | None:
    """One restaurant's row as a dict, or None."""
    rows = db.query(
        "SELECT * FROM restaurants WHERE dataset = $dataset AND business_id = $business_id",
        {"dataset": db.require_dataset(dataset), "business_id": business_id},
    )
    return rows.row(0, named=True) if rows.height else None


def _review_where(f: ReviewFilter) -> tuple[str, dict]:
    clauses = ["dataset = $dataset", "business_id = $business_id"]
    params: dict = {}
    if f.text.strip():
        clauses.append("text ILIKE $text ESCAPE '\\'")
        params["text"] = _like(f.text.strip())
    if f.stars:
        clauses.append("list_contains($stars, stars)")
        params["stars"] = [float(s) for s in f.stars]
    if f.date_from:
        clauses.append("date >= $date_from")
        params["date_from"] = f.date_from
    if f.date_to:
        clauses.append("date < $date_to_excl")
        params["date_to_excl"] = f.date_to + " 99"  # inclusive of the whole day (dates sort as text)
    return " AND ".join(clauses), params


def restaurant_reviews(
    db: Database, dataset: str, business_id: str, f: ReviewFilter, *, page: int = 0, page_size: int = 25
) -> Page:
    """One restaurant's reviews in idx order (0 = newest), filtered, one page of them."""
    where, params = _review_where(f)
    params.update(dataset=db.require_dataset(dataset), business_id=business_id)
    return _paged(db, "reviews", "idx, review_id, date, stars, useful, funny, cool, text", where, "idx",
                  params, page, page_size)


def dataset_counts(db: Database) -> pl.DataFrame:
    """Restaurants, reviews and review date range of every dataset in the workspace.

    Each reviews file's counts and date range are kept beside it until it changes
    (:func:`core.base.memo.stamped`: a scan of 2 M dates at Yelp's size); the restaurants are
    counted from the Parquet metadata.
    """
    restaurants = db.query("SELECT dataset, count(*) AS n_restaurants FROM restaurants GROUP BY dataset")
    parts: dict[str, list[tuple[int, str | None, str | None]]] = {}
    for path in db.files(VIEWS["reviews"]):
        for dataset, n, first, last in stamped(Path(path), "dates", partial(_review_dates, db, path)):
            parts.setdefault(dataset, []).append((n, first, last))
    found = [[dataset, sum(p[0] for p in got), min((p[1] for p in got if p[1] is not None), default=None),
              max((p[2] for p in got if p[2] is not None), default=None)] for dataset, got in parts.items()]
    reviews = pl.DataFrame(found, orient="row", schema={
        "dataset": pl.String, "n_reviews": pl.Int64, "first_date": pl.String, "last_date": pl.String})
    return (restaurants.join(reviews, on="dataset", how="left")
            .with_columns(pl.col("n_reviews").fill_null(0))
            .select("dataset", "n_restaurants", "n_reviews", "first_date", "last_date").sort("dataset"))


def _review_dates(db: Database, path: str) -> list[list]:
    """[dataset, reviews, first date, last date] of each dataset in one reviews file."""
    return [list(row) for row in db.execute(
        "SELECT dataset, count(*), min(date), max(date) FROM read_parquet($path) GROUP BY dataset ORDER BY dataset",
        {"path": path})]


# -- look-ups for the pages and commands (the SQL stays in this package) ----------------------------
def sample_restaurants(db: Database, dataset: str, *, limit: int) -> list[dict]:
    """The first ``limit`` restaurants by name: id, name, categories, city, stars, reviews."""
    return db.query("SELECT business_id, name, categories, city, stars, n_reviews FROM restaurants "
                    "WHERE dataset = $dataset ORDER BY name, business_id LIMIT $limit",
                    {"dataset": dataset, "limit": limit}).to_dicts()


def restaurant_card(db: Database, dataset: str, business_id: str) -> dict | None:
    """One restaurant's descriptive columns, or None when it is not in the dataset."""
    rows = db.query("SELECT business_id, name, categories, city, state, stars, review_count, n_reviews "
                    "FROM restaurants WHERE dataset = $dataset AND business_id = $business_id",
                    {"dataset": dataset, "business_id": business_id}).to_dicts()
    return rows[0] if rows else None


def first_reviews(db: Database, dataset: str, business_id: str, *, limit: int) -> list[dict]:
    """A restaurant's first ``limit`` reviews in idx order: idx, id, date, stars, useful, text."""
    return db.query("SELECT idx, review_id, date, stars, useful, text FROM reviews WHERE dataset = $dataset "
                    "AND business_id = $business_id ORDER BY idx LIMIT $limit",
                    {"dataset": dataset, "business_id": business_id, "limit": limit}).to_dicts()


def texts_by_review(db: Database, dataset: str, review_ids: Iterable[str]) -> dict[str, str]:
    """review_id → text of those reviews of a dataset."""
    frame = db.query("SELECT review_id, text FROM reviews WHERE dataset = $d AND list_contains($ids, review_id)",
                     {"d": dataset, "ids": sorted({str(r) for r in review_ids})})
    return dict(zip(frame["review_id"].to_list(), frame["text"].to_list(), strict=True))


def texts_of_restaurants(db: Database, dataset: str, business_ids: Iterable[str], k: int | None) -> dict[str, str]:
    """review_id → text of the first K reviews (idx < K; all when K is None) of those restaurants."""
    frame = db.query(
        "SELECT review_id, text FROM reviews WHERE dataset = $dataset AND list_contains($ids, business_id)"
        " AND ($k IS NULL OR idx < $k)",
        {"dataset": dataset, "ids": sorted({str(b) for b in business_ids}), "k": k},
    )
    return dict(zip(frame["review_id"].to_list(), frame["text"].to_list(), strict=True))


def categories_by_restaurant(db: Database, dataset: str) -> dict[str, str | None]:
    """business_id → categories of a dataset's restaurants."""
    frame = db.query("SELECT business_id, categories FROM restaurants WHERE dataset = $dataset", {"dataset": dataset})
    return dict(zip(frame["business_id"].to_list(), frame["categories"].to_list(), strict=True))


def reviews_with_restaurants(db: Database, dataset: str) -> pl.DataFrame:
    """Every review with text, with its restaurant's name and city, in (business_id, idx) order."""
    return db.query(
        "SELECT r.business_id, r.review_id, r.idx, r.date, r.stars, r.text, s.name, s.city "
        "FROM reviews r LEFT JOIN restaurants s ON s.dataset = r.dataset AND s.business_id = r.business_id "
        "WHERE r.dataset = $dataset AND r.text IS NOT NULL ORDER BY r.business_id, r.idx",
        {"dataset": dataset},
    )

