"""Keyword index (SPEC §2.2): one pass over a dataset's reviews finds the keywords of every task.

Match rule (xnot compatible): a keyword matches when it is a plain substring of the lower-cased
text ("nut" hits "donut", on purpose). For each task the index stores the keywords found, in the
order of the task's keyword list, and ``text_hash`` = the first 16 hex characters of sha256 of
the UTF-8 text (null for a review without text).

``index/{dataset}/keyword_index.parquet``: ``dataset, business_id, review_id, idx, text_hash`` and
one ``kw_{task_id}`` column (list of strings) per task, one row per review, sorted by
(business_id, idx); DuckDB view ``keyword_index``. ``index/{dataset}/stats.json``: per task the
number of reviews, matches, match rate and restaurants with at least one match.

Set-wise: every distinct keyword is one vectorised ``str.contains(literal=True)`` over the whole
lower-cased column; per task the hits are packed into 64-bit masks, and the keyword list of each
distinct mask (few) is joined back, instead of building a list per review in Python.
"""

from __future__ import annotations

import binascii
import hashlib
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from core.datasets import TABLES, require_verified
from core.db import ViewSpec, register_view
from core.errors import WorkbenchError
from core.files import atomic_dir, read_json, write_json_atomic
from core.locks import index_lock, remove_empty, staging_for
from core.progress import Progress
from core.settings import require_writable
from core.tasks import Task, get_task, list_tasks, package_tasks
from core.workspace import Workspace

INDEX_FILE = "keyword_index.parquet"
STATS_FILE = "stats.json"
KEY_COLUMNS = ("dataset", "business_id", "review_id", "idx", "text_hash")
MASK_BITS = 64
_HASH_DIGEST = type(hashlib.sha256()).digest
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


def _candidates(text: pl.Series, keywords: Sequence[str]) -> pl.Series:
    """Rows that may match: a superset of the rows where a keyword is in ``text.lower()``.

    One Aho-Corasick pass, ASCII case-insensitive, over the raw text. For ASCII keywords this
    misses nothing: an ASCII match in the lower-cased text comes from ASCII characters of the
    text, or from one of :data:`SPECIAL_LOWER`, which are searched for too. With a non-ASCII
    keyword every row with text is a candidate.
    """
    if all(kw.isascii() for kw in keywords):
        return text.str.contains_any([*keywords, *SPECIAL_LOWER], ascii_case_insensitive=True).fill_null(False)
    return text.is_not_null()


def _masks(hits: pl.DataFrame, keywords: Sequence[str], rows: np.ndarray, n: int) -> tuple[pl.DataFrame, list]:
    """Per review, 64-bit masks of the task's keywords found (bit b of mask j = keyword 64j+b)."""
    chunks = [list(keywords[i : i + MASK_BITS]) for i in range(0, len(keywords), MASK_BITS)]
    sub = hits.select(
        pl.sum_horizontal(
            pl.col(kw).cast(pl.UInt64) * pl.lit(1 << b, dtype=pl.UInt64) for b, kw in enumerate(chunk)
        ).alias(f"_m{j}")
        for j, chunk in enumerate(chunks)
    )
    full = {}
    for name in sub.columns:
        values = np.zeros(n, dtype=np.uint64)
        values[rows] = sub[name].to_numpy()
        full[name] = values
    return pl.DataFrame(full, schema=dict.fromkeys(sub.columns, pl.UInt64)), chunks


def _found_lists(masks: pl.DataFrame, chunks: list[list[str]], column: str) -> pl.Series:
    """The keyword list of every mask, computed once per distinct mask and joined back."""
    distinct = masks.unique()
    lists = [
        [kw for chunk, m in zip(chunks, row, strict=True) for b, kw in enumerate(chunk) if m >> b & 1]
        for row in distinct.iter_rows()
    ]
    lookup = distinct.with_columns(pl.Series(column, lists, dtype=pl.List(pl.String)))
    return masks.join(lookup, on=masks.columns, how="left", maintain_order="left")[column]


def text_hashes(texts: pl.Series) -> pl.Series:
    """:func:`text_hash` of every text (null for null), about 1.5 s of CPU per million reviews.

    The loop runs in C (``map`` over slices of the Arrow buffer, then one hex conversion for
    all digests), since Python-level per-review work costs more than sha256 itself.
    """
    arr = texts.cast(pl.String).to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    if len(arr) == 0:
        return pl.Series("text_hash", [], dtype=pl.String)
    _validity, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    data = memoryview(data_buf) if data_buf is not None else memoryview(b"")
    slices = map(slice, offsets[:-1].tolist(), offsets[1:].tolist())
    digests = b"".join(map(_HASH_DIGEST, map(hashlib.sha256, map(data.__getitem__, slices))))
    firsts = np.frombuffer(digests, dtype=np.uint8).reshape(-1, 32)[:, :8]
    hexes = pl.Series("text_hash", np.frombuffer(binascii.hexlify(firsts.tobytes()), dtype="S16")).cast(pl.String)
    return pl.select(pl.when(texts.is_not_null()).then(hexes)).to_series().alias("text_hash")


