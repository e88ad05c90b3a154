"""``st.cache_*`` loaders of a judge's measured error (issue 28), keyed by data stamps as in
:mod:`core.ui.cache`: verdict probabilities under an audit or a confusion file, an audit's report,
and one restaurant's knife edge. Each key holds the GT data stamp (judgments, overrides, dataset)
and the stamp of the error's source (a confusion file's mtime and size; an audit's answers and
adjudications, counted in the label store), so a new answer or a new judgment recomputes exactly
what depends on it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core.ground_truth.views import certainty
from core.ui.cache import _digest, data_key, resolved, stamp_of_name, variants_key
from core.workspace import Workspace


@st.cache_data(max_entries=16, show_spinner="Carrying the judge's error into every verdict…")
def _probabilities(root: str, dataset: str, task: str, judge: str, definition: str, ks: tuple[int | None, ...],
                   stamp: str, source: str) -> pl.DataFrame:
    ws = Workspace(Path(root))
    chosen = resolved(ws, definition)
    confusion = certainty.load_source(ws, source, task, judge)
    return certainty.probabilities(ws, dataset, task, judge, chosen.definition, ks, confusion,
                                   constants=chosen.constants).drop("name")


def probabilities(ws: Workspace, dataset: str, task: str, judge: str, definition: str, ks: Sequence[int | None],
                  source: str) -> tuple[pl.DataFrame, str]:
    """(:func:`core.ground_truth.views.certainty.probabilities`, its key) of the judge's error from ``source``."""
    stamp = _digest((data_key(ws, dataset, task), stamp_of_name(ws, definition), certainty.source_stamp(ws, source)))
    return _probabilities(str(ws.root), dataset, task, judge, definition, tuple(ks), stamp, source), stamp


@st.cache_data(max_entries=8, show_spinner="Measuring the judges against the audit…")
def _report(root: str, name: str, stamp: str) -> dict[str, Any]:
    # deferred: sqlalchemy and the label store (~350 ms), only needed when an audit is shown
    from core.ground_truth.audit.report import audit_report
    from core.labeling.store import open_store

    ws = Workspace(Path(root))
    return audit_report(open_store(ws.root), ws, name)


def audit_report(ws: Workspace, dataset: str, task: str, name: str) -> dict[str, Any]:
    """:func:`core.ground_truth.audit.report.audit_report` of the audit ``name`` (every judge of its dataset and task)."""
    stamp = _digest((data_key(ws, dataset, task), certainty.source_stamp(ws, f"audit:{name}")))
    return _report(str(ws.root), name, stamp)


@st.cache_data(max_entries=64, show_spinner="Searching the smallest judgment changes that flip the verdict…")
def _knife_edge(root: str, dataset: str, task: str, judge: str | None, business_id: str, definition: str,
                k: int | None, deep: bool, stamp: str) -> dict[str, Any]:
    from core.ground_truth.knife_edge import knife_edge_ws  # deferred: only needed on Trace's Knife edge tab

    ws = Workspace(Path(root))
    chosen = resolved(ws, definition)
    edge = knife_edge_ws(ws, dataset, task, chosen.definition, business_id, k, judge=judge,
                         constants=chosen.constants, stop_at_first=not deep)
    return edge.to_dict()


def knife_edge(ws: Workspace, dataset: str, task: str, judge: str | None, business_id: str, definition: str,
               k: int | None, *, deep: bool = False) -> dict[str, Any]:
    """One restaurant's knife edge (:func:`core.ground_truth.knife_edge.knife_edge_ws`) as a dict:
    the smallest flip (``deep``: every other verdict's, up to 3 changes)."""
    stamp = _digest((data_key(ws, dataset, task), variants_key(ws)))
    return _knife_edge(str(ws.root), dataset, task, judge, business_id, definition, k, deep, stamp)


def sources(ws: Workspace, dataset: str, task: str) -> list[str]:
    """The audits of ``dataset``/``task`` and the workspace's confusion files (one label store query)."""
    return certainty.sources(ws, dataset, task)
