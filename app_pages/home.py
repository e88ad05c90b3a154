"""Home: what is in the workspace, with a link to every page."""

from __future__ import annotations

import streamlit as st

from core import overview, ui

ws = ui.current_workspace()
st.title("Scale Workbench")
st.caption(
    "See how benchmark ground truth is made, trace every aggregate back to the reviews and judgments "
    "behind it, and collect human labels. Workspace: "
    f"`{ws.root}`"
)

if not ws.exists():
    st.warning("No dataset in this folder yet. Import one with `workbench datasets import PATH --name NAME` "
               "(and judgments with `workbench judgments import FILE`); `workbench --workspace DIR demo` "
               "writes the demo into a folder of your choice.")
    st.stop()

summary = overview.workspace_overview(ws, ui.database(ws))

metrics = st.columns(len(summary.headline))
for col, (label, value) in zip(metrics, summary.headline.items(), strict=True):
    col.metric(label, value)

left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader("Datasets")
    if summary.datasets.height:
        st.dataframe(summary.datasets, hide_index=True, width="stretch",
                     column_config={"n_restaurants": "restaurants", "n_reviews": "reviews",
                                    "first_date": "oldest review", "last_date": "newest review"})
    else:
        st.info("No dataset yet: `python -m core datasets import PATH --name NAME`.")
    for title, frame, empty in summary.sections:
        st.subheader(title)
        if frame is not None and frame.height:
            st.dataframe(frame, hide_index=True, width="stretch")
        else:
            st.caption(empty)

with right:
    st.subheader("Pages")
    for spec in ui.PAGES:
        with st.container(border=True):
            st.page_link(spec.path, label=spec.title, icon=spec.icon)
            st.caption(spec.description)
