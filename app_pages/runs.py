"""Runs: launch a method run as a background job (pre-flight first), follow it, cancel, resume; past runs."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core import ui
from core.llm import OFFLINE_MODEL
from core.methods import METHODS
from core.ui import runs as glue

K_TASK, K_POLICY, K_METHOD, K_MODEL, K_ENDPOINT = "runs.task", "runs.policy", "runs.method", "runs.model", "runs.endpoint"
K_K, K_N, K_CONC, K_ACTIVE, K_GT = "runs.k", "runs.n", "runs.concurrency", "runs.active_jobs", "runs.gt"

ws = ui.current_workspace()
dataset = ui.current_dataset(ws)
ui.page_header("Runs")
st.caption("Run a method over the first K reviews of each restaurant. A run is a background job: it keeps "
           "going when you close this tab, and any session sees its progress.")
if not dataset:
    st.info("No dataset in this workspace. Import one with `python -m core datasets import PATH --name NAME`.")
    st.stop()

locked = glue.hosted_locked(ws)
with st.container(border=True):
    st.subheader("Launch a run")
    c1, c2, c3 = st.columns(3)
    task = c1.selectbox("Task", glue.task_choices(ws), key=K_TASK)
    policies = glue.policy_choices(ws, task)
    if st.session_state.get(K_POLICY) not in policies:  # another task (or workspace): its own default policy
        st.session_state[K_POLICY] = "G1_allergy_V2" if "G1_allergy_V2" in policies else policies[0]
    policy = c2.selectbox("Policy", policies, key=K_POLICY)
    method = c3.selectbox("Method", glue.method_choices(locked), key=K_METHOD,
                          help="; ".join(f"{m}: {METHODS[m].description}" for m in METHODS.names()))
    c4, c5, c6 = st.columns(3)
    uses_llm = METHODS[method].uses_llm
    model = c4.selectbox("Model", glue.model_choices(locked), key=K_MODEL, disabled=not uses_llm,
                         help="heuristic = the offline model: rules over the reviews, no LLM, no cost")
    endpoint = c5.selectbox("Endpoint", glue.endpoint_choices(), key=K_ENDPOINT,
                            disabled=not uses_llm or model == OFFLINE_MODEL)
    k = c6.number_input("K (reviews per restaurant)", min_value=1, max_value=10_000, value=25, step=25, key=K_K)
    c7, c8 = st.columns(2)
    n = c7.number_input("Restaurants (0 = all)", min_value=0, value=0, step=10, key=K_N)
    concurrency = c8.number_input("Concurrency", min_value=1, max_value=64, value=8, key=K_CONC)
    if locked:
        st.caption(glue.lock_line(ws))
    gt_options = glue.gt_choices(ws, task, policy, int(k))
    gt_label = st.selectbox("Ground truth to score against", list(gt_options), key=K_GT,
                            help="By default GT is computed from the stored judgments and overrides when the run is "
                                 "scored, and kept with the run; or pick a GT file of this policy and K.")
    config = {"dataset": dataset, "task": task, "policy": policy, "method": method,
              "model": model if uses_llm else OFFLINE_MODEL, "k": int(k), "n": int(n) or None,
              "concurrency": int(concurrency), "endpoint": None if endpoint == "default" else endpoint,
              "gt": gt_options.get(gt_label)}
    try:
        plan = glue.preflight(str(ws.root), config)
    except Exception as exc:  # noqa: BLE001 - shown as one line; the form stays usable
        st.error(glue.describe_error(exc))
        st.stop()
    f = plan["preflight"]
    if not f["uses_llm"] or f["offline"]:
        m1, m2 = st.columns([1, 3])  # the wider column: the value is a phrase, never cut off
        m1.metric("Samples to run", f"{f['to_run']:,}")
        m2.metric("LLM calls", "none: a baseline" if not f["uses_llm"] else "none: an offline model answers")
    else:
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Samples to run", f"{f['to_run']:,}")
        m2.metric("Calls cached / new", f"{f['cached_calls']:,} / {f['new_calls']:,}")
        m3.metric("Estimated tokens", f"{f['est_prompt_tokens'] + f['est_completion_tokens']:,}")
        m4.metric("Estimated cost", f"${f['est_cost_usd']:.4f}" if f["priced"] else "no price")
    for warning in plan["warnings"]:
        st.warning(warning)
    for name in METHODS[method].prompts:
        with st.expander(f"Prompt {name} (core/methods/prompts/{name}.txt)"):
            st.code(glue.prompt_text(name), language=None, wrap_lines=True)
    st.text(f"GT: {plan['gt_description']}" if plan["gt"] else "No GT for this policy and K: no accuracy.")
    if st.button("Launch run", type="primary", key="runs.launch"):
        refused = glue.launch_checked(ws, plan)
        if refused:
            st.error(refused)
        else:
            glue.preflight.clear()
            st.toast(f"Launched {plan['run_id']}")
            st.rerun()


@st.fragment(run_every=1.0)
def live() -> None:
    jobs = glue.active_jobs(ws)
    ids = {job["job_id"] for job in jobs}
    if set(st.session_state.get(K_ACTIVE, ())) - ids:  # a run ended: refresh the whole page (past runs)
        st.session_state[K_ACTIVE] = sorted(ids)
        st.rerun(scope="app")
    st.session_state[K_ACTIVE] = sorted(ids)
    st.subheader("In progress")
    if not jobs:
        st.caption("No run is in progress.")
        return
    for job in jobs:
        s = job["run"]
        done, total = int(s.get("done") or 0), int(s.get("total") or 0)
        eta = f", ETA {s['eta_s']:.0f} s" if s.get("eta_s") is not None else ""
        text = (f"{job['run_id']}: {done:,}/{total:,} samples, {s.get('errors') or 0} errors, "
                f"{int(s.get('prompt_tokens') or 0) + int(s.get('completion_tokens') or 0):,} tokens, "
                f"${float(s.get('cost_usd') or 0):.4f}{eta}") if total else f"{job['run_id']}: starting…"
        left, right = st.columns([5, 1])
        left.progress(min(1.0, done / total) if total else 0.0, text=text)
        if right.button("Cancel", key=f"runs.cancel.{job['job_id']}"):
            glue.cancel(ws, job)
            st.toast(f"Cancel requested for {job['run_id']}")


live()

resumable = glue.resumable(ws)
if resumable:
    st.subheader("Interrupted or cancelled")
    left, right = st.columns([4, 1])
    chosen = left.selectbox("Run to resume", resumable, key="runs.resume_choice")
    if right.button("Resume", key="runs.resume"):
        glue.resume(ws, chosen)
        st.toast(f"Resuming {chosen}")
        st.rerun()

st.subheader("Past runs")
table = glue.runs_table(ws)
if table.is_empty():
    st.caption("No runs yet.")
else:
    noted = bool(table["notes"].str.len_chars().sum())
    table = table.with_columns(pl.when(pl.col("errors") > 0)  # done and failed in one cell: the table fits 1280 px
                               .then(pl.format("{} · {} failed", pl.col("done"), pl.col("errors")))
                               .otherwise(pl.col("done").cast(pl.Utf8)).alias("done"))
    order = ["results", "status", "method", "model", "policy", "k", "done", "cost_usd", "elapsed_s", "gt"] + (
        ["notes"] if noted else [])  # tokens: on the run's Results
    st.dataframe(table, hide_index=True, placeholder="—", width="stretch", column_order=order, column_config={
        "results": st.column_config.LinkColumn("Run", display_text=r"/results\?run=(.*)", width=140,
                                               help="Opens the run's Results"),
        "status": "Status", "method": "Method", "policy": "Policy", "k": st.column_config.NumberColumn("K", width=45),
        "done": st.column_config.TextColumn("Done", help="Samples finished, and how many of them failed"),
        "cost_usd": st.column_config.NumberColumn("Cost", format="$%.4f", width=62),
        "elapsed_s": st.column_config.NumberColumn("Time", format="%.1f s", width=52),
        "model": st.column_config.TextColumn("Model", help="— for the baselines, which call no model; heuristic is "
                                                       "the offline model (rules, no LLM)"),
        "gt": st.column_config.TextColumn("GT", help="The GT the run was scored against (computed here, or a GT file) "
                                                     "and its version, a digest of its inputs; 'stale' when they "
                                                     "changed since. Its Results page names it in full and rescores it."),
        "notes": st.column_config.TextColumn("Notes", help="What the figures do not say by themselves, e.g. "
                                             "an amos run that fell back to the task's default spec (Results says why)"),
    })
