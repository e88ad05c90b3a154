"""The Ground truth page's views of one GT frame (names, verdict paths, counts, the grid's and the
primitive table's pages, the grid chart's spec), each computed once per frame key and shared.

Split from :mod:`core.ui.cache` (which re-exports these names): the loaders there read files by
stamps; these take a frame those loaders gave and its key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl
import streamlit as st

from core.ground_truth import views as gt_views
from core.ground_truth.compute import distribution_by_k
from core.ground_truth.coverage import short_counts
from core.ground_truth.views import counts as counts_view
from core.ground_truth.views.paging import ColumnLookup, Page, sorted_page
from core.ui import arrow_datasets, unvalidated_spec

# Views of one GT frame for the Ground truth page. ``key`` is the page's chart key (frame_key,
# judge, definition, ks: see app_pages/ground_truth.py): it determines the frame exactly (the data
# and variants stamps are in it), so the frame itself is passed unhashed (``_frame``) and each view
# is computed once per frame instead of on every rerun.


@dataclass(frozen=True)
class FrameViews:
    """What the GT page reads of a frame beyond the grid: names, verdict paths, counts."""

    names: Mapping[str, str]  # business_id -> display name (gt_views.display_names), looked up in the grid
    paths: Mapping[str, str]  # business_id -> verdict along K ("Low Risk (25) → …")
    short_stored: Mapping[str, int]  # business_id -> reviews stored, for restaurants short of some K
    verdicts: list[str]  # gt_views.verdict_order(frame, scale)
    restaurants: int
    flips: int  # restaurants whose verdict changes with K (gt_views.flips(frame).height)
    grid: pl.DataFrame  # gt_views.verdict_grid_rows(frame): every restaurant in the frame's order (sorted by page)
    short_counts: dict[int | None, int]  # K -> restaurants with fewer reviews than K (coverage.short_counts)
    k_counts: Mapping[int | None, Any] | None = None  # K -> counts made with the frame (views.counts), if held

    def distribution_table(self, frame: pl.DataFrame, scale: Sequence[str]) -> pl.DataFrame:
        """``gt_views.distribution_table(frame, scale)``, from the counts when held."""
        return counts_view.distribution_table_of(self.k_counts, scale) if self.k_counts is not None \
            else gt_views.distribution_table(frame, scale)

    def distribution_by_k(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``distribution_by_k(frame, self.verdicts)``, from the counts when held."""
        return counts_view.distribution_by_k_of(self.k_counts, self.verdicts) if self.k_counts is not None \
            else distribution_by_k(frame, self.verdicts)


@st.cache_resource(max_entries=32, show_spinner=False)  # shared, not copied: a pickle of a 150,000-restaurant frame costs seconds
def _frame_views(key: tuple, scale: tuple[str, ...], _frame: pl.DataFrame,
                 _counts: Mapping[int | None, Any] | None) -> FrameViews:
    full = gt_views.verdict_grid_rows(_frame, keep_hidden=True)  # on whole columns: no dict of every restaurant
    if "_short" in full.columns:
        short = full.filter(pl.col("_short")).select("business_id", pl.col("_stored").alias("stored"))
    else:  # a frame whose K do not line up
        short = (_frame.group_by("business_id", maintain_order=True)
                 .agg(pl.col("short_of_k").any().alias("short"), pl.col("n_reviews_stored").first().alias("stored"))
                 .filter(pl.col("short")) if "short_of_k" in _frame.columns
                 else pl.DataFrame(schema={"business_id": pl.String, "stored": pl.Int64}))
    if _counts is not None:  # made with each K's frame: no scan of every K's rows
        verdicts, shorts = counts_view.verdict_order_of(_counts, scale), counts_view.short_counts_of(_counts)
    else:
        verdicts, shorts = gt_views.verdict_order(_frame, scale), short_counts(_frame)
    return FrameViews(ColumnLookup(full, "business_id", "name"), ColumnLookup(full, "business_id", "path"),
                      ColumnLookup(short, "business_id", "stored"), verdicts, full.height,
                      int((full["changes"] > 0).sum()), full.drop("_short", "_stored", strict=False), shorts, _counts)


