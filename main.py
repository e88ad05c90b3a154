"""Scale Workbench: the script each session runs, router and frame only (pages live in app_pages/,
logic in core/; app.py serves it)."""

from __future__ import annotations

import streamlit as st

from core import ui
from core.ui import auth, hosting, warmup
from core.workspace.choice import workspace_dir

with warmup.page_run():  # not while the warm-up imports a module (core.ui.warmup._Gate)
    st.set_page_config(page_title="Scale Workbench", page_icon=ui.FAVICON, layout="wide")
    if hosting.hosted():  # demo/team: Streamlit's own error boxes show no details either (callbacks)
        st.set_option("client.showErrorDetails", "none")
        hosting.ensure_demo()

    st.session_state.setdefault(ui.SIDEBAR_WORKSPACE, str(workspace_dir()))
    ws = ui.current_workspace()
    if not hosting.signed_in(ws):  # team mode: nothing but the sign-in screen until signed in
        hosting.sign_in_navigation([spec.url_path for spec in ui.PAGES]).run()
        st.stop()

    rater_only = hosting.mode() == "team" and hosting.team_role(ws) == "rater"  # a personal link: Labeling only
    reviewer = rater_only and auth.link_reviewer(ws.root)
    nav = auth.navigation(ui.PAGES, rater_only=rater_only, reviewer=reviewer)

    with st.sidebar:
        st.markdown("### Scale Workbench")
        hosting.sidebar_account(ws)
    hosting.banner(ws)
    if rater_only or not auth.workspace_controls_visible(nav.url_path):  # raters rate; they do not pick workspaces
        hosting.run_page(nav)
        warmup.start()
        st.stop()
    with st.sidebar:
        if not hosting.hosted():  # a shared deployment serves its one workspace: no path input
            st.text_input("Workspace folder", key=ui.SIDEBAR_WORKSPACE, on_change=ui.apply_workspace_choice,
                          help="A folder of Parquet/JSONL files under the configured roots (WORKBENCH_WORKSPACE_ROOTS).")
            if st.session_state.get(ui.SIDEBAR_WORKSPACE_ERROR):
                st.error(st.session_state[ui.SIDEBAR_WORKSPACE_ERROR])
        datasets = ws.datasets()
        if datasets:
            linked = st.query_params.get("dataset")
            if linked in datasets and not st.session_state.get("app.dataset_link_applied"):
                st.session_state[ui.SIDEBAR_DATASET] = linked  # a shared link picks its dataset once
                st.session_state["app.dataset_link_applied"] = True
            if st.session_state.get(ui.SIDEBAR_DATASET) not in datasets:
                st.session_state[ui.SIDEBAR_DATASET] = datasets[0]
            st.selectbox("Dataset", datasets, key=ui.SIDEBAR_DATASET)
        elif not ws.exists():
            st.warning("No dataset in this folder yet: import one with `workbench datasets import PATH --name NAME`.")
        else:
            st.info("No dataset in this workspace yet.")

    hosting.run_page(nav)
    warmup.start()  # once per process, after the first page is drawn: the other pages' imports
