"""Streamlit glue shared by app.py and the pages: the page list, sidebar state, caching.

The only module of ``core`` that imports streamlit. Connections are cached with
``st.cache_resource`` (never mutated by callers), frames with ``st.cache_data``; anything that
writes clears the loaders it invalidates with :func:`clear_data_caches`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core.db import Database
from core.progress import Progress
from core.settings import workspace_dir
from core.workspace import Workspace


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


# The one list of pages; app.py registers them in this order and Home links to each.
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
)

# Session-state keys of the shared sidebar (page-prefixed constants, STYLE §6).
SIDEBAR_WORKSPACE = "sidebar.workspace"
SIDEBAR_DATASET = "sidebar.dataset"


def current_workspace() -> Workspace:
    """The workspace chosen in the sidebar (default: settings)."""
    root = st.session_state.get(SIDEBAR_WORKSPACE) or str(workspace_dir())
    return Workspace(Path(root))


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


def clear_data_caches() -> None:
    """Clear every ``st.cache_data`` loader after a write."""
    st.cache_data.clear()


def page_progress(label: str) -> tuple[Progress, Callable[[], None]]:
    """A progress bar in the page fed by the shared callback shape; returns (callback, done)."""
    bar = st.progress(0.0, text=label)

    def update(done: int, total: int, message: str = "") -> None:
        frac = min(1.0, done / total) if total else 0.0
        bar.progress(frac, text=f"{label} — {done:,}/{total:,} {message}".strip())

    return update, bar.empty

