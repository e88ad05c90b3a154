"""Label review (adjudicators and admins): coverage, disagreements and adjudication, agreement
statistics and exports (SPEC §6.3–§6.5)."""

from __future__ import annotations

import streamlit as st

from core import ui
from core.labeling import agreement, identity, render
from core.labeling import items as labeling_items
from core.labeling import store as label_store
from core.ui import audit_review, auth, hosting
from core.ui import label_admin as admin
from core.ui import label_review as page

K_PROJECT, K_SECTION, K_MODELS = "label_review.project", "label_review.section", "label_review.include_models"

ws = ui.current_workspace()
ui.page_header("Label review")
if not label_store.store_exists(ws.root):
    st.info("No label store in this workspace yet: `workbench labels init NAME`.")
    st.stop()
store = label_store.open_store(ws.root)

resolved = auth.resolve()
if resolved is None and auth.team_mode() and hosting.is_admin(ws):
    admin.show_links_only(store)
    st.stop()
if resolved is None:
    st.info("Sign in on the Labeling page first" + ("." if auth.team_mode() else
                                                   " (or open this page with `?rater=CODE`)."))
    st.page_link("app_pages/labeling.py", label="Go to Labeling", icon=":material/thumbs_up_down:")
    st.stop()
code, source = resolved
if code in identity.retired_codes(store):
    st.error(f"The rater code {render.escape_markdown(code)} was retired by an admin.")
    st.stop()
if source not in ("login", "link"):
    st.session_state[auth.K_RATER] = code
    st.query_params[identity.QUERY_PARAM] = code
role = auth.role_of(store, code, source)
if st.session_state.get(auth.K_ROLE) != role:
    st.session_state[auth.K_ROLE] = role
    if role in identity.REVIEW_ROLES:
        st.rerun()  # the frame drew the sidebar before the role was known: adjudicators get its controls
if role not in identity.REVIEW_ROLES:
    st.error(f"This page is for adjudicators and admins; {render.escape_markdown(code)} has the role {role}. "
             "An admin can grant a role here or with `workbench labels role CODE adjudicator`.")
    st.stop()

projects = labeling_items.list_projects(store)
if not projects:
    st.info("No labeling project yet: `workbench labels init NAME`.")
    st.stop()
names = [p.name for p in projects]
if st.session_state.get(K_PROJECT) not in names:
    st.session_state[K_PROJECT] = st.query_params.get("project") if st.query_params.get("project") in names else names[0]
for key, default in ((K_SECTION, page.SECTIONS[0]), (K_MODELS, False), (page.K_BINS, agreement.DEFAULT_BIN_THRESHOLD),
                     (page.K_BOOT, 1000)):
    st.session_state.setdefault(key, default)

c1, c2, c3 = st.columns([2, 2, 3], vertical_alignment="bottom")
c1.selectbox("Project", names, key=K_PROJECT)
c2.toggle("Include model raters", key=K_MODELS, help="Ratings imported from LLM raters (codes `llm:…`).")
c3.caption(f"Signed in as **{render.escape_markdown(code)}** ({role})")
section = st.segmented_control("Section", page.SECTIONS + admin.SECTIONS, key=K_SECTION, required=True,
                               label_visibility="collapsed")
context = page.Context(ws, store, labeling_items.get_project(store, st.session_state[K_PROJECT]), code, role,
                       bool(st.session_state[K_MODELS]))
(admin.show if section in admin.SECTIONS else audit_review.show if context.project.is_audit else page.show)(section, context)