def frame_views(key: tuple, frame: pl.DataFrame, scale: Sequence[str] = (),
                counts: Mapping[int | None, Any] | None = None) -> FrameViews:
    """Names, verdict paths, coverage and counts of the GT ``frame`` whose cache key is ``key``
    (``counts``: its K's counts from :func:`gt_frame_counted`, else they are counted here)."""
    return _frame_views(key, tuple(scale), frame, counts)


@st.cache_resource(max_entries=64, show_spinner=False)  # shared, not copied: a pickle of a 150,000-restaurant frame costs seconds
def _grid(key: tuple, flips_only: bool, search: str, rank_by: tuple[str, ...] | None, _frame: pl.DataFrame) -> pl.DataFrame:
    return gt_views.verdict_grid_rows(_frame, flips_only=flips_only, search=search,
                                      rank_by=list(rank_by) if rank_by is not None else None)


def _grid_rows(key: tuple, frame: pl.DataFrame, flips_only: bool, search: str, rank_by: Sequence[str] | None,
               views: FrameViews | None) -> pl.DataFrame:
    if views is not None and not flips_only and not search and rank_by is None:
        return views.grid  # the same call, already made
    return _grid(key, bool(flips_only), search, tuple(rank_by) if rank_by is not None else None, frame)


def verdict_grid(key: tuple, frame: pl.DataFrame, *, flips_only: bool, sort: str, search: str,
                 rank_by: Sequence[str] | None, views: FrameViews | None = None) -> pl.DataFrame:
    """:func:`core.ground_truth.views.verdict_grid` of the GT ``frame`` whose cache key is ``key``: every
    row sorted (``views``: its :func:`frame_views`, whose rows it sorts with the default options)."""
    if sort not in gt_views.SORTS:
        raise ValueError(f"unknown sort {sort!r}; valid: {', '.join(gt_views.SORTS)}")
    rows = _grid_rows(key, frame, flips_only, search, rank_by, views)
    by, descending = gt_views.GRID_ORDERS[sort]
    return rows.sort(by, descending=descending, maintain_order=True).select(gt_views.grid_columns(rows))


@st.cache_resource(max_entries=128, show_spinner=False)  # a page of rows, shared
def _grid_page(key: tuple, flips_only: bool, sort: str, search: str, rank_by: tuple[str, ...] | None,
               number: int, size: int, _frame: pl.DataFrame, _views: FrameViews | None) -> Page:
    rows = _grid_rows(key, _frame, flips_only, search, rank_by, _views)
    by, descending = gt_views.GRID_ORDERS[sort]
    page = sorted_page(rows, by, descending, number, size)
    return replace(page, rows=page.rows.select(gt_views.grid_columns(rows)))


def grid_page(key: tuple, frame: pl.DataFrame, *, flips_only: bool, sort: str, search: str,
              rank_by: Sequence[str] | None, number: int, size: int, views: FrameViews | None = None) -> Page:
    """Page ``number`` (``size`` rows) of :func:`verdict_grid`, selected without sorting every row
    (:func:`core.ground_truth.views.paging.sorted_page`)."""
    if sort not in gt_views.SORTS:
        raise ValueError(f"unknown sort {sort!r}; valid: {', '.join(gt_views.SORTS)}")
    return _grid_page(key, bool(flips_only), sort, search, tuple(rank_by) if rank_by is not None else None,
                      int(number), int(size), frame, views)


@st.cache_data(max_entries=64, show_spinner=False)
def _series(key: tuple, business_id: str, _frame: pl.DataFrame) -> pl.DataFrame:
    return gt_views.score_series(_frame, business_id)


def score_series(key: tuple, frame: pl.DataFrame, business_id: str) -> pl.DataFrame:
    """:func:`core.ground_truth.views.score_series` of one restaurant of the GT ``frame`` whose cache key is ``key``."""
    return _series(key, business_id, frame)



