"""Page glue of Home: the overview and the workspace's unreadable files, cached by the stamps of
the files they read (shared by every session; a write to any of them is a new key)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import streamlit as st

from core import ui
from core.ui import health, overview, ownership
from core.workspace import Workspace

SCHEMA = {"file": pl.String, "problem": pl.String, "kind": pl.String}


@st.cache_data(max_entries=16, show_spinner=False)
def _problems(root: str, stamps: tuple[tuple[str, int, int], ...]) -> pl.DataFrame:
    ws = Workspace(Path(root))
    return pl.DataFrame(health.problems_table(ws, health.workspace_problems(ws)), schema=SCHEMA)


def problems(ws: Workspace) -> pl.DataFrame:
    """Unreadable files of ``ws`` (file, problem, kind "error" or "note"); re-checked when any of the
    files checked changes (the key is their paths, mtimes and sizes)."""
    return _problems(str(ws.root), health.stamps(ws))


@st.cache_resource(max_entries=8, show_spinner=False)
def _files_overview(root: str, stamp: tuple[tuple[str, int, int], ...]) -> overview.Overview:
    ws = Workspace(Path(root))
    return overview.workspace_overview(ws, ui.database(ws), overview.FILE_SECTIONS)


def workspace_overview(ws: Workspace) -> overview.Overview:
    """The Home overview: the file sections cached on the stamps of :data:`core.ui.overview.FILE_AREAS`
    (read-only: shared by every session), the labeling section read from the label store each time."""
    files = _files_overview(str(ws.root), ws.files_stamp(overview.FILE_AREAS))
    sections = [(title, _shown_runs(ws, frame) if title == overview.RUNS_SECTION else frame, empty)
                for title, frame, empty in files.sections]
    return overview.Overview(files.headline, files.datasets,
                             [*sections, overview.section(ws, ui.database(ws), *overview.LABELING_SECTION)])


def _shown_runs(ws: Workspace, frame: pl.DataFrame | None) -> pl.DataFrame | None:
    """The method runs this session is shown (the demo: not other visitors'; the cache is shared)."""
    if frame is None or frame.is_empty():
        return frame
    shown = ownership.visible(ws, frame["run"].cast(pl.Utf8).to_list())
    return frame.filter(pl.col("run").cast(pl.Utf8).is_in(shown))


def warm(ws: Workspace) -> None:
    """Fill the caches of Home's file sections and unreadable files (core.ui.warmup, at startup)."""
    _files_overview(str(ws.root), ws.files_stamp(overview.FILE_AREAS))
    problems(ws)


def show_problems(ws: Workspace) -> None:
    """A warning with the table of unreadable files, or nothing when every file reads."""
    table = problems(ws)
    if table.is_empty():
        return
    n_errors = table.filter(pl.col("kind") == "error").height
    if n_errors:
        st.warning(f"{n_errors} file{'s' if n_errors > 1 else ''} in this workspace cannot be read and "
                   f"{'are' if n_errors > 1 else 'is'} left out of the lists below.", icon=":material/report:")
    else:
        st.info("A log's last line was torn by a killed writer: it is dropped when the log is read.",
                icon=":material/info:")
    st.dataframe(table, hide_index=True, width="stretch")
