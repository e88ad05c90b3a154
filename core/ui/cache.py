"""Every ``st.cache_*`` loader of the Ground truth and Trace pages, keyed by data stamps (the views of
one GT frame: :mod:`core.ui.gt_frame_views`, re-exported here).

One loader per thing, shared by both pages. Each public function takes the workspace and the
names the page chose, computes the *stamp* of the files that thing reads (sizes and mtimes: see
:func:`core.ground_truth.views.data_stamp`) and calls a cached function keyed by it (by its sha256 digest,
which Streamlit hashes far faster than the stamp's nested tuples). A write (a judging
run, an override, a saved variant, the CLI in another process) changes the stamp of exactly the
files it wrote, so the next call recomputes what depends on them and nothing else: there is no
cache clear anywhere, for any user.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import UnknownNameError
from core.ground_truth import KChange, TraceNode, explain_k_change, get_definition, trace_gt, variants
from core.ground_truth import views as gt_views
from core.ground_truth.compute import newest_review_year
from core.ground_truth.coverage import with_review_counts
from core.ground_truth.policies import Policy
from core.tasks import get_task, task_ids
from core.ui import arrow_datasets, chart_spec, gt_frames, table_data, unvalidated_spec  # noqa: F401 (the GT and Trace pages' charts, tables)
from core.ui.gt_frame_views import (  # noqa: F401 (the views of one GT frame: re-exported for the pages)
    FrameViews,
    frame_views,
    grid_chart_spec,
    grid_page,
    picked_spec,
    primitives_page,
    score_series,
    verdict_grid,
)
from core.workspace import Workspace

Changes = tuple[tuple[str, float], ...]


def variants_stamp(ws: Workspace) -> tuple[tuple[str, int, int], ...]:
    """(file, mtime_ns, size) of every saved variant and workspace policy: the cache key of anything naming one."""
    files = [*sorted(variants.variants_dir(ws).glob("*.json")), *sorted(ws.policies_dir.glob("*.yaml"))]
    return tuple((str(p.relative_to(ws.root)), p.stat().st_mtime_ns, p.stat().st_size) for p in files)


def _digest(stamp: tuple) -> str:
    """The sha256 of a stamp's repr. Cached calls take this instead of the stamp itself: Streamlit
    hashes one string per call instead of ~20 nested tuples (most of a cache hit's cost)."""
    return hashlib.sha256(repr(stamp).encode("utf-8")).hexdigest()


def data_key(ws: Workspace, dataset: str, task: str) -> str:
    """The digest of :func:`core.ground_truth.views.data_stamp`: the key of everything read for ``dataset``/``task``."""
    return _digest(gt_views.data_stamp(ws, dataset, task))


def variants_key(ws: Workspace) -> str:
    """The digest of :func:`variants_stamp`."""
    return _digest(variants_stamp(ws))


def frame_key(ws: Workspace, dataset: str, task: str) -> tuple[str, str, str, str]:
    """The stamps a GT frame of ``dataset``/``task`` depends on (for keys of things built from it):
    (root, dataset, task, digest of the data and variants stamps)."""
    return (str(ws.root), dataset, task, _digest((data_key(ws, dataset, task), variants_key(ws))))


@st.cache_data(max_entries=16, show_spinner=False)
def _definitions(root: str, task: str, vstamp: str) -> list[str]:
    ws = Workspace(Path(root))
    return gt_views.definitions(task, ws) + [v.name for v in variants.task_variants(ws, task)]


def definitions(ws: Workspace, task: str) -> list[str]:
    """The task's formulas, policies, then the variants saved in the workspace."""
    return _definitions(str(ws.root), task, variants_key(ws))


@st.cache_resource(max_entries=32, show_spinner=False)  # holds formula objects (functions): not picklable; frozen
def _resolved(root: str, name: str, vstamp: str) -> variants.ResolvedDefinition:
    return variants.resolve_definition(Workspace(Path(root)), name)


def resolved(ws: Workspace, name: str) -> variants.ResolvedDefinition:
    """A formula, policy or saved variant by name."""
    return _resolved(str(ws.root), name, variants_key(ws))


@st.cache_data(max_entries=8, show_spinner=False)
def _status(root: str, dataset: str, task: str, stamp: str) -> gt_views.JudgingStatus:
    return gt_views.judging_status(Workspace(Path(root)), dataset, task)


def judging_status(ws: Workspace, dataset: str, task: str) -> gt_views.JudgingStatus:
    """Reviews, keyword matches, judges and what is left to judge."""
    return _status(str(ws.root), dataset, task, data_key(ws, dataset, task))


@st.cache_data(max_entries=16, show_spinner=False)
def _judge_names(root: str, dataset: str, task: str, stamp: str) -> list[str]:
    # deferred: core.judgments pulls in pandas (~500 ms), only needed when _judge_names() runs
    from core.judgments import list_judges

    return [j["judge"] for j in list_judges(Workspace(Path(root)), dataset, task)]


def judge_names(ws: Workspace, dataset: str, task: str) -> list[str]:
    """The judges with judgments of ``dataset``/``task`` (reading their logs costs ~100 ms a call)."""
    return _judge_names(str(ws.root), dataset, task, data_key(ws, dataset, task))


@st.cache_resource(max_entries=8, show_spinner=False)  # shared, not copied: a pickle of a 150,000-restaurant frame costs seconds
def inputs_at(root: str, dataset: str, task: str, judge: str | None, stamp: str) -> gt_views.GTInputs:
    """:func:`gt_inputs` by the workspace root and the data key (:func:`data_key`)."""
    return gt_views.load_inputs(Workspace(Path(root)), dataset, task, judge)


@st.cache_resource(max_entries=64, show_spinner=False)  # one restaurant's rows: shared, never mutated
def restaurant_inputs_at(root: str, dataset: str, task: str, judge: str | None, stamp: str,
                         business_id: str) -> gt_views.GTInputs:
    """The inputs of one restaurant (:func:`core.ground_truth.views.load_restaurant_inputs`: its row
    groups of the kept judgments, not all of them) by the workspace root and the data key."""
    return gt_views.load_restaurant_inputs(Workspace(Path(root)), dataset, task, business_id, judge)


def gt_inputs(ws: Workspace, dataset: str, task: str, judge: str | None) -> gt_views.GTInputs:
    """The judgments (overrides applied) and restaurants GT is computed from."""
    return inputs_at(str(ws.root), dataset, task, judge, data_key(ws, dataset, task))


@st.cache_data(max_entries=16, show_spinner=False)
def _newest_year(root: str, dataset: str, stamp: str) -> int | None:
    return newest_review_year(Workspace(Path(root)), dataset)


def _dated(root: str, dataset: str, stamp: str, d: Any) -> Any:
    """A policy without a recency reference gets the year of the dataset's newest review (as the
    CLI's GT does), never the year of the judgments at hand."""
    if isinstance(d, Policy) and d.needs_reference:
        year = _newest_year(root, dataset, stamp)
        return d.with_reference_year(year) if year is not None else d
    return d


@st.cache_resource(max_entries=32, show_spinner=False)  # shared, not copied: a pickle of a 150,000-restaurant frame costs seconds
def _frame(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str,
           ks: tuple[int | None, ...], changes: Changes, vstamp: str) -> pl.DataFrame:
    def one_k(k: int | None) -> pl.DataFrame:
        inputs = inputs_at(root, dataset, task, judge, stamp)
        return frame_of(inputs, root, dataset, task, stamp, definition, [k], changes, vstamp)

    return gt_frames.frame_at(root, dataset, task, judge, stamp, definition, ks, changes, vstamp, one_k)  # K by K


def frame_of(inputs: gt_views.GTInputs, root: str, dataset: str, task: str, stamp: str, definition: str,
             ks: Sequence[int | None], changes: Changes, vstamp: str) -> pl.DataFrame:
    """The GT frame of ``inputs`` (every restaurant's, or one's: :func:`gt_views.restaurant_inputs`) at
    ``ks`` of a formula, policy or variant with what-if ``changes``, with the stored review counts."""
    chosen = _resolved(root, definition, vstamp)
    merged = {**(chosen.variant.changes if chosen.variant else {}), **dict(changes)}
    base = get_definition(chosen.base, Workspace(Path(root)))  # the committed one (a workspace policy too)
    # a policy without a recency reference: the dataset's newest review year (as the CLI), recorded in the frame
    year = _newest_year(root, dataset, stamp) if getattr(base, "needs_reference", False) else None
    frame = gt_views.compute_frame(inputs, base, ks, changes=merged, dataset=dataset, task=task, reference_year=year)
    if chosen.variant:
        frame = frame.with_columns(pl.lit(v).alias(k) for k, v in chosen.provenance().items())
    return with_review_counts(frame, inputs.restaurants)


def stamp_of_name(ws: Workspace, name: str, vkey: str | None = None) -> str:
    """The variants key (``vkey`` when the caller read it) for a saved variant's name; "" for a
    committed formula or policy, so that saving a variant never invalidates what does not depend on it."""
    try:
        get_definition(name, ws)
    except UnknownNameError:
        return variants_key(ws) if vkey is None else vkey
    return ""


def gt_frame(ws: Workspace, dataset: str, task: str, judge: str | None, definition: str,
             ks: Sequence[int | None], changes: Mapping[str, float] | None = None) -> pl.DataFrame:
    """GT of every restaurant at every K of a formula, policy or variant (plus what-if ``changes``),
    with each restaurant's stored review count and ``short_of_k``."""
    return _frame(str(ws.root), dataset, task, judge, data_key(ws, dataset, task), definition,
                  tuple(ks), tuple(sorted((changes or {}).items())), stamp_of_name(ws, definition))


def gt_frame_keyed(ws: Workspace, dataset: str, task: str, judge: str | None, definition: str,
                   ks: Sequence[int | None]) -> tuple[pl.DataFrame, tuple]:
    """:func:`gt_frame` and the key of everything built from it, (:func:`frame_key`, judge,
    definition, ks), both from one reading of the stamps: a file written meanwhile (a judging run
    appends all the time) cannot pair the frame with the key of newer data."""
    frame, key, _counts = gt_frame_counted(ws, dataset, task, judge, definition, ks)
    return frame, key


def gt_frame_counted(ws: Workspace, dataset: str, task: str, judge: str | None, definition: str,
                     ks: Sequence[int | None]) -> tuple[pl.DataFrame, tuple, dict[int | None, Any] | None]:
    """:func:`gt_frame_keyed` and the counts of each K made with the frame
    (:func:`core.ui.gt_frames.counts_at`; None when not held), from the same reading of the stamps."""
    dkey, vkey = data_key(ws, dataset, task), variants_key(ws)
    vstamp = stamp_of_name(ws, definition, vkey)
    frame = _frame(str(ws.root), dataset, task, judge, dkey, definition, tuple(ks), (), vstamp)
    counts = gt_frames.counts_at(str(ws.root), dataset, task, judge, dkey, definition, tuple(ks), (), vstamp)
    return frame, ((str(ws.root), dataset, task, _digest((dkey, vkey))), judge, definition, tuple(ks)), counts


@st.cache_data(max_entries=64, show_spinner=False)
def _texts(root: str, dataset: str, business_id: str, stamp: str) -> dict[int, str]:
    return gt_views.review_texts(Workspace(Path(root)), dataset, business_id)


def _one(ws: Workspace, dataset: str, task: str, judge: str | None, business_id: str) -> tuple[Any, dict[int, str]]:
    stamp = data_key(ws, dataset, task)
    one = restaurant_inputs_at(str(ws.root), dataset, task, judge, stamp, business_id)
    return one, _texts(str(ws.root), dataset, business_id, stamp)


@st.cache_data(max_entries=64, show_spinner=False)
def _trace(root: str, dataset: str, task: str, judge: str | None, stamp: str, business_id: str,
           definition: str, k: int | None, vstamp: str) -> TraceNode:
    one, texts = _one(Workspace(Path(root)), dataset, task, judge, business_id)
    chosen = _resolved(root, definition, vstamp)
    return trace_gt(one.judgments, one.restaurants, business_id, _dated(root, dataset, stamp, chosen.definition), k,
                    constants=chosen.constants, texts=texts)


def trace(ws: Workspace, dataset: str, task: str, judge: str | None, business_id: str, definition: str,
          k: int | None) -> TraceNode:
    """One restaurant's trace tree at one K."""
    return _trace(str(ws.root), dataset, task, judge, data_key(ws, dataset, task), business_id,
                  definition, k, stamp_of_name(ws, definition))


@st.cache_data(max_entries=64, show_spinner=False)
def _kchange(root: str, dataset: str, task: str, judge: str | None, stamp: str, business_id: str,
             definition: str, k_from: int | None, k_to: int | None, vstamp: str) -> KChange:
    one, texts = _one(Workspace(Path(root)), dataset, task, judge, business_id)
    chosen = _resolved(root, definition, vstamp)
    return explain_k_change(one.judgments, one.restaurants, business_id, _dated(root, dataset, stamp, chosen.definition),
                            k_from, k_to, constants=chosen.constants, texts=texts)


def kchange(ws: Workspace, dataset: str, task: str, judge: str | None, business_id: str, definition: str,
            k_from: int | None, k_to: int | None) -> KChange:
    """Why one restaurant's GT changes between two K."""
    return _kchange(str(ws.root), dataset, task, judge, data_key(ws, dataset, task), business_id,
                    definition, k_from, k_to, stamp_of_name(ws, definition))


@st.cache_data(max_entries=64, show_spinner=False)
def _info(root: str, dataset: str, business_id: str, stamp: str) -> dict[str, Any]:
    return gt_views.restaurant_info(Workspace(Path(root)), dataset, business_id)


def restaurant_info(ws: Workspace, dataset: str, task: str, business_id: str) -> dict[str, Any]:
    """name, categories, city, state, stars, n_reviews of one restaurant."""
    return _info(str(ws.root), dataset, business_id, data_key(ws, dataset, task))


@st.cache_resource(max_entries=64, show_spinner=False)  # shared, not copied: a pickle of a 150,000-restaurant frame costs seconds
def _restaurant_judgments(root: str, dataset: str, business_id: str, stamps: tuple) -> dict[int, list[dict[str, str]]]:
    # deferred: core.judgments pulls in pandas (~500 ms), only needed when _restaurant_judgments() runs
    from core.judgments import get_gt_judge

    ws = Workspace(Path(root))
    out: dict[int, list[dict[str, str]]] = {}
    for task, stamp in stamps:
        if get_gt_judge(ws, dataset, task) is None:
            continue  # no judge, or several and none chosen: nothing to show as "the" judgment
        try:  # the row groups of the kept judgments that hold this restaurant's, not all of them
            rows = restaurant_inputs_at(root, dataset, task, None, stamp, business_id).judgments
        except ValueError:  # not a restaurant of the dataset: no judgments to show
            continue
        fields = [f.name for f in get_task(task, ws).fields if f.name in rows.columns]
        for row in rows.iter_rows(named=True):
            if row.get("parse_error"):
                continue
            out.setdefault(int(row["idx"]), []).append({"task": task, **{f: str(row[f]) for f in fields}})
    return out


def restaurant_judgments(ws: Workspace, dataset: str, business_id: str) -> dict[int, list[dict[str, str]]]:
    """idx -> the GT judge's judgment of each task (overrides applied) for one restaurant's reviews."""
    stamps = tuple((task, data_key(ws, dataset, task)) for task in task_ids(ws)
                   if ws.judgments_dir(dataset, task).exists())
    return _restaurant_judgments(str(ws.root), dataset, business_id, stamps)


@st.cache_data(max_entries=16, show_spinner="Comparing judges…")
def _judge_comparison(root: str, dataset: str, task: str, a: str, b: str, definition: str,
                      ks: tuple[int | None, ...], stamp: str) -> dict[str, Any]:
    # deferred: core.ground_truth.views.judge_compare pulls in pandas (~500 ms), only needed when _judge_comparison() runs
    from core.ground_truth.views.judge_compare import compare_judges

    return compare_judges(Workspace(Path(root)), dataset, task, a, b, definitions=[definition], ks=list(ks))


def judge_comparison(ws: Workspace, dataset: str, task: str, a: str, b: str, definition: str,
                     ks: Sequence[int | None]) -> dict[str, Any]:
    """Two judges' fields and verdicts compared (:func:`core.ground_truth.views.judge_compare.compare_judges`)."""
    return _judge_comparison(str(ws.root), dataset, task, a, b, definition, tuple(ks),
                             data_key(ws, dataset, task))