@st.cache_resource(max_entries=32, show_spinner=False)  # shared, not copied: a pickle of a 150,000-restaurant frame costs seconds
def _primitives(table_key: tuple, task: str, definition: str, dataset: str, k: int | None,
                judge_param: str | None, _frame: pl.DataFrame) -> pl.DataFrame:
    return gt_views.primitive_rows(_frame, k)  # unsorted: each page is a selection (primitives_page)


@st.cache_resource(max_entries=64, show_spinner=False)  # a page of rows, shared
def _primitives_page(table_key: tuple, task: str, definition: str, scored: bool, dataset: str, k: int | None,
                     judge_param: str | None, number: int, size: int, _frame: pl.DataFrame) -> Page:
    by, descending = gt_views.PRIMITIVE_ORDER
    page = sorted_page(_primitives(table_key, task, definition, dataset, k, judge_param, _frame), by, descending,
                       number, size)
    if not scored and "score" in page.rows.columns:
        page = replace(page, rows=page.rows.drop("score"))  # always 0 for a rule policy: its rules decide
    return page  # the trace links are made for the rows of the page shown (primitives_section)


def primitives_page(table_key: tuple, frame: pl.DataFrame, choice: Any, dataset: str, k: int | None,
                    judge_param: str | None, number: int, size: int) -> Page:
    """Page ``number`` (of ``size`` rows) of every restaurant of the GT ``frame`` at K=``k`` with every
    primitive, highest score first (:func:`core.ground_truth.views.primitive_table`'s order; ``table_key``:
    the frame's cache key, then k, scored, dataset, task, definition, judge_param)."""
    return _primitives_page(table_key, choice.task, choice.definition, choice.scored, dataset, k, judge_param,
                            int(number), int(size), frame)


# The restaurant × K grid outlines the selected restaurant through one data column ("picked",
# charts.verdict_grid_chart), so picking another restaurant changes nothing else in the spec: the
# spec is built once per grid and its rows re-marked per selection, instead of building the layered
# Altair chart again (~20 ms) on every pick.


def picked_spec(spec: dict, selected: str | None) -> dict | None:
    """``spec`` (a verdict grid built with ``selected=None``) with the rows of ``selected`` marked
    ``picked`` and its dataset renamed as Altair would name it; None when the spec is not shaped so
    (one inline dataset named in the top-level data), and the caller builds it instead."""
    try:
        # deferred: Altair's own naming of inline data (a private function: absent in another Altair,
        # the caller builds the spec); altair is loaded by the chart built before this runs
        from altair.vegalite.v6.api import _dataset_name
    except ImportError:
        return None
    datasets, data = spec.get("datasets"), spec.get("data")
    if not (isinstance(datasets, dict) and len(datasets) == 1 and isinstance(data, dict) and set(data) == {"name"}):
        return None
    ((name, rows),) = datasets.items()
    if name != data["name"] or not isinstance(rows, list) or not all(
            isinstance(r, dict) and "picked" in r and "business_id" in r for r in rows):
        return None
    for row in rows:
        row["picked"] = row["business_id"] == (selected or "")
    new = _dataset_name(rows)
    spec["datasets"], spec["data"] = {new: rows}, {"name": new}
    return spec


@st.cache_data(max_entries=32, show_spinner=False)
def _grid_spec_unpicked(key: tuple, _build: Callable[[str | None], Any]) -> dict:
    return unvalidated_spec(lambda: _build(None))


@st.cache_data(max_entries=256, show_spinner=False)
def _grid_spec(key: tuple, selected: str | None, _build: Callable[[str | None], Any]) -> dict:
    spec = picked_spec(_grid_spec_unpicked(key, _build), selected)  # cache_data hands out a copy
    return arrow_datasets(spec if spec is not None else unvalidated_spec(lambda: _build(selected)))


def grid_chart_spec(key: tuple, selected: str | None, build: Callable[[str | None], Any]) -> dict:
    """The verdict grid's spec with ``selected`` outlined: ``build(selected)``'s, as
    :func:`chart_spec` gives it, built once per ``key`` (which must hold everything but the
    selection) and re-marked per selection."""
    return _grid_spec(key, selected, build)
