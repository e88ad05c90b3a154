"""Claims on the Results and Ground truth pages: "Copy claim" (Markdown and link) and a claim
opened from its link (``/results?claim=…``), checked against the workspace now.

The statements hold only names the workbench checked and numbers; they are shown in code blocks
(Streamlit's copy button, never rendered as Markdown).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import UnknownNameError, WorkbenchError
from core.release import claims
from core.release.claim_check import CHANGED, HOLDS, check_claim, gt_claim, paired_claim, score_claim
from core.release.links import base_url
from core.release.run_figures import paired_table
from core.runs import view as rv
from core.ui import hosting
from core.ui.text import show
from core.workspace import Workspace

K_CHECKED = "claims.checked"


def copy_claim(build: Callable[[Any], dict[str, Any]], *, key: str, choices: Sequence[Any],
               choice_label: str = "Metric", format_func: Callable[[Any], str] = str, label: str = "Copy claim",
               lazy: bool = False) -> None:
    """A "Copy claim" popover: pick what to claim (a metric, a K), then the claim as Markdown and as
    a link, each with a copy button. ``lazy``: the claim is made only while the popover is open
    (opening it reruns the page), for claims that cost a noticeable time to make."""
    popover = (st.popover(label, icon=":material/content_copy:", key=f"{key}.popover", on_change="rerun") if lazy
               else st.popover(label, icon=":material/content_copy:"))
    if lazy and popover.open is False:
        return
    with popover:
        picked = st.selectbox(choice_label, list(choices), key=f"{key}.choice", format_func=format_func)
        try:
            claim = build(picked)
        except (WorkbenchError, ValueError) as exc:
            st.error(str(exc))
            return
        st.caption("A short statement with its inputs pinned (runs' answers, the GT's sha256 and version). "
                   "`workbench claim check CLAIM` says whether it still holds.")
        st.markdown("**Markdown**")
        st.code(claims.markdown(claim, base_url()), language=None, wrap_lines=True)
        st.markdown("**Link**")
        st.code(claims.link(claim, base_url()), language=None, wrap_lines=True)


@st.cache_data(max_entries=64, show_spinner=False)
def _checked(root: str, token: str, stamp: tuple) -> dict[str, Any]:
    return check_claim(Workspace(Path(root)), claims.decode(token))


def claim_panel(ws: Workspace, token: str) -> None:
    """The claim of a ``?claim=`` link: its statement and whether it holds in this workspace now."""
    try:
        claim = claims.decode(token)
    except WorkbenchError as exc:
        st.error(f"This link's claim cannot be read: {exc}")
        return
    stamp = ws.files_stamp(("runs", "judgments", "overrides", "datasets", "policies", "tasks"))
    with st.container(border=True):
        st.markdown("**Claim from a link**")
        st.code(claims.statement(claim), language=None, wrap_lines=True)
        try:
            result = _checked(str(ws.root), token, stamp)
        except (WorkbenchError, UnknownNameError, ValueError) as exc:
            st.error(f"The claim cannot be checked here: {exc}")
            return
        if result["status"] == HOLDS:
            show(st.success, "Holds in this workspace now: {now}", now=result["now"])
        elif result["status"] == CHANGED:
            show(st.warning, "Changed: now {now} (claimed {was})", now=result["now"], was=result["claimed"])
        else:
            show(st.error, "Inputs changed: {what}", what="; ".join(result["inputs_changed"]))
        for line in result["gt_changes"]:
            show(st.caption, "GT since the claim: {line}", line=line)


def paired_downloads(table: pl.DataFrame, name: str, *, key: str) -> None:
    """CSV and Parquet downloads of a paired per-restaurant table (built on click)."""
    def parquet() -> bytes:
        buffer = io.BytesIO()
        table.write_parquet(buffer)
        return buffer.getvalue()

    a, b = st.columns(2)
    hosting.download_button(a, "Paired table (CSV)", lambda: table.write_csv().encode("utf-8"), key=f"{key}.csv",
                            file_name=f"{name}.csv", mime="text/csv", icon=":material/download:")
    hosting.download_button(b, "Paired table (Parquet)", parquet, key=f"{key}.parquet", file_name=f"{name}.parquet",
                            mime="application/octet-stream", icon=":material/download:")


METRIC_CHOICES = ("ordinal_auprc", "process_score", "consistency_score", "accuracy")


def run_claim(ws: Workspace, run: dict[str, Any], *, key: str) -> None:
    """Copy claim of one run's score (the metric picked) with its interval."""
    copy_claim(lambda metric: score_claim(ws, run, metric), key=key, choices=METRIC_CHOICES,
               format_func=lambda m: claims.METRIC_WORDS.get(m, str(m)))


def pair_claim(ws: Workspace, base: dict[str, Any], other: dict[str, Any], pair: Callable[[], dict[str, Any]], *,
               key: str) -> None:
    """Copy claim of a paired difference other − base (``pair``: the page's cached paired differences)."""
    copy_claim(lambda metric: paired_claim(ws, base, other, metric, pair=pair()), key=key, choices=METRIC_CHOICES,
               format_func=lambda m: claims.METRIC_WORDS.get(m, str(m)))


@st.cache_resource(max_entries=64, show_spinner=False)  # shared: the verdicts' sha256 at 150,000 restaurants costs 0.5 s
def _gt_claim(frame_key: tuple, k: int | None, _build: Callable[[int | None], dict[str, Any]]) -> dict[str, Any]:
    return _build(k)


def gt_claim_button(ws: Workspace, dataset: str, task: str, definition: str, judge: str | None,
                    ks: Sequence[int | None], frame: pl.DataFrame, *, key: str, frame_key: tuple | None = None) -> None:
    """Copy claim of the verdict counts of the GT shown, at the K picked (``frame_key``: the frame's cache
    key, which determines it: the claim is then made once per frame and K)."""
    def build(k: int | None) -> dict[str, Any]:
        return gt_claim(ws, dataset, task, definition, k, judge=judge, frame=frame)

    copy_claim((lambda k: _gt_claim(frame_key, k, build)) if frame_key is not None else build, key=key,
               choices=list(ks), choice_label="K", format_func=lambda k: "all" if k is None else str(k),
               lazy=True)  # the sha256 of 150,000 verdicts: made when the popover is opened


@st.cache_data(max_entries=32, show_spinner=False)
def paired_frame(base: tuple, other: tuple) -> pl.DataFrame:
    """The per-restaurant paired table of two runs (by their results stamps)."""
    # deferred: core.ui.results imports this module (the claim button sits on Results)
    from core.ui import results as ur

    return paired_table(rv.samples_frame(ur.run_view(base)), rv.samples_frame(ur.run_view(other)))
