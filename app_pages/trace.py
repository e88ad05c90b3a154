"""Trace: one restaurant's GT as a formula tree down to its reviews; why K changes it; its knife edge; overrides; what-if.

Shareable: ``/trace?dataset=demo&task=G1a&formula=v1&k=50&business_id=…`` opens this trace, and the
URL follows every selection made here.
"""

from __future__ import annotations

import streamlit as st

from core import ui
from core.ui import cache, trace_knife, trace_page, trace_tabs
from core.ui import judges as ui_judges
from core.ui.text import show

trace_page.apply_query()
ws = ui.current_workspace()
ui.page_header("Trace", "Every number of one restaurant's ground truth, back to the reviews and judgments that make it.")
dataset = trace_page.pick_dataset(ws)
if not dataset:
    st.info("No dataset in this workspace.")
    st.stop()
t = trace_page.select(ws, dataset)
if t is None:
    st.stop()

by_k, flips = trace_page.header(t)
if ui_judges.is_offline(t.gt_judge):
    show(st.caption, "Judgments by the offline judge {judge}: rules over the review text, no LLM (its measured "
         "quality is in the README; Compare judges on the Ground truth page shows it against another judge).",
         judge=t.gt_judge)
trace_page.last_change(t)
tab_formula, tab_k, tab_knife, tab_ov, tab_whatif = st.tabs(list(trace_page.TABS), key=trace_page.K_TAB, on_change="rerun")
trace_root = cache.trace(ws, t.dataset, t.task, t.judge, t.business_id, t.definition, t.k_value)
if tab_formula.open is not False:
    with tab_formula:
        trace_tabs.formula_tab(t, trace_root)
if tab_k.open:
    with tab_k:
        trace_tabs.k_tab(t, by_k, flips)
if tab_knife.open:  # the smallest judgment changes that flip the verdict (a search: only when shown)
    with tab_knife:
        trace_knife.knife_tab(t, trace_root)
if tab_ov.open:
    with tab_ov:
        trace_tabs.overrides_tab(t, trace_root, by_k)
if tab_whatif.open:
    with tab_whatif:
        trace_tabs.whatif_tab(t)
