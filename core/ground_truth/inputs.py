"""The inputs of a GT: the judgments (overrides applied) with their sha256 and the restaurants, kept
beside a large judgment log while everything a GT reads is unchanged (:func:`data_stamp`).

Shared by the pages (:mod:`core.ground_truth.views.loaders` re-exports these) and the ``gt`` command
(:func:`core.ground_truth.export.gt_frame_for_layout`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from core.base.memo import stamped_frame
from core.ground_truth.compute import judgments_sha256, load_restaurants
from core.workspace import Workspace

Stamp = tuple[tuple[str, int, int], ...]
MEMO_VERSION = 1  # of the judgments kept beside a log by load_inputs: a new one when their columns change


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


def load_inputs(ws: Workspace, dataset: str, task: str, judge: str | None = None) -> GTInputs:
    """The GT judge's (or ``judge``'s) judgments with overrides applied, and the restaurants."""
    # deferred: core.judgments pulls in pandas (~500 ms), only needed when load_inputs() runs
    from core.judgments import load_judgments, resolve_judge
    from core.judgments.store import judgment_path

    name = resolve_judge(ws, dataset, task, judge)

    def compute() -> tuple[pl.DataFrame, str]:
        judgments = load_judgments(ws, dataset, task, name)
        return judgments, judgments_sha256(judgments)

    # a large log's judgments as loaded (overrides applied) and their sha256 are kept beside it while
    # everything a GT reads is unchanged (data_stamp): seconds of joins and hashing at 1 M judgments
    context = repr((MEMO_VERSION, name, data_stamp(ws, dataset, task)))
    judgments, sha = stamped_frame(judgment_path(ws, dataset, task, name), "inputs", compute, context=context)
    return GTInputs(judgments, load_restaurants(ws, dataset), name, str(sha))
