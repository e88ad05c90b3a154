"""Gold answers: score LLM answers against a gold QA set (SPEC §8), break results down, compare
reports, follow a set's history and send answers to human raters."""

from __future__ import annotations

import streamlit as st

from core import ui
from core.base.errors import WorkbenchError
from core.base.settings import openai_configured
from core.gold import charts, store
from core.gold.accuracy import ACCURACY_METHODS
from core.gold.scoring import STATUSES
from core.gold.send import send_to_labeling
from core.ui import gold as ug
from core.ui.text import show

K_SET, K_SOURCE, K_METHOD, K_MODEL, K_ACC_MODEL = "gold.set", "gold.source", "gold.method", "gold.model", "gold.acc_model"
K_STATUS, K_SAMPLE, K_A, K_B, K_PROJECT, K_FLASH = ("gold.status", "gold.sample", "gold.report_a", "gold.report_b",
                                                    "gold.project", "gold.flash")
K_SCORED = "gold.scored"  # reports scored by an endpoint method, by (set, source, method)

ws = ui.current_workspace()
ui.page_header("Gold answers")
sets = store.list_sets(ws)
if not sets:
    st.info("No gold set in this workspace: put `*_eval.jsonl` files in `gold/sets/NAME/`, or run "
            "`python -m core gold eval --eval-dir D --answers A` on files elsewhere.")
    st.stop()
if st.session_state.get(K_SET) not in sets:
    st.session_state[K_SET] = sets[0]
flash = st.session_state.pop(K_FLASH, None)
if flash:
    st.success(flash)

c1, c2, c3 = st.columns([2, 3, 2])
set_name = c1.selectbox("Gold set", sets, key=K_SET)
config = ug.guarded(store.set_config, ws, set_name)
sources = [ug.EXPECTED, *store.list_answers(ws, set_name), ug.MODEL]
if st.session_state.get(K_SOURCE) not in sources:
    st.session_state[K_SOURCE] = sources[-2] if len(sources) > 2 else ug.EXPECTED
source = c2.selectbox("Answers", sources, key=K_SOURCE, format_func=ug.source_label)
st.session_state.setdefault(K_METHOD, config.accuracy)
method = c3.selectbox("Accuracy method", ACCURACY_METHODS.names(), key=K_METHOD,
                      help="; ".join(f"{m.name}: {m.description}" for m in ACCURACY_METHODS.values()))

if source == ug.MODEL:
    model = st.text_input("Model", key=K_MODEL, placeholder="e.g. gpt-4o-mini")
    if not openai_configured():
        st.warning("No LLM endpoint configured: set OPENAI_API_KEY or OPENAI_BASE_URL (see README, Settings).")
    elif ug.gated_button("Ask the model every question", "gold.ask", ug.paid_block(ws), type="primary", disabled=not model):
        name = ug.ask_model(ws, set_name, model)
        st.session_state[K_FLASH] = f"Saved the answers of {model} as {name}; they are now the answer source."
        st.session_state[K_SOURCE] = name
        st.rerun()
    st.stop()

scored_key = (set_name, source, method)
if ACCURACY_METHODS[method].needs == "nothing":
    rep = ug.guarded(ug.evaluate, ws, set_name, source, method)
else:
    st.text_input("Embedding or judge model", key=K_ACC_MODEL, placeholder="default from the environment")
    if ug.gated_button(f"Score with {method}", "gold.score_endpoint", ug.paid_block(ws), disabled=not openai_configured()):
        try:
            st.session_state.setdefault(K_SCORED, {})[scored_key] = ug.score_with_model(
                ws, set_name, source, method, st.session_state.get(K_ACC_MODEL, ""))
        except WorkbenchError as exc:
            st.error(str(exc))
    rep = st.session_state.get(K_SCORED, {}).get(scored_key)
    if rep is None:
        st.info(f"{method} calls the LLM endpoint: press the button to score (answers are cached in the workspace).")
        st.stop()

show(st.caption, "{n} samples from {files} · answers: {model} · accuracy by {method}",
     n=rep["metadata"]["total_samples"], files=", ".join(rep["metadata"]["eval_files"]), model=rep["metadata"]["model"],
     method=method)
