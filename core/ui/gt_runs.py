"""Ground truth page, the runs of this GT: which runs were scored against the chosen definition, which
of them are stale, and what the GT change does to them ("What this change does to the runs");
and writing the GT file of one K into the workspace (the Export tab).

Every figure comes from :mod:`core.runs.impact` and :mod:`core.runs.rescore` (the same as
``python -m core gt diff`` and ``runs show``); writes are gated like other writes (never in the
demo mode, admins in the team mode).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.base.stamps import folder_stamps
from core.ground_truth import k_label
from core.ground_truth.export import export_gt
from core.ground_truth.lineage import lineages_by_k
from core.ground_truth.views.loaders import data_stamp
from core.runs import list_runs
from core.runs.impact import diff_versions
from core.runs.rescore import rescore_run
from core.ui import hosting, ownership
from core.ui.text import show
from core.workspace import Workspace

K_RUN = "gt.runs.run"


def _stale_key(ws: Workspace, dataset: str, task: str) -> str:
    stamps = (data_stamp(ws, dataset, task), folder_stamps(ws.runs_dir, "*/summary.json"))
    return hashlib.sha256(repr(stamps).encode()).hexdigest()


@st.cache_data(max_entries=32, show_spinner=False)
def _runs_of(root: str, dataset: str, task: str, base: str, key: str) -> list[dict[str, Any]]:
    rows = []
    for r in list_runs(Workspace(Path(root)), with_gt=True):
        lineage = r["gt"]["lineage"] or {}
        if lineage.get("origin") != "computed" or lineage.get("dataset") != dataset or lineage.get("task") != task:
            continue
        if (lineage.get("definition") or {}).get("name") == base:
            rows.append({"run_id": r["run_id"], "method": r["method"], "model": r["model"], "k": r["k"],
                         "gt": r["gt"]["version"], "stale": r["gt"]["stale"],
                         "why": "; ".join(r["gt"]["stale_reasons"]) or None})
    return rows


@st.cache_data(max_entries=32, show_spinner="Rescoring the run against the GT computed now (in memory)…")
def _impact(root: str, run_id: str, key: str) -> dict[str, Any]:
    return diff_versions(Workspace(Path(root)), run_id)


def runs_section(ws: Workspace, dataset: str, task: str, base: str) -> None:
    """The runs scored against ``base`` (a policy) of this dataset and task, and what a GT change
    does to the stale ones: the restaurants whose verdict moved, why, and each run's score and rank."""
    key = _stale_key(ws, dataset, task)
    rows = _runs_of(str(ws.root), dataset, task, base, key)
    shown = set(ownership.visible(ws, [r["run_id"] for r in rows]))  # the demo: not other visitors' runs
    rows = [r for r in rows if r["run_id"] in shown]
    if not rows:
        show(st.info, "No run of this dataset was scored against GT computed with {base}. Launch one on the Runs page.",
             base=base)
        return
    st.dataframe(pl.DataFrame(rows), hide_index=True, width="stretch", placeholder="—", column_config={
        "run_id": "Run", "k": "K", "gt": st.column_config.TextColumn("GT version", help="A digest of the GT's inputs"),
        "stale": st.column_config.CheckboxColumn("GT stale"), "why": "Why stale"})
    stale = [r["run_id"] for r in rows if r["stale"]]
    if not stale:
        st.caption("Every run of this definition was scored against the GT the workspace gives now.")
        return
    st.subheader("What this change does to the runs")
    if st.session_state.get(K_RUN) not in stale:
        st.session_state[K_RUN] = stale[0]
    run_id = st.selectbox("Stale run (its GT → the GT now)", stale, key=K_RUN)
    try:
        out = _impact(str(ws.root), run_id, key)
    except (WorkbenchError, ValueError) as exc:
        st.error(str(exc))
        return
    impact_view(out)
    refused = hosting.admin_refusal(ws, "rescore runs")
    if st.button(f"Rescore the {len(out['runs'])} run(s) against the GT now", key="gt.runs.rescore",
                 disabled=bool(refused), help=refused or "Their earlier scoring is kept (history/)."):
        for r in out["runs"]:  # the rescores rewrite each run's summary.json: the listing's key moves with it
            rescore_run(ws, r["run_id"])
        st.rerun()


def impact_view(out: dict[str, Any]) -> None:
    """A ``gt diff``: old and new GT in words, the restaurants that change with their causes, the runs."""
    st.text(f"old: {out['old']['description']}\nnew: {out['new']['description']}")
    changed = out["changed"]
    st.markdown(f"**{len(changed)} of {out['n_restaurants']} restaurants change verdict**")
    if changed:
        st.dataframe(pl.DataFrame([{"restaurant": c["name"], "before": c["before"], "after": c["after"],
                                    "because": " · ".join(c["causes"])} for c in changed]),
                     hide_index=True, width="stretch", placeholder="—",
                     column_config={"because": st.column_config.TextColumn("Cause", width="large")})
    rows = []
    for r in out["runs"]:
        d = r["differences"].get("ordinal_auprc") or {}
        rows.append({"run": r["run_id"], "method": r["method"],
                     "AUPRC before": None if r["before"] is None else r["before"] * 100,
                     "AUPRC after": None if r["after"] is None else r["after"] * 100,
                     "change": None if d.get("difference") is None else d["difference"] * 100,
                     "95 % low": None if d.get("low") is None else d["low"] * 100,
                     "95 % high": None if d.get("high") is None else d["high"] * 100,
                     "rank before": r["rank_before"], "rank after": r["rank_after"]})
    st.markdown("**Every run scored against the old GT** (ordinal AUPRC in points; the same answers against "
                "each GT, paired bootstrap over the restaurants)")
    num = st.column_config.NumberColumn
    st.dataframe(pl.DataFrame(rows), hide_index=True, width="stretch", placeholder="—", column_config={
        **{c: num(format="%.1f") for c in ("AUPRC before", "AUPRC after")},
        **{c: num(format="%+.1f") for c in ("change", "95 % low", "95 % high")}})


def write_button(ws: Workspace, dataset: str, task: str, chosen: Any, k: int | None, layout: str) -> None:
    """Write the GT of ``k`` into the workspace (``gt/{dataset}/{task}/``), with its lineage."""
    refused = hosting.admin_refusal(ws, "writing GT files into the workspace")
    if st.button(f"Write into the workspace (gt/{dataset}/{task}/, K={k_label(k)})", key="gt.write",
                 disabled=bool(refused), help=refused or "Runs can then be scored against this file; it records "
                                                         "what it was computed from (its lineage)."):
        try:
            result = export_gt(ws, dataset, task, chosen.definition, [k], layout=layout, constants=chosen.constants,
                               name=chosen.name, provenance=chosen.provenance(),
                               lineages=lineages_by_k(ws, dataset, task, chosen, [k]))
        except (WorkbenchError, ValueError) as exc:
            st.error(str(exc))
            return
        show(st.success, "Wrote {path}", path=result.files[0]["path"])
