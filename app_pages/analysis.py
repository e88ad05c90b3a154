"""Analysis of the perspective study (SPEC §7): scores by model and perspective, uplift against
neutral, and the scorer against the blinded human audit next to the human ceiling."""

from __future__ import annotations

import math

import streamlit as st

from core import ui
from core.labeling.agreement import DEFAULT_BIN_THRESHOLD
from core.study import charts
from core.ui import analysis as page
from core.ui.text import safe, show

K_RUN, K_PROJECT, K_BINS, K_PERSPECTIVE = "analysis.run", "analysis.project", "analysis.bins", "analysis.perspective"
PCT = st.column_config.NumberColumn(format="%.0f%%")
NUM = st.column_config.NumberColumn(format="%+.3f")

ws = ui.current_workspace()
ui.page_header("Perspective analysis")
st.caption("Scores on the landlord–tenant axis: −1 sides with the tenant, 0 balanced, +1 sides with the landlord.")
runs = page.scored_runs(ws)
if not runs:
    st.info("No scored run in this workspace yet. Score one with `python -m core scorer apply MODEL_DIR RUN.jsonl "
            "--out run_scored.jsonl`, or import one with `python -m core study import RUN_SCORED.jsonl --study NAME`.")
    st.stop()

labels = [page.run_label(r) for r in runs]
linked = st.query_params.get("run")
if st.session_state.get(K_RUN) not in labels:
    st.session_state[K_RUN] = linked if linked in labels else labels[0]
st.session_state.setdefault(K_BINS, DEFAULT_BIN_THRESHOLD)
c1, c2, c3 = st.columns([3, 3, 1], vertical_alignment="bottom")
c1.selectbox("Scored run", labels, key=K_RUN)
run = runs[labels.index(st.session_state[K_RUN])]
st.query_params["run"] = st.session_state[K_RUN]
projects = page.audit_projects(ws, run["run_id"])
options = [*projects, page.NO_AUDIT]
if st.session_state.get(K_PROJECT) not in options:
    st.session_state[K_PROJECT] = options[0]
c2.selectbox("Human audit (labeling project)", options, key=K_PROJECT,
             help="A project made by `python -m core study audit`; raters saw neither perspective nor score.")
c3.number_input("Stance bin ±", min_value=0.0, max_value=0.95, step=0.05, key=K_BINS,
                help="Scores beyond ± this value count as taking a side.")
project = None if st.session_state[K_PROJECT] == page.NO_AUDIT else st.session_state[K_PROJECT]
rep = page.load_analysis(ws, run, project, float(st.session_state[K_BINS]))

scorer_text = ", ".join(rep["scorer_models"])
offline = rep["offline_models"]
offline_text = safe(" · offline models (rule-based, no LLM): {names}", names=", ".join(offline)) if offline else ""
st.caption(safe("{n_scored} of {n_records} responses scored by **{scorer}**", n_scored=f"{rep['n_scored']:,}",
                n_records=f"{rep['n_records']:,}", scorer=scorer_text) + offline_text)

st.subheader("How good is the scorer?")
st.caption("Every figure below is the scorer's reading of the responses. Its held-out agreement with the human "
           "consensus (from its manifest; the human ceiling is one rater against the mean of the others):")
st.dataframe(page.quality_table(rep["scorer_quality"]), hide_index=True, placeholder="—", width="stretch",
             column_config={c: st.column_config.NumberColumn(format="%.3f")
                            for c in ("MAE", "Pearson", "Lin's CCC", "human ceiling CCC")})
if rep["warnings"]:  # one box, a paragraph per warning
    show(st.warning, "\n\n".join(f"{{w{i}}}" for i in range(len(rep["warnings"]))),
         **{f"w{i}": w for i, w in enumerate(rep["warnings"])})

st.subheader("Mean score by model and perspective")
ui.show_chart(charts.group_means_chart(rep["by_group"]), width="stretch")
st.dataframe(page.groups_table(rep["by_group"]), hide_index=True, placeholder="—", width="stretch",
             column_config={"mean": NUM, **{name: PCT for name in rep["by_group"][0]["bin_labels"]}})

st.subheader("Uplift against neutral")
show(st.caption, "How far a model's answers move when the landlord or the tenant asks, compared with the neutral "
     "wording (Welch 95% intervals). 'landlord − tenant' is how much it follows the asker.{reminder}",
     reminder=page.quality_reminder(rep["scorer_quality"]))
st.dataframe(page.uplift_table(rep["uplifts"]), hide_index=True, placeholder="—", width="stretch",
             column_config={c: NUM for c in ("landlord − neutral", "tenant − neutral", "landlord − tenant")})

if project is None:
    st.info("Choose a human audit above to compare the scorer with the raters. Push one with "
            "`python -m core study audit RUN_SCORED.jsonl --project NAME`.")
    st.stop()
audit = rep["audit"]
st.subheader("Scorer against the human audit")
if not audit["n_audited"]:
    st.info(f"No audited response of this run has a human consensus in {project} yet (it needs ≥ 2 ratings "
            "with agreeing signs, or an adjudication).")
    st.stop()
present = [p for p in ("all", "landlord", "tenant", "neutral") if any(r["perspective"] == p for r in audit["model_vs_human"])]
st.session_state.setdefault(K_PERSPECTIVE, "all")
if st.session_state[K_PERSPECTIVE] not in present:
    st.session_state[K_PERSPECTIVE] = "all"
st.segmented_control("Perspective", present, key=K_PERSPECTIVE, required=True)
st.caption(f"{audit['n_audited']} audited responses with a consensus. The human ceiling holds out one rater at a "
           "time against the mean of the others on the same responses: a scorer near it agrees with the "
           "humans about as well as they agree with each other.")
st.dataframe(page.versus_table(audit["model_vs_human"], st.session_state[K_PERSPECTIVE]), hide_index=True, placeholder="—",
             width="stretch",
             column_config={c: st.column_config.NumberColumn(format="%.3f")
                            for c in ("MAE", "RMSE", "Pearson", "Spearman", "Lin's CCC", "bias")})
chosen = st.session_state[K_PERSPECTIVE]
summary = next(r for r in audit["model_vs_human"] if r["kind"] == "scorer" and r["perspective"] == chosen)
points = [p for p in audit["bland_altman"] if chosen in ("all", p["perspective"])]
show(st.markdown, "**Bland–Altman** ({chosen}: scorer − human against their mean; bias and 95% limits of agreement)",
     chosen=chosen)
ui.show_chart(charts.bland_altman_chart(points, summary), width="stretch")


def _fmt(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.2f}"


st.download_button("Download the audited responses (CSV)", page.audit_csv(audit["items"]),
                   file_name=f"{project}_audit_vs_scorer.csv", mime="text/csv", key="analysis.download")

st.subheader("Largest disagreements")
for d in audit["disagreements"]:
    title = safe("{model} · asked as {perspective} · scorer {score} · humans {human} · difference {diff}",
                 model=d["model_id"], perspective=d["perspective"], score=_fmt(d["score"]), human=_fmt(d["human"]),
                 diff=_fmt(d["diff"]))
    with st.expander(title):
        st.caption("Prompt")
        st.text(d["prompt_text"])
        st.caption("Response")
        st.text(d["response_text"])
