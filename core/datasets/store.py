"""Normalised dataset tables (SPEC §1.3): checked, sorted, written all-or-nothing, locked.

Imports stream their reviews through :mod:`core.datasets.staging`; :func:`write_dataset` takes
frames already in memory (datasets built from judgments). Both compute ``text_hash`` from text.

``datasets/{name}/restaurants.parquet`` and ``reviews.parquet`` follow the contract in
:mod:`core.datasets.schema`; reviews are sorted by (business_id, idx) and written zstd-compressed
in row groups small enough that DuckDB reads one restaurant's reviews from one or two of them
(min/max statistics on business_id let it skip the rest).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from core.base.errors import DataError, LockError, WorkbenchError
from core.base.files import atomic_dir, write_json_atomic
from core.base.progress import Progress, no_progress
from core.datasets.lock import (
    LOCK_NAME,
    TABLES,
    hash_sources,
    make_lock,
    read_lock,
    require_verified,
)
from core.datasets.schema import DATE_PATTERN, RESTAURANT_SCHEMA, REVIEW_SCHEMA
from core.datasets.staging import REVIEW_ROW_GROUP, Stager, text_hashes
from core.workspace import Workspace
from core.workspace.locks import dataset_lock, remove_empty, staging_for

_REQUIRED = {"restaurants": ("business_id",), "reviews": ("business_id", "review_id", "idx")}


def ensure_absent(ws: Workspace, name: str, *, replace: bool) -> Path:
    """The dataset's folder; raises if it exists and ``replace`` is false."""
    folder = ws.dataset_dir(name)
    if folder.exists() and not replace:
        raise WorkbenchError(f"dataset {name!r} already exists; pass replace=True (CLI: --replace) to overwrite it")
    return folder


def _conform(frame: pl.DataFrame, table: str, schema: dict[str, pl.DataType], name: str) -> pl.DataFrame:
    """Contract columns in contract order and types; ``dataset`` set to ``name``."""
    unknown = sorted(set(frame.columns) - set(schema))
    if unknown:
        raise ValueError(f"{table}: unknown column(s) {unknown}; the contract has {list(schema)}")
    missing = [c for c in _REQUIRED[table] if c not in frame.columns]
    if missing:
        raise ValueError(f"{table}: required column(s) {missing} are missing")
    exprs = []
    for column, dtype in schema.items():
        if column == "text_hash":
            continue  # computed from text below, never taken from the frame
        if column == "dataset":
            exprs.append(pl.lit(name, dtype=pl.String).alias(column))
        elif column in frame.columns:
            exprs.append(pl.col(column).cast(dtype, strict=True))
        else:
            exprs.append(pl.lit(None, dtype=dtype).alias(column))
    try:
        out = frame.select(exprs)
    except pl.exceptions.PolarsError as exc:
        raise DataError(f"{table}: a column has the wrong type ({str(exc).splitlines()[0][:160]})") from None
    if "text_hash" in schema:
        out = out.with_columns(text_hashes(out["text"])).select(list(schema))
    return out


def restaurants_table(restaurants: pl.DataFrame, counts: pl.DataFrame, name: str) -> pl.DataFrame:
    """The restaurants table: contract columns, ``n_reviews`` from ``counts`` (business_id, n),
    sorted by business_id."""
    restaurants = _conform(restaurants, "restaurants", RESTAURANT_SCHEMA, name)
    return (
        restaurants.drop("n_reviews")
        .join(counts, on="business_id", how="left")
        .with_columns(n_reviews=pl.col("n").fill_null(0).cast(pl.Int64))
        .select(list(RESTAURANT_SCHEMA))
        .sort("business_id")
    )


