"""What the Trace page loads: one restaurant's GT and the restaurants' names, never the GT of every
restaurant (issue 27: at 150,000 restaurants that frame costs seconds and the page shows one row of it).

Keyed like :mod:`core.ui.cache` by the data stamp (and the variants stamp for a saved variant).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl
import streamlit as st

from core.base.memo import stamped_frame
from core.ground_truth.compute import load_restaurants
from core.ground_truth.views.paging import ColumnLookup, name_frame
from core.ui import cache
from core.workspace import Workspace

LIST_ALL = 1_000  # up to this many restaurants the picker lists them all; beyond, the matches of a search


@st.cache_data(max_entries=64, show_spinner=False)
def _one_frame(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str,
               ks: tuple[int | None, ...], vstamp: str, business_id: str) -> pl.DataFrame:
    one = cache.restaurant_inputs_at(root, dataset, task, judge, stamp, business_id)
    return cache.frame_of(one, root, dataset, task, stamp, definition, ks, (), vstamp)


def restaurant_frame(ws: Workspace, dataset: str, task: str, judge: str | None, definition: str,
                     ks: Sequence[int | None], business_id: str) -> pl.DataFrame:
    """GT of one restaurant at every K of ``ks`` (the rows of :func:`core.ui.cache.gt_frame` for it).

    Raises:
        ValueError: no restaurant ``business_id`` in the dataset.
    """
    return _one_frame(str(ws.root), dataset, task, judge, cache.data_key(ws, dataset, task), definition, tuple(ks),
                      cache.stamp_of_name(ws, definition), business_id)


def check_inputs(ws: Workspace, dataset: str, task: str, judge: str | None, names: pl.DataFrame,
                 business_id: str | None) -> None:
    """Raise what reading the judgments raises (a broken judgment or override file, a judge not
    resolved) before the page draws its pickers, by reading the inputs of ``business_id`` (the first
    of ``names`` when it is not one of them): the same cached read the trace then makes.

    Raises:
        DataError: a judgment log or override file cannot be read.
        WorkbenchError: no GT judge among several, or an unknown judge.
    """
    if not names.height:
        return
    if business_id is None or not names.filter(pl.col("business_id") == business_id).height:
        business_id = str(names["business_id"][0])
    cache.restaurant_inputs_at(str(ws.root), dataset, task, judge, cache.data_key(ws, dataset, task), business_id)


NAMES_VERSION = 1  # of the picker's names kept beside the restaurants table: a new one when they change


def _sorted_names(ws: Workspace, dataset: str) -> pl.DataFrame:
    restaurants = load_restaurants(ws, dataset)  # not the judgments: the names only
    named = name_frame(restaurants.select("business_id", "name"))
    return named.sort(pl.col("name").str.to_lowercase(), "business_id")


@st.cache_resource(max_entries=8, show_spinner=False)  # shared, not copied
def _names(root: str, dataset: str, task: str, judge: str | None, stamp: str) -> pl.DataFrame:
    # deferred: core.datasets pulls in pandas (~500 ms)
    from core.datasets.lock import TABLES

    ws = Workspace(Path(root))
    # kept beside the restaurants table while it is unchanged (150,000 names: 0.9 s to sort under load)
    names, _ = stamped_frame(ws.dataset_dir(dataset) / TABLES[0], "trace-names",
                             lambda: (_sorted_names(ws, dataset), None), context=repr(NAMES_VERSION),
                             compression="uncompressed")
    return names


def restaurant_names(ws: Workspace, dataset: str, task: str, judge: str | None) -> pl.DataFrame:
    """business_id, name (display name) of every restaurant, by name (case-insensitive)."""
    return _names(str(ws.root), dataset, task, judge, cache.data_key(ws, dataset, task))


def names_lookup(names: pl.DataFrame) -> ColumnLookup:
    """business_id -> display name over :func:`restaurant_names`."""
    return ColumnLookup(names, "business_id", "name")


def picker_options(names: pl.DataFrame, selected: str, search: str = "") -> dict[str, str]:
    """business_id -> display name of the restaurant picker: every restaurant up to :data:`LIST_ALL`,
    beyond that the first :data:`LIST_ALL` whose name contains ``search`` (case-insensitive); the
    selected one always (first when it is not among them). In name order."""
    rows = names
    if names.height > LIST_ALL:
        if search.strip():
            rows = names.filter(pl.col("name").str.to_lowercase().str.contains(search.strip().lower(), literal=True))
        rows = rows.head(LIST_ALL)
    out = dict(zip(rows["business_id"].to_list(), rows["name"].to_list(), strict=True))
    if selected not in out:
        hit = names.filter(pl.col("business_id") == selected)
        if hit.height:
            out = {selected: hit["name"][0], **out}
    return out