def _known_or_hashed(text: pl.Series, hashes: pl.Series | None) -> pl.Series:
    return text_hashes(text) if hashes is None else hashes.alias("text_hash")


def match_frame(reviews: pl.DataFrame, tasks: Sequence[Task], *, hashes: pl.Series | None = None,
                progress: Progress | None = None) -> pl.DataFrame:
    """Keyword matches of every task for a frame with a ``text`` column (pure, set-wise).

    Returns the input's columns other than ``text`` plus ``text_hash`` and one ``kw_{task}``
    list column per task (empty list when nothing matches or the text is null). Every distinct
    keyword of all tasks is searched once, on the candidate rows only (:func:`_candidates`).
    ``hashes`` (the texts' :func:`text_hash`, row for row) skips hashing when already known.
    """
    keywords = list(dict.fromkeys(kw for t in tasks for kw in t.keywords))
    total, text, n = len(keywords) + 2, reviews["text"], reviews.height
    # sha256 runs in Python (holding the GIL) while polars, which releases it, matches keywords
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(_known_or_hashed, text, hashes)
        cand = _candidates(text, keywords) if keywords else pl.Series([False] * n, dtype=pl.Boolean)
        rows = np.flatnonzero(cand.to_numpy())
        lower = text.filter(cand).str.to_lowercase()
        columns = []
        for i, kw in enumerate(keywords):
            columns.append(lower.str.contains(kw, literal=True).fill_null(False).alias(kw))
            if progress:
                progress(i + 1, total, f"keyword {kw!r}")
        hits = pl.DataFrame(columns, schema=dict.fromkeys(keywords, pl.Boolean))
        lists = [_found_lists(*_masks(hits.select(t.keywords), t.keywords, rows, n), kw_column(t.task_id))
                 for t in tasks]
        if progress:
            progress(total - 1, total, "text hashes")
        out = reviews.drop("text").with_columns(pending.result(), *lists)
    if progress:
        progress(total, total, "done")
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
    # the reviews table is sorted by (business_id, idx) by contract (and locked)
    reviews = pl.read_parquet(ws.dataset_dir(dataset) / TABLES[1], columns=["business_id", "review_id", "idx", "text"])
    reviews = reviews.select(pl.lit(dataset).alias("dataset"), "business_id", "review_id", pl.col("idx").cast(pl.Int32),
                             "text")
    old = _current_index(ws, dataset, reviews.height, {kw_column(t.task_id) for t in specs})
    index = match_frame(reviews, specs, hashes=None if old is None else old["text_hash"], progress=progress)
    task_objs = {t.task_id: t for t in specs}
    if old is not None:
        index = index.with_columns(old.drop("text_hash"))
        task_objs.update({c[3:]: get_task(c[3:], ws) for c in old.columns if c.startswith("kw_")})
    stats = {
        "dataset": dataset, "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
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


def _current_index(ws: Workspace, dataset: str, n: int, rebuilt: set[str]) -> pl.DataFrame | None:
    """``text_hash`` and the task columns not being rebuilt, from an index that is still current."""
    path, stats_path = ws.index_dir(dataset) / INDEX_FILE, ws.index_dir(dataset) / STATS_FILE
    if not path.exists() or not stats_path.exists() or not _is_current(ws, dataset, _read_stats(stats_path)):
        return None
    keep = [c for c in pl.read_parquet_schema(path) if c.startswith("kw_") and c not in rebuilt]
    old = pl.read_parquet(path, columns=["text_hash", *keep])
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
        raise WorkbenchError(f"no keyword index for dataset {dataset!r}: {hint}")
    if not stats["current"]:
        raise WorkbenchError(f"the keyword index of dataset {dataset!r} is out of date (reviews changed): {hint}")
    return pl.read_parquet(ws.index_dir(dataset) / INDEX_FILE)


def matched_reviews(ws: Workspace, dataset: str, task: str, *, with_text: bool = False) -> pl.DataFrame:
    """Reviews of ``dataset`` that match ``task``'s keywords, sorted by (business_id, idx).

    Columns: business_id, review_id, idx, text_hash, keywords_found; ``with_text`` adds text,
    date, stars, useful from the reviews table and name, categories from the restaurants table.
    """
    spec = get_task(task, ws)
    index = load_index(ws, dataset)
    col = kw_column(spec.task_id)
    if col not in index.columns:
        raise WorkbenchError(f"the keyword index of {dataset!r} has no task {task}: "
                             f"run `python -m core index --dataset {dataset}`")
    out = index.filter(pl.col(col).list.len() > 0).select(
        "business_id", "review_id", "idx", "text_hash", pl.col(col).alias("keywords_found")
    )
    if with_text:
        folder = ws.dataset_dir(dataset)
        reviews = pl.read_parquet(folder / TABLES[1], columns=["business_id", "idx", "text", "date", "stars", "useful"])
        rest = pl.read_parquet(folder / TABLES[0], columns=["business_id", "name", "categories"])
        out = out.join(reviews.with_columns(pl.col("idx").cast(pl.Int32)), on=["business_id", "idx"], how="left")
        out = out.join(rest, on="business_id", how="left")
    return out.sort("business_id", "idx")
