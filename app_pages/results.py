"""Results: one run's scores with intervals and where it fails; several runs side by side."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core import ui
from core.metrics import charts as rc
from core.ui import claims as uc
from core.ui import results as ur
from core.ui import results_gt, results_noise, results_samples
from core.ui.text import safe, show

K_MODE, K_RUN, K_RUNS, K_BASE, K_OTHER = "results.mode", "results.run", "results.runs", "results.baseline", "results.other"
K_BUCKET = "results.bucket"
K_ALL_K = "results.k_all_runs"
MODES = ("One run", "Compare runs")
NUM = st.column_config.NumberColumn

ws = ui.current_workspace()
ui.page_header("Results")
st.caption("How well each method run scores against GT: ordinal AUPRC, process and consistency with "
           "bootstrap 95 % intervals over restaurants, and which restaurants it gets wrong.")
stamps = ur.shown_stamps(ws, ur.run_stamps(ws.runs_dir))  # the demo: not other visitors' runs
if not stamps:
    st.info(f"No runs yet in {ws.runs_dir} (runs/*/results.json). Start one on the Runs page or with `python -m core run`.")
    st.stop()
labels = ur.run_names(stamps)  # folder names: only the runs a view shows are read
if st.query_params.get("claim"):  # a claim's link: its statement, checked against this workspace now
    uc.claim_panel(ws, st.query_params["claim"])
linked, linked_base = st.query_params.get("run"), st.query_params.get("baseline")
if linked in labels and st.session_state.get("results.linked") != (linked, linked_base):  # a link picks its runs once
    st.session_state[K_RUN], st.session_state["results.linked"] = linked, (linked, linked_base)
    st.session_state[K_MODE] = MODES[0]
    if linked_base in labels and linked_base != linked:  # /results?run=A&baseline=B: A compared with B
        st.session_state[K_RUNS], st.session_state[K_BASE] = [linked_base, linked], linked_base
        st.session_state[K_MODE] = MODES[1]
mode = st.radio("View", MODES, key=K_MODE, horizontal=True, label_visibility="collapsed")

if mode == MODES[0]:
    if st.session_state.get(K_RUN) not in labels:
        st.session_state[K_RUN] = labels[0]
    label = st.selectbox("Run (newest first)", labels, key=K_RUN)
    stamp = stamps[labels.index(label)]
    run, frames = ur.run_head(stamp), ur.run_frames(stamp)
    head, notes = frames["headline"], ur.headline_notes(stamp)
    cols = st.columns(4)
    for col, row in zip(cols, head.iter_rows(named=True), strict=True):
        ci = "" if row["low_pct"] is None else f"95 % CI {row['low_pct']:.1f}–{row['high_pct']:.1f}"
        col.metric(f"{row['metric']} {row['status']}", ur.pct(row["score_pct"]), help=ur.STATUS_HELP)
        col.caption((ci or "no interval") + (f" · {notes['baseline']}" if row["metric"] == "Accuracy" else ""))
    show(st.caption, "{line}", line=notes["incidents"])
    uc.run_claim(ws, run, key="results.claim")
    lines = [*notes["warnings"], *([notes["fallback"]] if notes["fallback"] else [])]
    if lines:  # one box, a paragraph per degenerate score (and an amos spec fallback)
        show(st.warning, "\n\n".join(f"{{l{i}}}" for i in range(len(lines))), **{f"l{i}": t for i, t in enumerate(lines)})
    rank = (run.get("auprc") or {}).get("ranking_score") or {}
    missing = f"; {rank['n_missing']} without it rank at 0" if rank.get("n_missing") else ""
    st.caption(safe("Samples ranked by **{source}**", source=rank.get("source", "unknown")) + missing
               + safe(" · {total} restaurants with GT · method {method} · model {model} · K={k} · policy {policy}",
                      total=f"{run['total']:,}" if isinstance(run.get("total"), int) else run.get("total"),
                      method=run.get("method"), model=run.get("model"), k=run.get("k"),
                      policy=run.get("policy_id")))
    results_gt.gt_panel(ws, stamp)
    results_noise.run_section(ws, stamp)  # the score's spread over GT draws from a judge's measured error
    offline = ur.offline_note(ws, run)
    if offline:
        st.info(offline, icon=":material/info:")
    t_rank, t_proc, t_verd, t_cons, t_rest = st.tabs(["Ranking", "Process", "Verdicts", "Consistency", "Restaurants"])
    with t_rank:
        st.dataframe(frames["thresholds"], hide_index=True, placeholder="—", width="stretch",
                     column_config={c: NUM(format="%.3f") for c in ("AP", "nAP", "prevalence")})
        if frames["pr"].height:
            st.vega_lite_chart(ur.chart_spec("pr", stamp, lambda: rc.pr_chart(frames["pr"])), width="stretch", height=420)
    with t_proc:
        st.vega_lite_chart(ur.chart_spec("proc", stamp, lambda: rc.components_chart(frames["components"])), width="stretch")
        st.caption("Process score = Σ weight × score over the components that are not N/A, divided by their weights.")
    with t_verd:
        scale = list(run.get("verdict_scale") or ["Low Risk", "High Risk", "Critical Risk"])
        st.vega_lite_chart(ur.chart_spec("conf", stamp, lambda: rc.confusion_chart(frames["confusion"], scale)))
    with t_cons:
        st.dataframe(frames["consistency"], hide_index=True, placeholder="—", width="stretch", column_config={
            "business_id": None, "method_verdict": "method verdict", "computed_verdict": "recomputed verdict",
            "computed_score": NUM("recomputed score", format="%g")})
    with t_rest:
        results_samples.restaurants_tab(ws, stamp, scale)
else:
    default = labels[:2]
    st.session_state.setdefault(K_RUNS, default)
    chosen = [c for c in st.multiselect("Runs to compare", labels, key=K_RUNS) if c in labels]
    if len(chosen) < 2:
        st.info("Pick at least two runs.")
        st.stop()
    if st.session_state.get(K_BASE) not in chosen:
        st.session_state[K_BASE] = chosen[0]
    base_label = st.selectbox("Baseline", chosen, key=K_BASE)
    picked = tuple(stamps[labels.index(c)] for c in chosen)
    base = chosen.index(base_label)
    results_gt.compare_gt_note(ws, picked, chosen)
    cmp = ur.comparison(picked, base)
    st.vega_lite_chart(ur.chart_spec("cmp", picked, lambda: rc.comparison_chart(cmp)))
    show(st.markdown, "**Paired differences against {base}** (bootstrap over the restaurants both runs scored against the same GT verdict; "
                "*real* = its 95 % interval excludes 0)", base=base_label)
    st.dataframe(cmp.filter(pl.col("diff_pct").is_not_null()), hide_index=True, placeholder="—", width="stretch", column_config={
        "score_pct": NUM("score %", format="%.1f"), "low_pct": NUM("95 % low", format="%.1f"),
        "high_pct": NUM("95 % high", format="%.1f"), "diff_pct": NUM("difference (points)", format="%+.1f"),
        "diff_low_pct": NUM("difference 95 % low", format="%+.1f"),
        "diff_high_pct": NUM("difference 95 % high", format="%+.1f"), "real": "real"})
    results_noise.compare_section(ws, picked, chosen, base)
    others = [c for c in chosen if c != base_label]
    if st.session_state.get(K_OTHER) not in others:
        st.session_state[K_OTHER] = others[0]
    other = st.selectbox("Restaurants: baseline → run", others, key=K_OTHER)
    other_stamp = picked[chosen.index(other)]
    c_claim, c_csv = st.columns([1, 3], vertical_alignment="bottom")
    with c_claim:
        uc.pair_claim(ws, ur.run_head(picked[base]), ur.run_head(other_stamp), lambda: ur.pair(picked[base], other_stamp),
                      key="results.claim_pair")
    with c_csv:
        uc.paired_downloads(uc.paired_frame(picked[base], other_stamp), f"paired_{other}_vs_{base_label}", key="results.paired")
    b = ur.buckets(picked[base], other_stamp)
    counts = dict(b.group_by("bucket").len().iter_rows())
    kinds = ["newly failing", "newly fixed", "still failing", "still right"] + ["GT differs"] * bool(counts.get("GT differs"))
    for col, name in zip(st.columns(len(kinds)), kinds, strict=True):
        col.metric(name, counts.get(name, 0), help="Left out of every comparison: the two runs were scored against "
                                                   "different GT verdicts here" if name == "GT differs" else None)
    bucket = st.selectbox("List", kinds, key=K_BUCKET)
    st.dataframe(b.filter(pl.col("bucket") == bucket), hide_index=True, placeholder="—", width="stretch", column_config={
        "business_id": None, "bucket": None, "gt_verdict": f"GT verdict of {other}",
        "baseline_gt_verdict": "GT verdict of the baseline" if counts.get("GT differs") else None,
        "baseline_verdict": "baseline verdict", "verdict": f"verdict of {other}"})
    st.markdown("**Each score against K per method** (95 % intervals)")
    every = st.checkbox(f"all {len(stamps)} runs in the workspace (reads each once)", key=K_ALL_K)
    k_stamps = stamps if every else picked
    by_k = ur.scores_by_k(k_stamps)
    if by_k["k"].n_unique() > 1:
        st.vega_lite_chart(ur.chart_spec("k", k_stamps, lambda: rc.k_chart(by_k)))
    else:
        st.caption("These runs share one K: compare runs at several K, or tick all runs.")