def _check_tables(restaurants: pl.DataFrame, reviews: pl.DataFrame) -> None:
    """Set-wise contract checks; the first failure becomes a DataError naming the field."""
    checks = [
        (restaurants, pl.col("business_id").is_null(), "business_id", "restaurants: business_id is null"),
        (restaurants, pl.col("business_id").is_duplicated(), "business_id", "restaurants: duplicate business_id {}"),
        (reviews, pl.col("review_id").is_null(), "review_id", "reviews: review_id is null"),
        (reviews, pl.col("review_id").is_duplicated(), "review_id", "reviews: duplicate review_id {}"),
        (reviews, pl.col("business_id").is_null(), "business_id", "reviews: business_id is null"),
        (reviews, pl.col("idx").is_null() | (pl.col("idx") < 0), "idx", "reviews: idx must be >= 0 (got {})"),
        (reviews, pl.struct("business_id", "idx").is_duplicated(), "review_id", "reviews: idx repeats within a restaurant (review {})"),
        (reviews, ~pl.col("business_id").is_in(restaurants["business_id"].implode()), "business_id", "reviews: business_id {} has no restaurant row"),
        (reviews, ~pl.col("date").str.contains(DATE_PATTERN), "date", "reviews: bad date {!r}: expected 'YYYY-MM-DD HH:MM:SS'"),
        (reviews, ~pl.col("stars").is_between(0.0, 5.0), "stars", "reviews: stars {} out of range [0, 5]"),
    ]
    for frame, mask, column, message in checks:
        hit = frame.lazy().filter(mask).select(column).head(1).collect()
        if hit.height:
            raise DataError(message.format(hit.item()), field=column)


def _sorted_by_key(reviews: pl.DataFrame) -> bool:
    """True when reviews are already in (business_id, idx) order (importers produce that order;
    checking is much cheaper than sorting a million texts again)."""
    if reviews.height < 2:
        return True
    bid, idx = pl.col("business_id"), pl.col("idx")
    in_order = (bid.shift(1) < bid) | ((bid.shift(1) == bid) & (idx.shift(1) < idx))
    return bool(reviews.select(in_order.slice(1).all()).item())


