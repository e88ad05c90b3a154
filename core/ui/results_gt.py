"""The GT a run was scored against, on the Results page: its status and staleness with "Rescore
against current GT", the scores before and after a rescore, and each compared run's GT.

A run's GT status is cached per (run stamp, stamps of what its GT depends on now), so editing the
GT's inputs recomputes it and nothing else does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st
from streamlit.column_config import NumberColumn

from core.base.errors import WorkbenchError
from core.ground_truth.lineage import describe as describe_gt
from core.ground_truth.views.loaders import data_stamp
from core.metrics.bootstrap import paired_differences
from core.metrics.score import sample_table
from core.runs.records import history, load_results
from core.runs.rescore import gt_status, lineage_of, rescore_run, status_line
from core.ui import hosting
from core.ui.results import Stamp, load_run, run_head
from core.ui.text import safe, show
from core.workspace import Workspace


def _gt_inputs_key(ws: Any, run: dict[str, Any]) -> str:
    """A digest of the stamps of what the run's GT depends on now: the files its GT would be
    computed from (its dataset/task), or the GT file it read."""
    lineage = lineage_of(run) or {}
    dataset, task = lineage.get("dataset"), lineage.get("task")
    stamp: Any
    if lineage.get("origin") in ("file", "imported"):
        path = Path(str(lineage.get("file")))
        path = path if path.is_absolute() else ws.root / path
        stamp = (path.stat().st_mtime_ns, path.stat().st_size) if path.exists() else None
    elif dataset and task and dataset in ws.datasets():
        stamp = data_stamp(ws, str(dataset), str(task))
    else:
        return ""
    return hashlib.sha256(repr(stamp).encode()).hexdigest()


@st.cache_data(max_entries=1024, show_spinner=False)
def _gt_status(root: str, stamp: Stamp, inputs_key: str) -> dict[str, Any]:
    return gt_status(Workspace(Path(root)), run_head(stamp), Path(stamp[0]).parent)


def run_gt_status(ws: Any, stamp: Stamp) -> dict[str, Any]:
    """The run's :func:`core.runs.rescore.gt_status`, computed again when the run or its GT's inputs change."""
    return _gt_status(str(ws.root), stamp, _gt_inputs_key(ws, run_head(stamp)))


def gt_panel(ws: Any, stamp: Stamp) -> None:
    """Which GT the run was scored against (every tab of the run concerns it); when it is stale, why,
    with "Rescore against current GT"; after a rescore, the scores before and after."""
    run = run_head(stamp)
    status = run_gt_status(ws, stamp)
    st.text(status_line(status, stale_hint=None))  # text from files: shown as text, never markdown
    if status["stale"]:
        left, right = st.columns([3, 1], vertical_alignment="center")
        left.warning("This run's GT is stale: " + "; ".join(status["stale_reasons"]) + ". Its scores are against "
                     f"GT version {status['version']}, not what the workspace gives now.", icon=":material/warning:")
        refused = hosting.admin_refusal(ws, "rescore a run")
        if right.button("Rescore against current GT", key="results.rescore", disabled=bool(refused),
                        help=refused or "Scores the stored answers against GT computed now (no LLM call); the earlier "
                                        "scoring is kept and shown beside the new one."):
            rescore(ws, str(run.get("run_id")))
    if status["history"]:
        before_after(ws, stamp)


def rescore(ws: Any, run_id: str) -> None:
    """Rescore ``run_id`` against current GT (a write: gated by the caller) and show the page again."""
    try:
        out = rescore_run(ws, run_id)
    except (WorkbenchError, ValueError) as exc:
        st.error(str(exc))
        return
    st.toast(f"Rescored {run_id}: GT version {out['before']['gt_version']} → {out['after']['gt_version']}")
    st.rerun()


@st.cache_data(max_entries=64, show_spinner=False)
def _before_after(stamp: Stamp, earlier: str) -> pl.DataFrame:
    before, after = load_results(earlier), load_run(stamp)
    pair = paired_differences(sample_table(before), sample_table(after), n_boot=1000, seed=0, same_gt=False)
    rows = []
    for label, name, scale in (("Ordinal AUPRC", "ordinal_auprc", 100.0), ("Process", "process_score", 1.0),
                               ("Consistency", "consistency_score", 1.0), ("Accuracy", "accuracy", 100.0)):
        d = pair["differences"].get(name) or {}

        def pts(x: Any, scale: float = scale) -> float | None:
            return None if x is None else float(x) * scale

        rows.append({"score": label, "before": pts(d.get("a")), "after": pts(d.get("b")), "change": pts(d.get("difference")),
                     "change 95 % low": pts(d.get("low")), "change 95 % high": pts(d.get("high"))})
    return pl.DataFrame(rows, schema={"score": pl.Utf8, "before": pl.Float64, "after": pl.Float64, "change": pl.Float64,
                                      "change 95 % low": pl.Float64, "change 95 % high": pl.Float64})


def before_after(ws: Any, stamp: Stamp) -> None:
    """The run's scores against the GT it had before its latest rescore and against its GT now."""
    run = run_head(stamp)
    folder = Path(stamp[0]).parent
    earlier = history(folder)[-1] / "results.json"
    old = lineage_of(load_results(earlier)) or {}
    with st.expander(safe("Before and after the GT change (rescored {at})", at=run.get("rescored_at") or ""), expanded=True):
        st.text(f"before: {describe_gt(old)}\nafter:  {describe_gt(lineage_of(run))}")
        st.dataframe(_before_after(stamp, str(earlier)), hide_index=True, placeholder="—", width="stretch",
                     column_config={c: NumberColumn(format="%+.1f" if c.startswith("change") else "%.1f")
                                    for c in ("before", "after", "change", "change 95 % low", "change 95 % high")})
        st.caption("Points on the 0–100 scale; the same answers scored against each GT, paired bootstrap over the "
                   "restaurants (1,000 resamples).")


def compare_gt_note(ws: Any, picked: tuple[Stamp, ...], labels: list[str]) -> None:
    """Each run's GT when the compared runs were scored against different GTs or K, and what that
    does to the comparison (only restaurants whose GT verdict agrees are paired)."""
    statuses = [run_gt_status(ws, s) for s in picked]
    ks = {run_head(s).get("k") for s in picked}
    versions = {s["version"] for s in statuses}
    if len(versions) == 1 and len(ks) == 1:
        show(st.caption, "All {n} runs were scored against the same GT: {gt}", n=len(picked), gt=statuses[0]["description"])
        return
    st.warning("These runs were scored against different GTs" + (" and K" if len(ks) > 1 else "") + ": paired "
               "differences, newly failing / fixed and every *real* use only the restaurants whose GT verdict is the "
               "same in both runs (rescore them against one GT to compare every restaurant).", icon=":material/rule:")
    st.dataframe(pl.DataFrame({"run": labels, "K": [run_head(s).get("k") for s in picked],
                               "GT version": [s["version"] for s in statuses],
                               "GT": [s["description"].split(" · version ")[0] for s in statuses],
                               "stale": ["; ".join(s["stale_reasons"]) or None for s in statuses]}),
                 hide_index=True, width="stretch", placeholder="—",
                 column_config={"GT": st.column_config.TextColumn(width="large"), "K": st.column_config.NumberColumn(width=40)})
