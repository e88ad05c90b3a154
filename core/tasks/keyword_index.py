"""Keyword index (SPEC §2.2): one pass over a dataset's reviews finds the keywords of every task.

Match rule (xnot compatible): a keyword matches when it is a plain substring of the lower-cased
text ("nut" hits "donut", on purpose). For each task the index stores the keywords found, in the
order of the task's keyword list, and ``text_hash`` = the first 16 hex characters of sha256 of
the UTF-8 text (null for a review without text).

``index/{dataset}/keyword_index.parquet``: ``dataset, business_id, review_id, idx, text_hash`` and
one ``kw_{task_id}`` column (list of strings) per task, one row per review, sorted by
(business_id, idx); DuckDB view ``keyword_index``. ``index/{dataset}/stats.json``: per task the
number of reviews, matches, match rate and restaurants with at least one match.

Set-wise: every distinct keyword of every task is searched in one Aho-Corasick pass
(``str.extract_many``); the keyword list of each distinct set of keywords found (few) is made
once and gathered back, instead of building a list per review in Python. ``text_hash`` comes
from the reviews table when it has the column, and is computed otherwise.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from core.base.clock import now_iso
from core.base.errors import IndexMissingError, WorkbenchError
from core.base.files import atomic_dir, read_json, write_json_atomic
from core.base.progress import Progress
from core.base.settings import require_writable
from core.datasets import TABLES, require_verified
from core.datasets.db import ViewSpec, register_view
from core.datasets.staging import text_hashes  # the one sha256[:16] of many texts (also at import)
from core.tasks import Task, get_task, list_tasks, package_tasks
from core.workspace import Workspace
from core.workspace.locks import index_lock, remove_empty, staging_for

INDEX_FILE = "keyword_index.parquet"
STATS_FILE = "stats.json"
KEY_COLUMNS = ("dataset", "business_id", "review_id", "idx", "text_hash")
SLICE_ROWS = 50_000  # rows per parallel keyword search, at least
# Non-ASCII characters whose lower-case form holds an ASCII letter (İ -> "i̇", Kelvin sign -> "k").
SPECIAL_LOWER = ("\u0130", "\u212a")


def kw_column(task_id: str) -> str:
    """Name of a task's keyword-list column in the index (``kw_G1a``)."""
    return f"kw_{task_id}"


register_view(
    ViewSpec(
        "keyword_index",
        f"index/*/{INDEX_FILE}",
        "parquet",
        {"dataset": "VARCHAR", "business_id": "VARCHAR", "review_id": "VARCHAR", "idx": "INTEGER",
         "text_hash": "VARCHAR", **{kw_column(t.task_id): "VARCHAR[]" for t in package_tasks()}},
        "one row per review of every indexed dataset; kw_<task> lists the task's keywords found",
    )
)


def xnot_filename(name: str) -> str:
    """xnot's per-restaurant index file stem: letters, digits, space, '-' and '_' kept, every
    other character turned into '_', stripped, then spaces turned into '_'.

    >>> xnot_filename("Aladdin Pizzeria & Eatery")
    'Aladdin_Pizzeria___Eatery'
    >>> xnot_filename(" Café L'Aube ")
    'Café_L_Aube'
    """
    kept = "".join(c if c.isalnum() or c in " -_" else "_" for c in name)
    return kept.strip().replace(" ", "_")


