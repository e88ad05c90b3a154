"""Page glue of Home: the workspace's unreadable files, cached by the stamps of the files checked."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import streamlit as st

from core import health
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