def write_tables(
    ws: Workspace,
    name: str,
    restaurants: pl.DataFrame,
    reviews: pl.DataFrame,
    *,
    sources: list[dict[str, Any]],
    layout: str,
    replace: bool,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Conform, check, sort and write both tables and the lock in one atomic folder swap."""
    progress = progress or no_progress
    with dataset_lock(ws, name):
        try:
            return _write_tables(ws, name, restaurants, reviews, sources=sources, layout=layout, replace=replace,
                                 progress=progress)
        finally:
            remove_empty(staging_for(ws, "dataset", name), ws.staging_dir)


def _write_tables(
    ws: Workspace, name: str, restaurants: pl.DataFrame, reviews: pl.DataFrame, *, sources: list[dict[str, Any]],
    layout: str, replace: bool, progress: Progress,
) -> dict[str, Any]:
    folder = ensure_absent(ws, name, replace=replace)
    restaurants = _conform(restaurants, "restaurants", RESTAURANT_SCHEMA, name)
    reviews = _conform(reviews, "reviews", REVIEW_SCHEMA, name)
    _check_tables(restaurants, reviews)
    restaurants = restaurants_table(restaurants, reviews.group_by("business_id").len("n"), name)
    if not _sorted_by_key(reviews):
        reviews = reviews.sort(["business_id", "idx"])
    with atomic_dir(folder, staging=staging_for(ws, "dataset", name)) as tmp:
        progress(0, 2, "writing tables")
        restaurants.write_parquet(tmp / TABLES[0], compression="zstd", statistics=True)
        reviews.write_parquet(tmp / TABLES[1], compression="zstd", statistics=True, row_group_size=REVIEW_ROW_GROUP)
        progress(1, 2, "hashing tables")
        lock = make_lock(tmp, name, layout, sources, {"restaurants": restaurants.height, "reviews": reviews.height})
        write_json_atomic(tmp / LOCK_NAME, lock)
    progress(2, 2, "done")
    return {**lock, "path": str(folder)}


def write_streamed(
    ws: Workspace,
    name: str,
    stage: Callable[[Path], tuple[pl.DataFrame, Stager, bool]],
    *,
    sources: Callable[[], list[dict[str, Any]]],
    layout: str,
    replace: bool,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Write a dataset whose reviews are staged on disk, all-or-nothing (the import's path).

    Args:
        stage: ``stage(work) -> (restaurants, stager, number)`` reads and checks the source,
            staging its reviews in ``work`` (a folder inside the atomic staging folder, deleted
            before the rename); ``number``: assign idx newest first (flat) or keep it (SCALE).
        sources: the source hashes for the lock, called once the tables are written.
    """
    progress = progress or no_progress
    with dataset_lock(ws, name):
        try:
            folder = ensure_absent(ws, name, replace=replace)
            with atomic_dir(folder, staging=staging_for(ws, "dataset", name)) as tmp:
                work = tmp / "staged"
                restaurants, stager, number = stage(work)
                counts = stager.finish(tmp / TABLES[1], name, number=number, progress=progress)
                if work.exists():  # staged rows never reach the dataset folder
                    shutil.rmtree(work)
                restaurants = restaurants_table(restaurants, counts, name)
                restaurants.write_parquet(tmp / TABLES[0], compression="zstd", statistics=True)
                progress(0, 1, "hashing tables")
                lock = make_lock(tmp, name, layout, sources(),
                                 {"restaurants": restaurants.height, "reviews": stager.rows})
                write_json_atomic(tmp / LOCK_NAME, lock)
        finally:
            remove_empty(staging_for(ws, "dataset", name), ws.staging_dir)
    progress(1, 1, "done")
    return {**lock, "path": str(folder)}


def write_dataset(
    ws: Workspace,
    name: str,
    restaurants: pl.DataFrame,
    reviews: pl.DataFrame,
    *,
    sources: list[Path],
    layout: str,
    replace: bool = False,
) -> dict[str, Any]:
    """Write a dataset from frames already in (or castable to) the contract's columns.

    Missing optional columns become null, ``dataset`` is set to ``name``, ``n_reviews`` is counted
    from ``reviews``; idx need not be contiguous (a dataset built from judgments holds only the
    judged reviews, ``text`` may be null).

    Args:
        sources: the files the frames came from (hashed into the lock).
        layout: a word for the lock, e.g. "judgments".

    Returns:
        The lock (see :mod:`core.datasets.lock`) plus ``path``.

    Raises:
        ValueError: unknown or missing contract columns.
        DataError: duplicate ids, reviews of unknown restaurants, bad dates or stars, wrong types.
        WorkbenchError: the dataset exists and ``replace`` is false.
    """
    return write_tables(
        ws, name, restaurants, reviews, sources=hash_sources(sources, ws.root), layout=layout, replace=replace
    )


def dataset_status(ws: Workspace, name: str) -> tuple[bool, str | None]:
    """(verified, problem) of a dataset, never raising for a broken one."""
    try:
        require_verified(ws, name)
        return True, None
    except (LockError, WorkbenchError) as exc:
        return False, str(exc)


def list_datasets(ws: Workspace) -> list[dict[str, Any]]:
    """One summary per dataset: name, layout, n_restaurants, n_reviews, created_at, verified, problem."""
    out = []
    for name in ws.datasets():
        verified, problem = dataset_status(ws, name)
        try:
            lock = read_lock(ws, name)
        except WorkbenchError:
            lock = {}
        counts = lock.get("counts") or {}
        out.append(
            {
                "name": name,
                "layout": lock.get("layout"),
                "n_restaurants": counts.get("restaurants"),
                "n_reviews": counts.get("reviews"),
                "created_at": lock.get("created_at"),
                "verified": verified,
                "problem": problem,
            }
        )
    return out


def dataset_info(ws: Workspace, name: str) -> dict[str, Any]:
    """The lock of a dataset plus its folder, verification status and review date range.

    Raises:
        UnknownNameError: no such dataset.
    """
    lock = read_lock(ws, name)
    verified, problem = dataset_status(ws, name)
    info: dict[str, Any] = {**lock, "path": str(ws.dataset_dir(name)), "verified": verified, "problem": problem}
    if verified:
        dates = pl.scan_parquet(ws.dataset_dir(name) / TABLES[1], glob=False).select(
            date_min=pl.col("date").min(), date_max=pl.col("date").max(), n_with_text=pl.col("text").count()
        )
        info.update(dates.collect().row(0, named=True))
    return info


def scan_restaurants(ws: Workspace, name: str) -> pl.LazyFrame:
    """The restaurants table of a verified dataset, lazily (polars)."""
    require_verified(ws, name)
    return pl.scan_parquet(ws.dataset_dir(name) / TABLES[0], glob=False)


def scan_reviews(ws: Workspace, name: str) -> pl.LazyFrame:
    """The reviews table of a verified dataset, lazily (polars), sorted by (business_id, idx)."""
    require_verified(ws, name)
    return pl.scan_parquet(ws.dataset_dir(name) / TABLES[1], glob=False)