def text_hash(text: str | None) -> str | None:
    """First 16 hex characters of sha256 of the UTF-8 text (None for None).

    >>> text_hash("")
    'e3b0c44298fc1c14'
    """
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _extract_many(text: pl.Series, patterns: Sequence[str], *, ascii_case_insensitive: bool) -> pl.Series:
    """``str.extract_many`` (overlapping) over slices of ``text`` in parallel threads (polars
    releases the GIL; one slice per core, at least :data:`SLICE_ROWS` rows each)."""
    n = len(text)
    parts = max(1, min(os.cpu_count() or 1, n // SLICE_ROWS))

    def search(bounds: tuple[int, int]) -> pl.Series:
        part = text.slice(bounds[0], bounds[1] - bounds[0])
        return part.str.extract_many(list(patterns), ascii_case_insensitive=ascii_case_insensitive, overlapping=True)

    if parts == 1:
        return search((0, n))
    edges = [n * i // parts for i in range(parts + 1)]
    with ThreadPoolExecutor(max_workers=parts) as pool:
        return pl.concat(list(pool.map(search, zip(edges[:-1], edges[1:], strict=True))), rechunk=False)


def _hits(found: pl.Series, rows: pl.Series | None = None) -> pl.DataFrame:
    """(row, found) pairs of an ``extract_many`` result; ``rows``: its row numbers (default 0, 1, …)."""
    frame = pl.DataFrame({"found": found})
    frame = frame.with_row_index("row") if rows is None else frame.with_columns(rows.alias("row")).select("row", "found")
    return frame.filter(pl.col("found").list.len() > 0).explode("found")


def _lowered_hits(text: pl.Series, keywords: Sequence[str], rows: pl.Series | None = None) -> pl.DataFrame:
    """The rule itself: the keywords found in the lower-cased texts (one case-sensitive pass)."""
    return _hits(_extract_many(text.str.to_lowercase(), keywords, ascii_case_insensitive=False), rows)


def keyword_hits(text: pl.Series, keywords: Sequence[str]) -> pl.DataFrame:
    """One ``(row, kw)`` pair (both UInt32; ``kw`` indexes ``keywords``) per keyword found in a
    text's lower-cased form, searching all keywords in one Aho-Corasick pass.

    With ASCII keywords only, the pass is ASCII case-insensitive over the raw text, which finds
    exactly the matches in the lower-cased text, except in a text holding one of
    :data:`SPECIAL_LOWER` (searched for in the same pass): those few texts are lower-cased and
    searched again. An ASCII keyword with a capital never matches (lower-cased text has none).
    With a non-ASCII keyword every text is lower-cased first. The empty keyword is in every text.

    >>> keyword_hits(pl.Series(["Peanut DONUT", None, "plain"]), ["nut", "peanut"]).sort("kw").rows()
    [(0, 0), (0, 1)]
    """
    ids = {kw: i for i, kw in enumerate(keywords)}
    searched = [kw for kw in ids if kw]
    if not searched:
        hits = pl.DataFrame(schema={"row": pl.UInt32, "found": pl.String})
    elif all(kw.isascii() for kw in searched):
        patterns = [kw for kw in searched if kw == kw.lower()]
        raw = _hits(_extract_many(text, [*patterns, *SPECIAL_LOWER], ascii_case_insensitive=True))
        special = raw.filter(pl.col("found").is_in(SPECIAL_LOWER))["row"].unique()
        hits = raw.filter(~pl.col("row").is_in(special.implode())).with_columns(pl.col("found").str.to_lowercase())
        if special.len():
            hits = pl.concat([hits, _lowered_hits(text.gather(special), patterns, special)])
    else:
        hits = _lowered_hits(text, searched)
    if "" in ids:
        everywhere = pl.DataFrame({"found": text}).with_row_index("row").filter(pl.col("found").is_not_null())
        hits = pl.concat([hits, everywhere.select("row", pl.lit("").alias("found"))])
    return hits.select("row", pl.col("found").replace_strict(ids, return_dtype=pl.UInt32).alias("kw")).unique()


def keyword_sets(text: pl.Series, keywords: Sequence[str]) -> tuple[np.ndarray, list[frozenset[int]]]:
    """(``key``, ``sets``): the set of ``keywords`` (by position) found in each text is ``sets[key[row]]``.

    ``sets[0]`` is the empty set; the distinct sets are few, so per-task lists are made once
    per set and gathered, instead of once per review.
    """
    hits = keyword_hits(text, keywords)
    per_row = hits.sort("row", "kw").group_by("row", maintain_order=True).agg("kw")
    groups = per_row.group_by("kw").agg("row").with_row_index("key", offset=1)
    key = np.zeros(len(text), dtype=np.uint32)
    spread = groups.select("key", "row").explode("row")
    key[spread["row"].to_numpy()] = spread["key"].to_numpy()
    return key, [frozenset(), *map(frozenset, groups["kw"].to_list())]


def task_lists(key: np.ndarray, sets: Sequence[frozenset[int]], keywords: Sequence[str], task: Task) -> pl.Series:
    """Per text, the task's keywords found, in the order of the task's keyword list."""
    position = {kw: i for i, kw in enumerate(keywords)}
    lookup = [[kw for kw in task.keywords if position[kw] in found] for found in sets]
    lists = pl.Series(kw_column(task.task_id), lookup, dtype=pl.List(pl.String))
    return lists.gather(pl.Series(key, dtype=pl.UInt32))


def _known_or_hashed(text: pl.Series, hashes: pl.Series | None) -> pl.Series:
    return text_hashes(text) if hashes is None else hashes.alias("text_hash")


def match_frame(reviews: pl.DataFrame, tasks: Sequence[Task], *, hashes: pl.Series | None = None,
                progress: Progress | None = None) -> pl.DataFrame:
    """Keyword matches of every task for a frame with a ``text`` column (pure, set-wise).

    Returns the input's columns other than ``text`` plus ``text_hash`` and one ``kw_{task}``
    list column per task (empty list when nothing matches or the text is null). All distinct
    keywords of all tasks are searched in one pass (:func:`keyword_hits`). ``hashes`` (the
    texts' :func:`text_hash`, row for row, e.g. the reviews table's ``text_hash`` column)
    skips hashing.
    """
    keywords = list(dict.fromkeys(kw for t in tasks for kw in t.keywords))
    text = reviews["text"]
    if progress:
        progress(0, 3, f"{len(keywords)} keywords, one pass")
    # sha256 runs in Python (holding the GIL) while polars, which releases it, matches keywords
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(_known_or_hashed, text, hashes)
        key, sets = keyword_sets(text, keywords)
        lists = [task_lists(key, sets, keywords, t) for t in tasks]
        if progress:
            progress(1, 3, "text hashes")
        out = reviews.drop("text").with_columns(pending.result(), *lists)
    if progress:
        progress(3, 3, "done")
    return out


def _reviews_sha256(ws: Workspace, dataset: str) -> str:
    """sha256 of the dataset's reviews table, from its verified lock."""
    return require_verified(ws, dataset)["tables"][TABLES[1]]


def _is_current(ws: Workspace, dataset: str, stats: dict[str, Any]) -> bool:
    try:
        return stats.get("reviews_sha256") == _reviews_sha256(ws, dataset)
    except WorkbenchError:
        return False


def _task_stats(index: pl.DataFrame, task: Task, hits_per_kw: dict[str, int] | None = None) -> dict[str, Any]:
    col = kw_column(task.task_id)
    matched = index.filter(pl.col(col).list.len() > 0)
    n = index.height
    counts = matched.select(pl.col(col).explode().value_counts(sort=False)).unnest(col) if matched.height else None
    per_kw = dict.fromkeys(task.keywords, 0)
    if counts is not None:
        per_kw.update(dict(zip(counts[col].to_list(), counts["count"].to_list(), strict=True)))
    rate = matched.height / n if n else 0.0
    return {
        "name": task.name, "keywords_count": len(task.keywords), "reviews": n, "matches": matched.height,
        "match_rate": rate, "match_rate_pct": f"{100 * rate:.1f}%",
        "restaurants": index["business_id"].n_unique(), "restaurants_with_match": matched["business_id"].n_unique(),
        "keyword_counts": per_kw,
    }


def build_index(ws: Workspace, dataset: str, *, tasks: Sequence[str] | None = None,
                progress: Progress | None = None) -> dict[str, Any]:
    """Build (or rebuild) the keyword index of ``dataset`` for ``tasks`` (default: all) in one pass.

    When the existing index is still current (same reviews table), its text hashes are reused
    and, with a task subset, the other tasks' columns are kept, so adding a task costs only its
    keyword search. Writes the Parquet index and ``stats.json`` together (atomically) and
    returns the stats.
    """
    require_writable("build the keyword index")
    started = time.perf_counter()
    specs = [get_task(t, ws) for t in tasks] if tasks is not None else list_tasks(ws)
    reviews_sha256 = _reviews_sha256(ws, dataset)
    # the reviews table is sorted by (business_id, idx) by contract (and locked); its text_hash
    # column (written at import) is used when there, else the hashes are computed here
    path = ws.dataset_dir(dataset) / TABLES[1]
    stored_hash = "text_hash" in pl.scan_parquet(path, glob=False).collect_schema()
    reviews = pl.read_parquet(path, columns=["business_id", "review_id", "idx", "text",
                                             *(["text_hash"] if stored_hash else [])], glob=False)
    hashes = reviews["text_hash"] if stored_hash else None
    reviews = reviews.select(pl.lit(dataset).alias("dataset"), "business_id", "review_id", pl.col("idx").cast(pl.Int32),
                             "text")
    old = _current_index(ws, dataset, reviews.height, {kw_column(t.task_id) for t in specs}, need_hashes=hashes is None)
    if old is not None and hashes is None:
        hashes = old["text_hash"]
    index = match_frame(reviews, specs, hashes=hashes, progress=progress)
    task_objs = {t.task_id: t for t in specs}
    if old is not None:
        index = index.with_columns(old.drop("text_hash", strict=False))
        task_objs.update({c[3:]: get_task(c[3:], ws) for c in old.columns if c.startswith("kw_")})
    stats = {
        "dataset": dataset, "built_at": now_iso(),
        "reviews_sha256": reviews_sha256, "total_reviews": index.height,
        "reviews_with_text": int(reviews["text"].is_not_null().sum()),
        "total_restaurants": index["business_id"].n_unique(),
        "tasks": {tid: _task_stats(index, task_objs[tid]) for tid in sorted(task_objs)},
    }
    staging = staging_for(ws, "index", dataset)
    with index_lock(ws, dataset):
        try:
            with atomic_dir(ws.index_dir(dataset), staging=staging) as tmp:
                index.write_parquet(tmp / INDEX_FILE, compression="zstd", compression_level=1)
                stats["seconds"] = round(time.perf_counter() - started, 3)
                write_json_atomic(tmp / STATS_FILE, stats)
        finally:
            remove_empty(staging, ws.staging_dir)
    return stats


def _current_index(ws: Workspace, dataset: str, n: int, rebuilt: set[str], *,
                   need_hashes: bool = True) -> pl.DataFrame | None:
    """The task columns not being rebuilt (and ``text_hash`` when ``need_hashes``), from an index
    that is still current."""
    path, stats_path = ws.index_dir(dataset) / INDEX_FILE, ws.index_dir(dataset) / STATS_FILE
    if not path.exists() or not stats_path.exists() or not _is_current(ws, dataset, _read_stats(stats_path)):
        return None
    keep = [c for c in pl.scan_parquet(path, glob=False).collect_schema() if c.startswith("kw_") and c not in rebuilt]
    if not keep and not need_hashes:
        return None
    old = pl.read_parquet(path, columns=[*(["text_hash"] if need_hashes else []), *keep], glob=False)
    return old if old.height == n else None


def _read_stats(path: Path) -> dict[str, Any]:
    return read_json(path)


def index_stats(ws: Workspace, dataset: str) -> dict[str, Any] | None:
    """The stats of the dataset's index (None when not built), with ``current`` telling whether
    the reviews are unchanged since it was built."""
    path = ws.index_dir(dataset) / STATS_FILE
    if not path.exists():
        return None
    stats = _read_stats(path)
    stats["current"] = _is_current(ws, dataset, stats)
    return stats


def load_index(ws: Workspace, dataset: str) -> pl.DataFrame:
    """The whole index of a dataset (one row per review); refuses a missing or stale index."""
    stats = index_stats(ws, dataset)
    hint = f"run `python -m core index --dataset {dataset}`"
    if stats is None:
        raise IndexMissingError(f"no keyword index for dataset {dataset!r}: {hint}")
    if not stats["current"]:
        raise IndexMissingError(f"the keyword index of dataset {dataset!r} is out of date (reviews changed): {hint}")
    return pl.read_parquet(ws.index_dir(dataset) / INDEX_FILE, glob=False)


def matched_reviews(ws: Workspace, dataset: str, task: str, *, with_text: bool = False) -> pl.DataFrame:
    """Reviews of ``dataset`` that match ``task``'s keywords, sorted by (business_id, idx).

    Columns: business_id, review_id, idx, text_hash, keywords_found; ``with_text`` adds text,
    date, stars, useful from the reviews table and name, categories from the restaurants table.
    """
    spec = get_task(task, ws)
    index = load_index(ws, dataset)
    col = kw_column(spec.task_id)
    if col not in index.columns:
        raise IndexMissingError(f"the keyword index of {dataset!r} has no task {task}: "
                             f"run `python -m core index --dataset {dataset}`")
    out = index.filter(pl.col(col).list.len() > 0).select(
        "business_id", "review_id", "idx", "text_hash", pl.col(col).alias("keywords_found")
    )
    if with_text:
        folder = ws.dataset_dir(dataset)
        reviews = pl.read_parquet(folder / TABLES[1], columns=["business_id", "idx", "text", "date", "stars", "useful"], glob=False)
        rest = pl.read_parquet(folder / TABLES[0], columns=["business_id", "name", "categories"], glob=False)
        out = out.join(reviews.with_columns(pl.col("idx").cast(pl.Int32)), on=["business_id", "idx"], how="left")
        out = out.join(rest, on="business_id", how="left")
    return out.sort("business_id", "idx")