ug.show_metrics(rep, config.pass_rate_goal)
tabs = st.tabs(["Breakdown", "Samples", "Compare reports", "History", "Save and send"])

with tabs[0]:
    ug.show_breakdowns(rep, config.pass_rate_goal)

with tabs[1]:
    st.session_state.setdefault(K_STATUS, list(STATUSES))
    statuses = st.pills("Status", list(STATUSES), selection_mode="multi", key=K_STATUS)
    table = ug.samples_table(rep, statuses, config)
    ug.show_samples_table(table)
    ids = table["sample_id"].to_list()
    if ids:
        if st.session_state.get(K_SAMPLE) not in ids:
            st.session_state[K_SAMPLE] = ids[0]
        sid = st.selectbox("Sample", ids, key=K_SAMPLE)
        sample = next(s for s in rep["sample_results"] if s["sample_id"] == sid)
        sc = sample["scores"]
        st.markdown(f"**{sc['status']}** · overall {sc['overall']:.3f} · accuracy {sc['accuracy']:.3f} · "
                    f"citation {sc['citation']:.0f} · length {sc['length']:.1f} ({sc['token_count']} tokens) · "
                    f"keywords {sc['keywords_found']}/{sc['keywords_total']}")
        st.text(f"Question: {sample['question']}")
        st.html(ug.detail_html(sample, ug.must_include(ws, set_name).get(sid, []), config))
        for label in ("error", "accuracy_reasoning"):
            if sample.get(label):
                st.text(f"{label.replace('_', ' ').capitalize()}: {sample[label]}")

reports = [h["report"] for h in store.history(ws, set_name)]
with tabs[2]:
    if len(reports) < 2:
        st.info("Save two reports of this set (last tab) to compare them.")
    else:
        ca, cb = st.columns(2)
        st.session_state.setdefault(K_A, reports[-2])
        st.session_state.setdefault(K_B, reports[-1])
        name_a = ca.selectbox("Report A (before)", reports, key=K_A)
        name_b = cb.selectbox("Report B (after)", reports, key=K_B)
        ug.show_compare(ws, name_a, name_b)

with tabs[3]:
    hist = ug.history(ws, set_name)
    if hist.is_empty():
        st.info("No saved report of this set yet.")
    else:
        st.vega_lite_chart(ui.chart_spec(("gold-history", set_name, config.pass_rate_goal, ug.stamp(ws)),
                                         lambda: charts.history_chart(hist, goal=config.pass_rate_goal)), width="stretch")
        st.dataframe(hist.select("time", "model", "accuracy_method", "overall_score", "pass_rate", "report"),
                     hide_index=True, placeholder="—", width="stretch",
                     column_config={"overall_score": st.column_config.NumberColumn("overall", format="%.3f"),
                                    "pass_rate": st.column_config.NumberColumn("pass rate", format="percent"),
                                    "accuracy_method": "accuracy"})

with tabs[4]:
    name = store.default_report_name(set_name, source, rep["metadata"]["timestamp"])
    show(st.write, "Save this evaluation as report {name} (it joins the set's history and can be compared).", name=name)
    if ug.gated_button("Save report", "gold.save", ug.write_block("saving a report")):
        path = store.save_report(ws, rep, set_name=set_name, name=name,
                                 source="expected" if source == ug.EXPECTED else "answers", accuracy=method)
        st.session_state[K_FLASH] = f"Saved {path.name}."
        st.rerun()
    st.divider()
    st.session_state.setdefault(K_PROJECT, f"gold-{set_name}")
    project = st.text_input("Labeling project", key=K_PROJECT)
    if ug.gated_button("Send these answers to the labeling project", "gold.send", ug.write_block("creating labeling items")):
        try:
            result = send_to_labeling(ws, rep, report_name=f"{set_name}-{source}", set_name=set_name, project=project)
        except (WorkbenchError, ValueError) as exc:
            st.error(str(exc))
        else:
            st.success(f"{result['added']} answers added to {project} ({result['skipped']} were there already); "
                       "raters see question, reference answer and answer, never the scores.")
