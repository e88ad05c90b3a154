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
K_LISTED, K_PRICE, K_UNPRICED, K_CAP = "runs.listed_models", "runs.price", "runs.unpriced", "runs.max_cost"
K_CONFIRM, K_RETRY = "runs.confirm", "runs.retry_kind"



def spend_controls(model: str, endpoint: str) -> tuple[str | None, bool, float | None]:
    """The model's price (typed when it has none), running it knowingly without one, and the
    run's spending cap; lists the endpoint's models on request. Returns (price, unpriced, cap)."""
    p1, p2 = st.columns(2)
    price, unpriced = None, False
    if glue.is_local(None if endpoint == "default" else endpoint):
        st.text(f"Model used: {model} · a server on this machine: no cost")
        return None, False, None
    if glue.price_for(model) is None:
        price = p1.text_input("Price (USD per million input,output tokens)", key=K_PRICE,
                              placeholder="e.g. 0.15,0.60").strip() or None
        unpriced = p2.checkbox("Run it without a price (cost unknown, no cap)", key=K_UNPRICED, disabled=bool(price))
    cap = st.number_input("Spending cap of this run (USD; 0 = the workspace default)", min_value=0.0, value=0.0,
                          step=0.5, format="%.2f", key=K_CAP)
    try:
        st.text(glue.price_line(model, glue.check_price(price)))
    except ValueError as exc:
        st.error(str(exc))
    return price, unpriced and not price, float(cap) or None


def launch_buttons(plan: dict) -> None:
    """Launch, after a confirmation with its cost when the run calls a paid model."""
    confirm = glue.confirm_line(plan)
    key = glue.confirm_key(plan)
    if st.session_state.get(K_CONFIRM) not in (None, key):  # the form changed since: confirm again
        st.session_state.pop(K_CONFIRM, None)
    if confirm and st.session_state.get(K_CONFIRM) == key:
        st.warning(f"Paid run: {confirm}. Nothing is sent before you confirm.")
        a, b = st.columns([1, 4])
        go = a.button("Confirm and launch", type="primary", key="runs.launch_confirm")
        if b.button("Back", key="runs.launch_back"):
            st.session_state.pop(K_CONFIRM, None)
            st.rerun()
    else:
        go = st.button("Launch run", type="primary", key="runs.launch")
        if go and confirm:  # a paid run: its cost first
            st.session_state[K_CONFIRM] = key
            st.rerun()
    if go:
        st.session_state.pop(K_CONFIRM, None)
        refused, run_id = glue.launch_checked(ws, plan)
        if refused:
            st.error(refused)
        else:
            st.toast(f"Launched {run_id}")
            st.rerun()


ws = ui.current_workspace()
dataset = ui.current_dataset(ws)
ui.page_header("Runs")
st.caption("Run a method over the first K reviews of each restaurant. A run is a background job: it keeps "
           "going when you close this tab, and any session sees its progress.")
if not dataset:
    st.info("No dataset in this workspace. Import one with `python -m core datasets import PATH --name NAME`.")
    st.stop()

