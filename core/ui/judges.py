"""The "Compare judges" section of the Ground truth page: two judgment sets side by side.

The comparison is loaded through :mod:`core.ui.cache` (keyed by the task's data stamp).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import polars as pl
import streamlit as st

from core import ui
from core.judgments.judges import charts
from core.ui import cache
from core.ui.text import show
from core.workspace import Workspace

K_A, K_B, K_DEF = "gt.compare.a", "gt.compare.b", "gt.compare.definition"
OFFLINE_PREFIX = "heuristic-"


def is_offline(judge: str | None) -> bool:
    """Whether ``judge`` is one of the offline rule judges (heuristic-v1, heuristic-v2)."""
    return bool(judge) and str(judge).startswith(OFFLINE_PREFIX)


def _trace_link(dataset: str, task: str, definition: str, k: int | None, business_id: str, a: str, b: str) -> str:
    """The Trace page of one restaurant at K with judge ``a`` traced and ``b``'s values beside it."""
    query = {"dataset": dataset, "task": task, "formula": definition, "k": "all" if k is None else k, "business_id": business_id,
             "judge": a, "compare": b}
    return f"/trace?{urlencode(query)}"


def render_compare_judges(ws: Workspace, dataset: str, task: str, judges: list[str], definitions: list[str],
                          ks: list[int | None]) -> None:
    """Pick judges A and B and a formula or policy; show agreement by K, field confusions, differing restaurants."""
    if len(judges) < 2:
        st.caption("Comparing judges needs two judgment sets of this task (e.g. `python -m core judge "
                   "--judge heuristic-v2` next to an LLM judge).")
        return
    if st.session_state.get(K_A) not in judges:
        st.session_state[K_A] = judges[0]
    if st.session_state.get(K_B) not in judges or st.session_state[K_B] == st.session_state[K_A]:
        st.session_state[K_B] = next(j for j in judges if j != st.session_state[K_A])
    if st.session_state.get(K_DEF) not in definitions:
        st.session_state[K_DEF] = definitions[0]
    c_a, c_b, c_def = st.columns(3)
    a = c_a.selectbox("Judge A", judges, key=K_A)
    b = c_b.selectbox("Judge B", judges, key=K_B)
    definition = c_def.selectbox("Formula / policy", definitions, key=K_DEF)
    if a == b:
        st.info("Pick two different judges.")
        return
    report = cache.judge_comparison(ws, dataset, task, a, b, definition, ks)
    show(st.caption, "{both} reviews judged by both; {n_a} only by {a}, {n_b} only by {b}. Values after human corrections.",
         both=f"{report['n_both']:,}", n_a=f"{len(report['only_a']):,}", a=a, n_b=f"{len(report['only_b']):,}", b=b)
    table = pl.DataFrame([
        {"K": "all" if v["k"] is None else str(v["k"]), "Restaurants": v["n_restaurants"],
         "Verdict agreement": f"{100 * v['verdict_agreement']:.1f} %" if v["verdict_agreement"] is not None else "—",
         "κ": "—" if v["verdict_kappa"] is None else f"{v['verdict_kappa']:.2f}",
         "Mean |Δ score|": "—" if v["mean_abs_score_diff"] is None else f"{v['mean_abs_score_diff']:.2f}",
         "Differ": len(v["differing"])}
        for v in report["verdicts"]])
    left, right = st.columns([1, 1])
    left.dataframe(table, hide_index=True, width="stretch")
    ui.show_chart(charts.verdict_agreement_chart(report["verdicts"]), right, width="stretch", height=240)
    st.markdown("**Field by field** (rows: judge A, columns: judge B; the outlined diagonal is agreement)")
    cols = st.columns(len(report["fields"]))
    for col, (name, f) in zip(cols, report["fields"].items(), strict=True):
        kappa = "—" if f["kappa"] is None else f"{f['kappa']:.2f}"
        agreement = "—" if f["agreement"] is None else f"{100 * f['agreement']:.1f} %"
        ui.show_chart(charts.confusion_heatmap(f["confusion"], f["labels"], a=a, b=b,
                                                 title=f"{name.replace('_', ' ')}: {agreement}, κ {kappa}"),
                      col, width="stretch", height=60 * len(f["labels"]) + 60)
    _differing(report, dataset, definition)


def _differing(report: dict[str, Any], dataset: str, definition: str) -> None:
    """One row per differing restaurant × K × review that differs, a column per judgment field."""
    fields = list(report["fields"])
    rows = []
    for v in report["verdicts"]:
        for d in v["differing"]:
            base = {"Trace": _trace_link(dataset, report["task"], definition, v["k"], d["business_id"],
                                             report["a"], report["b"]),
                    "Restaurant": d["name"],
                    "K": "all" if v["k"] is None else str(v["k"]), "Verdict A": d["verdict_a"],
                    "Verdict B": d["verdict_b"]}
            for r in d["reviews"] or [{"idx": None, "fields": {}}]:
                rows.append({**base, "Review idx": r["idx"],
                             **{f.replace("_", " "): (f"{r['fields'][f]['a']} → {r['fields'][f]['b']}"
                                                      if f in r["fields"] else "") for f in fields}})
    if not rows:
        st.success("Both judges give the same verdict for every restaurant at these K.")
        return
    n = sum(len(v["differing"]) for v in report["verdicts"])
    show(st.markdown, "**{n} restaurant × K verdicts differ** (A = {a}, B = {b}; each row a review whose judgments "
         "differ). Open one in Trace to see its reviews and correct a judgment there.", n=n, a=report["a"], b=report["b"])
    st.dataframe(pl.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"Trace": st.column_config.LinkColumn("Trace", display_text="open", width="small"),
                                "K": st.column_config.TextColumn("K", width="small"),
                                "Review idx": st.column_config.NumberColumn("Review idx", width="small")})


def offline_note(ws: Workspace, dataset: str, task: str, judge: str | None, judges: list[str], definition: str,
                 ks: list[int | None]) -> None:
    """Say so when GT comes from an offline judge, with its measured agreement with an LLM judge if any."""
    if not is_offline(judge):
        return
    llm = [j for j in judges if not is_offline(j)]
    text = (f"This ground truth comes from the offline judge {judge}: rules over the review text, no LLM "
            "(see the README for its measured precision and recall on real reviews).")
    if llm and judge:
        report = cache.judge_comparison(ws, dataset, task, judge, llm[0], definition, ks)
        parts = [f"K = {'all' if v['k'] is None else v['k']}: {100 * v['verdict_agreement']:.0f} %"
                 for v in report["verdicts"] if v["verdict_agreement"] is not None]
        text += f" Verdict agreement with the LLM judge {llm[0]} in this workspace: {', '.join(parts)}."
    st.info(text, icon=":material/info:")


def offline_provenance(ws: Workspace, run: dict[str, Any]) -> str | None:
    """For a run's page: which of its parts come from offline rule systems: the model, and the judge
    of the GT the run was scored against (read from the run's own GT lineage, never inferred from
    the workspace's current settings)."""
    parts = []
    model = str(run.get("model") or "")
    if model == "heuristic" or model.startswith("offline"):
        parts.append(f"the method's answers come from the offline model {model} (rules, no LLM)")
    lineage: dict[str, Any] = run["gt"] if isinstance(run.get("gt"), dict) else {}
    judge = lineage.get("judge") or (lineage.get("computed_from") or {}).get("judge")
    if judge and is_offline(str(judge)):
        parts.append(f"the ground truth it was scored against comes from the offline judge {judge} "
                     "(see the README for its measured quality)")
    return ("Offline parts: " + "; ".join(parts) + ".") if parts else None
