"""Streamlit glue shared by main.py and the pages: the page list, sidebar state, the page frame.

The only package of ``core`` that imports streamlit. Connections are cached here with
``st.cache_resource`` (never mutated by callers); the GT and Trace loaders live in
:mod:`core.ui.cache`, keyed by data stamps, so a write invalidates exactly what it changed and
nothing is ever cleared globally. Text from data or a URL goes through :mod:`core.ui.text`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit import dataframe_util

from core.base.progress import Progress
from core.base.settings import deployment_mode
from core.datasets.db import Database
from core.labeling.render import escape_markdown
from core.workspace import Workspace
from core.workspace.choice import allowed_workspace, workspace_dir


@dataclass(frozen=True)
class PageSpec:
    """One page of the app: its script, title, icon, section of the top navigation and blurb."""

    path: str
    title: str
    icon: str
    section: str
    description: str
    url_path: str
    default: bool = False


# The one list of pages; main.py registers them in this order and Home links to each.
PAGES: tuple[PageSpec, ...] = (
    PageSpec("app_pages/home.py", "Home", ":material/home:", "Workbench",
             "What is in the workspace, with a link to every page.", "home", default=True),
    PageSpec("app_pages/data.py", "Data", ":material/table_view:", "Workbench",
             "Browse restaurants and their reviews in idx order; search and filter.", "data"),
    PageSpec("app_pages/ground_truth.py", "Ground truth", ":material/rule:", "Ground truth", "Verdicts per K, the restaurant × K grid, every primitive, judging status and GT export.", "ground_truth"),
    PageSpec("app_pages/trace.py", "Trace", ":material/account_tree:", "Ground truth", "One restaurant's GT as a formula tree down to its reviews; why K changes it; overrides; what-if.", "trace"),
    PageSpec("app_pages/runs.py", "Runs", ":material/play_circle:", "Runs", "Launch method runs as background jobs with pre-flight figures; progress, cancel, resume; past runs.", "runs"),
    PageSpec("app_pages/results.py", "Results", ":material/leaderboard:", "Runs", "Scores of method runs with 95 % intervals, where they fail, and runs compared.", "results"),
    PageSpec("app_pages/labeling.py", "Labeling", ":material/thumbs_up_down:", "Labeling", "Rate items one at a time on a -1 … +1 slider (blinded, with reservations).", "labeling"),
    PageSpec("app_pages/label_review.py", "Label review", ":material/fact_check:", "Labeling", "Coverage, disagreements and adjudication, agreement statistics and exports (adjudicators).", "label-review"),
    PageSpec("app_pages/analysis.py", "Analysis", ":material/insights:", "Studies", "Perspective study: scores by model and perspective, uplift, the scorer against the blinded human audit.", "analysis"),
    PageSpec("app_pages/gold.py", "Gold answers", ":material/workspace_premium:", "Evaluation", "Score LLM answers against a gold QA set: breakdowns, samples, report comparison, history.", "gold"),
)

# The browser tab's icon: ⚖️ drawn by the browser from an SVG data URL. An emoji string would make
# Streamlit load its emoji table (~0.1 s of the first page's run) and a :material/…: icon is fetched
# from fonts.gstatic.com (fails offline, tells Google who opens the app); the URL is ASCII, so neither.
FAVICON = ("data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'%20viewBox='0%200%20100%20100'%3E"
           "%3Ctext%20y='.9em'%20font-size='90'%3E%E2%9A%96%EF%B8%8F%3C/text%3E%3C/svg%3E")

# Session-state keys of the shared sidebar (page-prefixed constants, STYLE §6).
SIDEBAR_WORKSPACE = "sidebar.workspace"
SIDEBAR_DATASET = "sidebar.dataset"
SIDEBAR_WORKSPACE_OK = "sidebar.workspace_ok"  # the last folder that passed the roots check
SIDEBAR_WORKSPACE_ERROR = "sidebar.workspace_error"


def apply_workspace_choice() -> None:
    """``on_change`` of the sidebar's folder field: accept a folder under the configured roots only.

    A folder outside them (``/etc``, a ``..`` path, a symlink leading out) changes nothing: the
    field goes back to the current workspace and the message says why.
    """
    raw = str(st.session_state.get(SIDEBAR_WORKSPACE) or "")
    if deployment_mode() != "local":
        st.session_state[SIDEBAR_WORKSPACE] = str(current_workspace().root)
        return
    try:
        st.session_state[SIDEBAR_WORKSPACE_OK] = str(allowed_workspace(raw))
        st.session_state.pop(SIDEBAR_WORKSPACE_ERROR, None)
    except ValueError as exc:
        st.session_state[SIDEBAR_WORKSPACE_ERROR] = escape_markdown(f"Not opened: {exc}.")
        st.session_state[SIDEBAR_WORKSPACE] = str(current_workspace().root)


def current_workspace() -> Workspace:
    """The workspace chosen in the sidebar, re-checked against the roots (default: settings).

    Only a folder that passed :func:`apply_workspace_choice` counts; nothing else in the session
    or the URL can point the app at another folder.
    """
    chosen = st.session_state.get(SIDEBAR_WORKSPACE_OK)
    if chosen and deployment_mode() != "local":  # a shared deployment serves one workspace
        chosen = None
    if chosen:
        try:
            return Workspace(allowed_workspace(chosen))
        except ValueError:
            st.session_state.pop(SIDEBAR_WORKSPACE_OK, None)
    return Workspace(workspace_dir())


def current_dataset(ws: Workspace | None = None) -> str | None:
    """The dataset chosen in the sidebar, else the ``dataset`` query parameter, else the first one.

    Pages call this instead of reading the sidebar key directly: a page must also work when it
    runs without the frame (Streamlit's AppTest runs a page script alone after ``switch_page``).
    """
    datasets = (ws or current_workspace()).datasets()
    for candidate in (st.session_state.get(SIDEBAR_DATASET), st.query_params.get("dataset")):
        if candidate in datasets:
            return candidate
    return datasets[0] if datasets else None


@st.cache_resource(show_spinner=False)
def _database(root: str) -> Database:
    return Database(root)


def database(ws: Workspace | None = None) -> Database:
    """The cached DuckDB views of a workspace (shared by sessions; never mutate it)."""
    return _database(str((ws or current_workspace()).root))


@st.cache_data(max_entries=256, show_spinner=False)
def chart_spec(key: tuple, _build: Callable[[], Any]) -> dict:
    """A chart's Vega-Lite spec, built once per ``key``, without Altair's JSON-schema validation.

    Validation is most of a chart's cost (the whole spec is checked against the Vega-Lite schema,
    up to 500 ms a chart on a loaded machine) and changes nothing in it; tests/core/test_charts.py
    builds every chart with validation on. ``key`` must hold everything the chart depends on
    (callers pass the frame's cache key).

    The spec's tabular datasets are stored as the Arrow IPC bytes ``st.vega_lite_chart`` would
    make of them (:func:`streamlit.dataframe_util.convert_anything_to_arrow_bytes`, the call it
    makes for data that are not bytes yet): the chart sent is the same, without converting its
    unchanged data again on every rerun."""
    return arrow_datasets(unvalidated_spec(_build))


def arrow_datasets(spec: dict) -> dict:
    """``spec`` with each named dataset (a list of rows) replaced by its Arrow IPC bytes, as
    ``st.vega_lite_chart`` sends it; GeoJSON features stay inline, as Streamlit leaves them."""
    datasets = spec.get("datasets")
    if isinstance(datasets, dict):
        spec["datasets"] = {name: dataframe_util.convert_anything_to_arrow_bytes(rows)
                            if isinstance(rows, list) and not _is_geojson(rows) else rows
                            for name, rows in datasets.items()}
    return spec


def _is_geojson(rows: list) -> bool:
    first = rows[0] if rows else None
    return isinstance(first, dict) and first.get("type") == "Feature" and "geometry" in first


@st.cache_data(max_entries=128, show_spinner=False)
def table_data(key: tuple, _build: Callable[[], Any]) -> Any:
    """``_build()``'s frame as the Arrow table ``st.dataframe`` makes of it (through pandas, with
    Streamlit's own conversion functions), built once per ``key``: passing it to ``st.dataframe``
    sends the same bytes without converting the unchanged frame on every rerun. Pass
    ``hide_index=True`` (a polars frame has no index, which Streamlit hides). ``key`` must hold
    everything the frame depends on."""
    frame = dataframe_util.convert_anything_to_pandas_df(_build(), ensure_copy=False)
    return dataframe_util.convert_pandas_df_to_arrow_table(frame)


def unvalidated_spec(build: Callable[[], Any]) -> dict:
    """``build()``'s Altair chart as a Vega-Lite dict, without the JSON-schema validation of the
    export, nor the partial one Altair's debug mode runs on each object it constructs or copies
    (~⅓ of building a layered chart). Neither changes the spec; tests/core/test_charts.py builds
    every chart with the full validation of its export."""
    # deferred: altair (~0.3 s of imports) only when a chart is built; Home draws none
    from altair.utils.schemapi import debug_mode

    with debug_mode(False):  # a module flag: another thread's build at worst validates or skips validating
        return build().to_dict(validate=False)


def show_chart(chart: Any, where: Any = None, **kwargs: Any) -> None:
    """Draw an Altair chart in ``where`` (default: the page) as ``st.altair_chart`` would, without
    the schema validation of its export (see :func:`chart_spec`); ``kwargs`` go to
    ``st.vega_lite_chart`` (width, height)."""
    (where or st).vega_lite_chart(unvalidated_spec(lambda: chart), **kwargs)


# The page frame: a compact header (the top navigation sits above it), so the main controls are in
# view without scrolling. Only CSS, no data in it.
FRAME_CSS = """<style>
.stMainBlockContainer, .block-container {padding-top: 3.6rem; padding-bottom: 2rem;}
.stMainBlockContainer h1, .block-container h1 {font-size: 1.55rem; padding: 0 0 0.1rem 0;}
.stMainBlockContainer h2, .block-container h2 {font-size: 1.2rem; padding: 0.4rem 0 0.2rem 0;}
.stMainBlockContainer h3, .block-container h3 {font-size: 1.05rem; padding: 0.3rem 0 0.1rem 0;}
</style>"""


def page_header(title: str, caption: str = "") -> None:
    """The page's title and a one-line caption (trusted page wording, never data)."""
    st.html(FRAME_CSS)
    st.title(title)
    if caption:
        st.caption(caption)


def page_progress(label: str) -> tuple[Progress, Callable[[], None]]:
    """A progress bar in the page fed by the shared callback shape; returns (callback, done)."""
    bar = st.progress(0.0, text=label)

    def update(done: int, total: int, message: str = "") -> None:
        frac = min(1.0, done / total) if total else 0.0
        bar.progress(frac, text=f"{label} — {done:,}/{total:,} {message}".strip())

    def done() -> None:
        bar.empty()

    return update, done