locked = glue.hosted_locked(ws)
glue.expire(ws)  # the demo: visitors' runs stopped long ago go
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
    typed = [] if locked else [st.session_state.get(K_MODEL) or OFFLINE_MODEL]  # a typed name stays offered
    choices = list(dict.fromkeys([*glue.model_choices(locked), *st.session_state.get(K_LISTED, []), *typed]))
    model = c4.selectbox("Model", choices, key=K_MODEL, disabled=not uses_llm, accept_new_options=not locked,
                         help="heuristic = the offline model: rules over the reviews, no LLM, no cost. Type any "
                              "model name the endpoint serves, or list them from the endpoint.") or OFFLINE_MODEL
    endpoint = c5.selectbox("Endpoint", glue.endpoint_choices(), key=K_ENDPOINT,
                            disabled=not uses_llm or model == OFFLINE_MODEL)
    k = c6.number_input("K (reviews per restaurant)", min_value=1, max_value=10_000, value=25, step=25, key=K_K)
    c7, c8 = st.columns(2)
    n = c7.number_input("Restaurants (0 = all)", min_value=0, value=0, step=10, key=K_N)
    concurrency = c8.number_input("Concurrency", min_value=1, max_value=64, value=8, key=K_CONC)
    price, unpriced, max_cost = None, False, None
    if locked:
        st.caption(glue.lock_line(ws))
    elif uses_llm and st.button("List the endpoint's models", key="runs.list_models",
                                help="Ask the endpoint which models it serves (its /models); any name can be typed too"):
        try:
            st.session_state[K_LISTED] = glue.list_models(None if endpoint == "default" else endpoint)
            st.toast(f"{len(st.session_state[K_LISTED])} models listed by the endpoint")
            st.rerun()
        except Exception as exc:  # noqa: BLE001 - one line; the form stays usable
            st.error(glue.describe_error(exc))
    if not locked and uses_llm and model != OFFLINE_MODEL:
        price, unpriced, max_cost = spend_controls(model, endpoint)
    gt_options = glue.gt_choices(ws, task, policy, int(k))
    gt_label = st.selectbox("Ground truth to score against", list(gt_options), key=K_GT,
                            help="By default GT is computed from the stored judgments and overrides when the run is "
                                 "scored, and kept with the run; or pick a GT file of this policy and K.")
    config = {"dataset": dataset, "task": task, "policy": policy, "method": method,
              "model": model if uses_llm else OFFLINE_MODEL, "k": int(k), "n": int(n) or None,
              "concurrency": int(concurrency), "endpoint": None if endpoint == "default" else endpoint,
              "gt": gt_options.get(gt_label), "price": price, "unpriced": unpriced,
              "max_cost": max_cost if max_cost is not None or not uses_llm else glue.default_cap(ws)}
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
        about = "≈ " if f.get("sampled") else ""  # counted on a sample of the restaurants, scaled to all
        m2.metric("Calls cached / new", f"{about}{f['cached_calls']:,} / {f['new_calls']:,}")
        m3.metric("Estimated tokens", f"{about}{f['est_prompt_tokens'] + f['est_completion_tokens']:,}")
        m4.metric("Estimated cost, at most", f"{about}${f['est_cost_usd_high']:.4f}" if f["priced"] else "no price",
                  help=f"From ${f['est_cost_usd_low']:.4f} (short answers) to ${f['est_cost_usd_high']:.4f} (long "
                       "answers)" if f["priced"] else "This model has no price: give one to estimate and cap the cost")
    if f.get("sampled"):
        st.caption(f"Calls, tokens and cost estimated from {f['sampled']:,} of the {f['to_run']:,} restaurants "
                   "(drawn with the run's seed) and scaled to all; the run counts every call before it starts.")
    for warning in plan["warnings"]:
        st.warning(warning)
    for name in METHODS[method].prompts:
        with st.expander(f"Prompt {name} (core/methods/prompts/{name}.txt)"):
            st.code(glue.prompt_text(name), language=None, wrap_lines=True)
    st.text(f"GT: {plan['gt_description']}" if plan["gt"] else "No GT for this policy and K: no accuracy.")
    launch_buttons(plan)


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
        refusal = glue.control_refusal(ws, job, "cancel")
        if right.button("Cancel", key=f"runs.cancel.{job['job_id']}", disabled=bool(refusal), help=refusal):
            refused = glue.cancel(ws, job)
            if refused:
                st.error(refused)
            else:
                st.toast(f"Cancel requested for {job['run_id']}")
        if refusal:
            left.caption(refusal)


live()

resumable = glue.resumable(ws)
if resumable:
    st.subheader("Interrupted or cancelled")
    left, right = st.columns([4, 1])
    chosen = left.selectbox("Run to resume", resumable, key="runs.resume_choice")
    if right.button("Resume", key="runs.resume"):
        refused = glue.resume(ws, chosen)
        if refused:
            st.error(refused)
        else:
            st.toast(f"Resuming {chosen}")
            st.rerun()

failed = glue.with_errors(ws)
if failed:
    st.subheader("Retry failed samples")
    st.caption("Asks again only the samples that failed: transport failures (timeouts, 429, 5xx: no answer), "
               "model failures (an answer that could not be used), or both. Finished samples are kept.")
    a, b, c = st.columns([3, 2, 1])
    chosen = a.selectbox("Run", failed, key="runs.retry_choice")
    kind = b.selectbox("Failures to ask again", ["transport", "model", "all"], key=K_RETRY)
    if c.button("Retry failed", key="runs.retry"):
        refused = glue.resume(ws, chosen, retry_errors=kind)
        if refused:
            st.error(refused)
        else:
            st.toast(f"Asking the failed samples of {chosen} again")
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
    paid = bool(table["estimate"].is_not_null().any())  # calls and estimates only where a run called a model
    order = ["results", "status", "method", "model", "policy", "k", "done", "cost_usd"] + (
        ["estimate", "calls"] if paid else []) + ["elapsed_s", "gt"] + (["notes"] if noted else [])  # tokens: Results
    st.dataframe(table, hide_index=True, placeholder="—", width="stretch", column_order=order, column_config={
        "results": st.column_config.LinkColumn("Run", display_text=r"/results\?run=(.*)", width=140,
                                               help="Opens the run's Results"),
        "status": "Status", "method": "Method", "policy": "Policy", "k": st.column_config.NumberColumn("K", width=45),
        "done": st.column_config.TextColumn("Done", help="Samples finished, and how many of them failed"),
        "cost_usd": st.column_config.NumberColumn("Cost", format="$%.4f", width=62),
        "estimate": st.column_config.TextColumn("Estimated", help="The pre-flight's cost range, to read beside the cost"),
        "calls": st.column_config.TextColumn("Calls cached / new", help="LLM calls of the run's last start: taken "
                                             "from the cache / made new (paid); — for the baselines"),
        "elapsed_s": st.column_config.NumberColumn("Time", format="%.1f s", width=52),
        "model": st.column_config.TextColumn("Model", help="— for the baselines, which call no model; heuristic is "
                                                       "the offline model (rules, no LLM)"),
        "gt": st.column_config.TextColumn("GT", help="The GT the run was scored against (computed here, or a GT file) "
                                                     "and its version, a digest of its inputs; 'stale' when they "
                                                     "changed since. Its Results page names it in full and rescores it."),
        "notes": st.column_config.TextColumn("Notes", help="What the figures do not say by themselves, e.g. "
                                             "an amos run that fell back to the task's default spec (Results says why)"),
    })
