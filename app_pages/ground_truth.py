"""Ground truth: verdicts per K, the restaurant × K grid, every primitive, judging status, export."""

from __future__ import annotations

import streamlit as st

from core import ui
from core.base.errors import WorkbenchError
from core.ground_truth import FORMULAS, k_label
from core.ground_truth.views import definitions
from core.tasks import task_ids
from core.ui import audit_plan, cache, gt_certainty, gt_grid, gt_page, gt_runs
from core.ui import claims as ui_claims
from core.ui import judges as ui_judges

ws = ui.current_workspace()
dataset = ui.current_dataset(ws)
ui.page_header("Ground truth", "How each restaurant's verdict comes out of the stored judgments, for every K (the "
                               "reviews a method sees). Pick a restaurant to trace any number back to its reviews.")
if not dataset:
    st.info("No dataset in this workspace. Generate the demo (`python -m core demo`) or import a dataset.")
    st.stop()

choice = gt_page.controls(ws, dataset, task_ids(ws))
st.caption(gt_page.describe(choice.definition, choice.chosen))
status = choice.status
judges = [j["judge"] for j in status.judges]
committed = definitions(choice.task, ws)
base_definition = choice.definition if choice.definition in committed else committed[0]
ui_judges.offline_note(ws, dataset, choice.task, choice.judge, judges, base_definition, choice.ks)
frame, problem = None, None
if status.ready:
    try:
        frame, key, counts = cache.gt_frame_counted(ws, dataset, choice.task, choice.judge, choice.definition,
                                                    choice.ks)
    except (WorkbenchError, ValueError) as exc:
        problem = str(exc)
    else:
        views = cache.frame_views(key, frame, choice.scale, counts)  # names, verdict paths, counts: once per frame key
        gt_page.coverage_warning(views)  # above the tabs: it concerns every one of them
tab_rest, tab_dist, tab_judging, tab_compare, tab_runs, tab_export = st.tabs(
    ["Restaurant × K", "Verdicts by K", "Judging", "Compare judges", "Runs", "Export"],
    default="Restaurant × K" if status.ready else "Judging", key=gt_page.K_TAB, on_change="rerun")
with tab_judging:
    gt_page.judging_section(ws, dataset, choice)
if tab_compare.open:  # two judges' GT at every K: computed when the tab is shown, not on every change
    with tab_compare:
        ui_judges.render_compare_judges(ws, dataset, choice.task, judges, committed, choice.ks)
        gt_certainty.audit_report_section(ws, dataset, choice.task)  # each judge against a human audit
        audit_plan.plan_section(ws, dataset, choice.task, judges)  # sample reviews for raters, create the project
if frame is None:
    with tab_rest:
        if problem:
            st.error(problem)
        else:
            st.info("No judgments for this dataset and task yet: run the judge in the Judging tab, `python -m core "
                    "judge`, or import judgments (`python -m core judgments import`).")
    st.stop()

with tab_dist:
    gt_page.distribution_section(frame, key, choice.judge, choice.scale, views)
    ui_claims.gt_claim_button(ws, dataset, choice.task, choice.definition, choice.judge, choice.ks, frame, key="gt.claim",
                              frame_key=key[:3])  # a K's claim does not depend on the other K
with tab_rest:
    source = gt_certainty.picker(ws, dataset, choice.task, st.columns([2, 3])[0])
    probs, probs_key = gt_certainty.probabilities(ws, dataset, choice.task, choice.judge, choice.definition,
                                                  choice.ks, source)
    if probs is not None and source is not None:
        gt_certainty.uncertain_section(probs, choice.ks, source)
    business_id, judge_param = gt_grid.grid_section(ws, dataset, frame, choice, key, views, probs, probs_key)
    st.subheader(f"Every primitive at K={k_label(gt_page.k_at())}")
    gt_grid.primitives_section(frame, choice, dataset, judge_param, key, views, probs, probs_key)
if tab_runs.open:  # the runs scored against this GT, and what a GT change does to them
    with tab_runs:
        if choice.chosen.variant is None and choice.definition not in FORMULAS:
            gt_runs.runs_section(ws, dataset, choice.task, choice.definition)
        else:
            st.info("Runs are scored against GT of a policy: pick a policy to see its runs.")
if tab_export.open:  # drawn once shown: a button drawn before the tab's rerun would offer a revoked download
    with tab_export:
        gt_page.export_section(ws, dataset, choice, frame)
