"""The inputs of a GT: the judgments (overrides applied) with their sha256 and the restaurants, kept
beside a large judgment log while everything a GT reads is unchanged (:func:`data_stamp`).

Shared by the pages (:mod:`core.ground_truth.views.loaders` re-exports these) and the ``gt`` command
(:func:`core.ground_truth.export.gt_frame_for_layout`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from core.base.memo import stamped_frame, stamped_rows_extra
from core.ground_truth.compute import judgments_sha256, load_restaurants
from core.workspace import Workspace

Stamp = tuple[tuple[str, int, int], ...]
MEMO_VERSION = 3  # of the judgments kept beside a log by load_inputs: a new one when their columns or layout change
INPUTS_ROW_GROUP = 16_384  # rows per row group of the kept judgments (sorted by business_id): one restaurant's read
INPUTS_COMPRESSION = "uncompressed"  # 579,716 judgments: 64 MB read in 0.4 s, where zstd's 23 MB take 2 s (loaded cores)


def _stamp_folders(ws: Workspace, dataset: str, task: str) -> tuple[Path, Path, Path, Path]:
    """The dataset folder, judgments folder, overrides file and index folder of ``dataset``/``task``,
    each built (names checked, path kept inside the root) by the workspace's own methods.

    Remembered on this Workspace object, which a page makes anew on every run: the several stamps
    of one run check each (dataset, task) once instead of resolving the same paths every time. The
    memo holds only paths these methods returned; the files are stat'ed on every call."""
    memo = ws.__dict__.setdefault("_stamp_folders", {})  # per object, never module-level
    folders = memo.get((dataset, task))
    if folders is None:
        folders = memo[(dataset, task)] = (ws.dataset_dir(dataset), ws.judgments_dir(dataset, task),
                                           ws.overrides_path(dataset, task), ws.index_dir(dataset))
    return folders


def data_stamp(ws: Workspace, dataset: str, task: str) -> Stamp:
    """(file, mtime_ns, size) of everything a GT of ``dataset``/``task`` reads: a cache key."""
    dataset_dir, folder, overrides, index_dir = _stamp_folders(ws, dataset, task)
    paths = [dataset_dir / name for name in ("dataset.lock.json", "restaurants.parquet", "reviews.parquet")]
    if folder.exists():
        paths.extend(sorted(p for p in folder.iterdir() if not p.name.startswith(".")))  # not the copies beside logs
    paths.append(overrides)
    paths.append(index_dir / "stats.json")
    for kind in ("tasks", "policies"):  # the workspace's own tasks and policies (imported, the demo's)
        if (ws.root / kind).is_dir():
            paths.extend(sorted((ws.root / kind).glob("*.yaml")))
    out = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((str(path.relative_to(ws.root)), st.st_mtime_ns, st.st_size))
    return tuple(out)


@dataclass(frozen=True)
class GTInputs:
    """The judgments (overrides applied) and restaurants of one dataset/task/judge."""

    judgments: pl.DataFrame
    restaurants: pl.DataFrame
    judge: str
    sha256: str


def _kept_inputs(ws: Workspace, dataset: str, task: str, judge: str | None) -> tuple[str, Path, Any, str]:
    """(judge, its log, the computation of its judgments and their sha256, the context they are kept with)."""
    # deferred: core.judgments pulls in pandas (~500 ms), only needed when the inputs are read
    from core.judgments import load_judgments, resolve_judge
    from core.judgments.store import judgment_path

    name = resolve_judge(ws, dataset, task, judge)

    def compute() -> tuple[pl.DataFrame, str]:
        judgments = load_judgments(ws, dataset, task, name)
        return judgments, judgments_sha256(judgments)

    # a large log's judgments as loaded (overrides applied) and their sha256 are kept beside it while
    # everything a GT reads is unchanged (data_stamp): seconds of joins and hashing at 1 M judgments
    return name, judgment_path(ws, dataset, task, name), compute, repr((MEMO_VERSION, name, data_stamp(ws, dataset, task)))


def load_inputs(ws: Workspace, dataset: str, task: str, judge: str | None = None) -> GTInputs:
    """The GT judge's (or ``judge``'s) judgments with overrides applied, and the restaurants."""
    name, path, compute, context = _kept_inputs(ws, dataset, task, judge)
    judgments, sha = stamped_frame(path, "inputs", compute, context=context, row_group_size=INPUTS_ROW_GROUP,
                                   compression=INPUTS_COMPRESSION)
    return GTInputs(judgments, load_restaurants(ws, dataset), name, str(sha))


def load_restaurant_inputs(ws: Workspace, dataset: str, task: str, business_id: str,
                           judge: str | None = None) -> GTInputs:
    """The inputs narrowed to one restaurant (``restaurant_inputs`` of :func:`load_inputs`: the same
    rows), reading only the row groups of the kept judgments that can hold the restaurant's (a trace
    at 1 M judgments: milliseconds, not the whole frame).

    Raises:
        ValueError: no restaurant ``business_id`` in the dataset.
    """
    # deferred: core.datasets pulls in pandas (~500 ms)
    from core.datasets import scan_restaurants

    restaurants = (scan_restaurants(ws, dataset).select("business_id", "name", "categories", "n_reviews")
                   .filter(pl.col("business_id") == business_id).collect())  # load_restaurants' row
    if restaurants.height == 0:
        raise ValueError(f"no restaurant with business_id {business_id!r}")
    name, path, compute, context = _kept_inputs(ws, dataset, task, judge)
    rows, sha = stamped_rows_extra(path, "inputs", compute, "business_id", business_id, context=context,
                                   row_group_size=INPUTS_ROW_GROUP, compression=INPUTS_COMPRESSION)
    return GTInputs(rows, restaurants, name, str(sha))
