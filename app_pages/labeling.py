"""Labeling: one item at a time, rated on a -1 … +1 slider (SPEC §6.2), or, in a judge audit, answered field by field."""

from __future__ import annotations

import streamlit as st

from core import ui
from core.base.errors import WorkbenchError
from core.labeling import assignment, render
from core.labeling import items as labeling_items
from core.labeling import store as label_store
from core.ui import audit_labeling as audit_page
from core.ui import auth, hosting
from core.ui import labeling as page

K_PROJECT = "labeling.project"

ws = ui.current_workspace()
ui.page_header("Labeling")

if not label_store.store_exists(ws.root):
    st.info("No label store in this workspace yet. Create a project with "
            "`workbench labels init NAME` and add items with `workbench labels import-items`.")
    st.stop()
store = label_store.open_store(ws.root)
projects = labeling_items.list_projects(store)
if not projects:
    st.info("No labeling project yet: `workbench labels init NAME`.")
    st.stop()

me = auth.sign_in(store)
if me is None:
    st.stop()
code, source, role = me

names = [p.name for p in projects]
if st.session_state.get(K_PROJECT) not in names:
    wanted = st.query_params.get("project")
    st.session_state[K_PROJECT] = wanted if wanted in names else names[0]
project = labeling_items.get_project(store, st.session_state[K_PROJECT])
st.query_params["project"] = project.name


@hosting.guarded
def _switch_rater() -> None:
    assignment.release(store, project, code)
    st.session_state.pop(page.K_VIEW, None)
    auth.sign_out()


top_left, top_mid, top_right = st.columns([3, 2, 1], vertical_alignment="bottom")
with top_left:
    st.markdown(f"Rating as **{render.escape_markdown(code)}** ({role})")
with top_mid:
    if len(names) > 1:
        st.selectbox("Project", names, key=K_PROJECT)
    else:
        st.caption(f"Project: {render.escape_markdown(project.name)}")
with top_right:
    if source not in ("login", "link"):
        st.button("Switch rater", on_click=_switch_rater, type="tertiary", key="labeling.switch")

try:
    view = page.current_view(store, project, code)
except WorkbenchError as exc:
    st.error(str(exc))
    st.stop()
page.show_flash()

prog = assignment.rater_progress(store, project, code)
page.show_progress(prog)
with st.expander("Guidelines", expanded=prog.my_ratings == 0, icon=":material/menu_book:"):
    st.markdown(render.safe_markdown(project.guidelines) or "_No guidelines for this project._")
    if not project.is_audit:
        neg, zero, pos = project.scale_labels
        st.caption(f"−1 {render.escape_markdown(neg)} · 0 {render.escape_markdown(zero)} · "
                   f"+1 {render.escape_markdown(pos)}")

if not project.is_audit and page.show_change(store, project, code):
    st.stop()
if view is None:
    st.success("Nothing left for you in this project: every item has its ratings. Thank you!")
elif project.is_audit:  # a judge audit: one radio per judgment field
    page.show_item(view, "Review")
    audit_page.answer_widgets(store, project, code, view)
else:
    page.show_item(view)
    page.rating_widgets(store, project, code, view)
(audit_page.show_recent_answers if project.is_audit else page.show_recent)(store, project, code)
