"""Home: what is in the workspace, with a link to every page."""

from __future__ import annotations

import streamlit as st

from core import ui
from core.ui import home, hosting
from core.ui.text import show

ws = ui.current_workspace()
ui.page_header("Scale Workbench", "See how benchmark ground truth is made, trace every aggregate back to the reviews "
                                  "and judgments behind it, and collect human labels.")
show(st.caption, "Workspace: {root}", root=ws.root.name if hosting.hosted() else ws.root)  # no server path when shared

if not ws.exists():
    st.warning("No dataset in this folder yet. Import one with `workbench datasets import PATH --name NAME` "
               "(and judgments with `workbench judgments import FILE`); `workbench --workspace DIR demo` "
               "writes the demo into a folder of your choice.")
    st.stop()

summary = home.workspace_overview(ws)

metrics = st.columns(len(summary.headline) + 3)
for col, (label, value) in zip(metrics, summary.headline.items(), strict=False):
    col.metric(label, value)

home.show_problems(ws)  # unreadable files, with the reason

st.subheader("Pages")
PER_ROW = 5  # ten pages in one row squeeze each card to a letter
cols = [col for start in range(0, len(ui.PAGES), PER_ROW) for col in st.columns(PER_ROW)]
for col, spec in zip(cols, ui.PAGES, strict=False):
    with col.container(border=True, height="stretch"):
        st.page_link(spec.path, label=spec.title, icon=spec.icon)
        st.caption(spec.description)

st.subheader("Datasets")
if summary.datasets.height:
    st.dataframe(summary.datasets, hide_index=True, width="stretch",
                 column_config={"n_restaurants": st.column_config.NumberColumn("restaurants", format="localized"),
                                "n_reviews": st.column_config.NumberColumn("reviews", format="localized"),
                                "first_date": "oldest review", "last_date": "newest review"})
else:
    st.info("No dataset yet: `python -m core datasets import PATH --name NAME`.")
for title, frame, empty in summary.sections:
    st.subheader(title)
    if frame is not None and frame.height:
        counts = {c: st.column_config.NumberColumn(c, format="localized") for c, t in frame.schema.items()
                  if t.is_integer()}  # 2,100,000 like the Datasets table, not 2100000
        st.dataframe(frame, hide_index=True, width="stretch", placeholder="—", column_config=counts)
    else:
        st.caption(empty)
