"""What the GT and Trace pages load from a workspace, in pieces the pages can cache.

The pages wrap these in ``st.cache_data`` keyed by :func:`data_stamp` (file sizes and mtimes of
the dataset, the judgment logs and the overrides), so a write made anywhere (the app, the CLI)
invalidates them, and an override made in the app clears them at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from core.base.memo import stamped_frame, stamped_rows_extra
from core.ground_truth import (
    Formula,
    compute_gt_frame,
    compute_policy_gt_frame,
    judgments_sha256,
    list_formulas,
    list_policies,
    load_restaurants,
    normalize_ks,
)
from core.ground_truth.policies import Policy
from core.ground_truth.variants import whatif_definition
from core.ground_truth.views.grid import k_order, with_score
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


def definitions(task: str, ws: Workspace | None) -> list[str]:
    """Names of the task's formulas (v1, v2) then policies (G1_allergy_V2 …, and the workspace's)."""
    return [f.name for f in list_formulas(task)] + [p.policy_id for p in list_policies(ws, task)]


def describe(definition: Formula | Policy) -> str:
    """One line about a formula or policy (a workspace's policy that replaces a built-in says so)."""
    if isinstance(definition, Formula):
        return definition.description
    replaces = "; this workspace's own, in force instead of the built-in" if definition.replaces_builtin else ""
    reading = "; read as ADDM's code computes it" if definition.origin.endswith("read as ADDM's code computes it") else ""
    return f"{definition.title} (policy {definition.policy_id} v{definition.version}{replaces}{reading})"


def parse_ks(values: Sequence[Any] | str) -> list[int | None]:
    """K values from the page (``"25"``, ``50``, ``"all"``), ascending with all last.

    Raises:
        ValueError: a value is not a positive integer or "all", or none is given.
    """
    return k_order(normalize_ks(list(values) if not isinstance(values, str) else values))


def split_ks(values: Sequence[Any]) -> tuple[list[int | None], list[str]]:
    """(valid K ascending with all last, the values that are not a valid K) of the page's K chips.

    >>> split_ks(["25", "abc", "all", "-3", "50"])
    ([25, 50, None], ['abc', '-3'])
    """
    good: list[int | None] = []
    bad: list[str] = []
    for value in values:
        try:
            good.extend(normalize_ks([value]))
        except ValueError:
            bad.append(str(value))
    return k_order(good), bad


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
    """:func:`restaurant_inputs` of :func:`load_inputs` (the same rows), reading only the row groups of
    the kept judgments that can hold the restaurant's (a trace at 1 M judgments: milliseconds, not
    the whole frame).

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


def compute_frame(inputs: GTInputs, definition: str | Formula | Policy, ks: Sequence[int | None], *,
                  changes: Mapping[str, float] | None = None, dataset: str = "", task: str = "",
                  reference_year: int | None = None) -> pl.DataFrame:
    """GT of every restaurant at every K (a what-if when ``changes`` are given), with ``score``
    and the provenance columns dataset, task, judge, judgments_sha256. ``reference_year``: the
    recency reference of a policy that sets none (the dataset's newest review year, as the CLI)."""
    d, constants = whatif_definition(definition, changes, None)
    if isinstance(d, Formula):
        frame = compute_gt_frame(inputs.judgments, inputs.restaurants, d, list(ks), constants=constants)
    else:
        frame = compute_policy_gt_frame(inputs.judgments, inputs.restaurants, d, list(ks), reference_year=reference_year)
    return with_score(frame).with_columns(
        pl.lit(dataset).alias("dataset"), pl.lit(task).alias("task"), pl.lit(inputs.judge).alias("judge"),
        pl.lit(inputs.sha256).alias("judgments_sha256"),
    )


def restaurant_inputs(inputs: GTInputs, business_id: str) -> GTInputs:
    """The inputs narrowed to one restaurant (what a trace needs)."""
    if inputs.restaurants.filter(pl.col("business_id") == business_id).height == 0:
        raise ValueError(f"no restaurant with business_id {business_id!r}")
    return GTInputs(inputs.judgments.filter(pl.col("business_id") == business_id),
                    inputs.restaurants.filter(pl.col("business_id") == business_id), inputs.judge, inputs.sha256)


def restaurant_info(ws: Workspace, dataset: str, business_id: str) -> dict[str, Any]:
    """name, categories, city, state, stars, n_reviews of one restaurant."""
    # deferred: core.datasets pulls in pandas (~500 ms), only needed when restaurant_info() runs
    from core.datasets import scan_restaurants

    rows = (scan_restaurants(ws, dataset).filter(pl.col("business_id") == business_id)
            .select("business_id", "name", "categories", "city", "state", "stars", "n_reviews").collect())
    if rows.height == 0:
        raise ValueError(f"no restaurant with business_id {business_id!r} in dataset {dataset!r}")
    return rows.row(0, named=True)


def review_texts(ws: Workspace, dataset: str, business_id: str) -> dict[int, str]:
    """idx -> full text of one restaurant's reviews (reviews without text are left out)."""
    # deferred: core.datasets pulls in pandas (~500 ms), only needed when review_texts() runs
    from core.datasets import scan_reviews

    rows = (scan_reviews(ws, dataset)
            .filter((pl.col("business_id") == business_id) & pl.col("text").is_not_null())
            .select(pl.col("idx").cast(pl.Int64), "text").collect())
    return dict(zip(rows["idx"].to_list(), rows["text"].to_list(), strict=True))
