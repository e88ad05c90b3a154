"""Labeling: one item at a time, rated on a -1 … +1 slider (SPEC §6.2)."""

from __future__ import annotations

import time

import streamlit as st

from core import ui
from core.errors import WorkbenchError
from core.labeling import assignment, identity, render
from core.labeling import items as labeling_items
from core.labeling import store as label_store

K_RATER, K_PROJECT, K_VIEW = "labeling.rater", "labeling.project", "labeling.view"
K_SHOWN_AT, K_FLASH, K_COOKIE_SET = "labeling.shown_at", "labeling.flash", "labeling.cookie_set"
K_ROLE = "labeling.role"
K_CODE_INPUT, K_LAST_MS, K_SIGNED_OUT = "labeling.code_input", "labeling.last_submit_ms", "labeling.signed_out"
SUBMIT_SHORTCUT, SKIP_SHORTCUT = "Ctrl+Enter", "Ctrl+Shift+Enter"

ws = ui.current_workspace()
st.title("Labeling")

if not label_store.store_exists(ws.root):
    st.info("No label store in this workspace yet. Create a project with "
            "`python -m core labels init NAME` and add items with `python -m core labels import-items`.")
    st.stop()
store = label_store.open_store(ws.root)
projects = labeling_items.list_projects(store)
if not projects:
    st.info("No labeling project yet: `python -m core labels init NAME`.")
    st.stop()


def _login_email() -> str | None:
    try:
        return st.user.get("email") if st.user.is_logged_in else None
    except Exception:  # noqa: BLE001 - st.login not configured
        return None


def _auth_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # noqa: BLE001 - no secrets file
        return False


def _start(code_key: str) -> None:
    code = st.session_state.get(code_key, "")
    if identity.is_valid_code(code):
        st.session_state[K_RATER] = identity.check_code(code)
        st.session_state[K_COOKIE_SET] = False
        st.session_state[K_SIGNED_OUT] = False


def _sign_in() -> None:
    st.write("Enter your rater code once. It stays in this page's link (bookmark it) and in a cookie.")
    if _auth_configured():
        st.button("Log in", on_click=st.login, type="primary", key="labeling.login")
    with st.form("labeling.sign_in", border=False):
        st.text_input("Rater code", key=K_CODE_INPUT, placeholder="e.g. ana", max_chars=64)
        if st.form_submit_button("Start rating", type="primary", key="labeling.start"):
            code = st.session_state.get(K_CODE_INPUT, "")
            if not identity.is_valid_code(code):
                st.error(f"Invalid rater code {code!r}: use 2-64 letters, digits or _ . @ + -.")
            else:
                _start(K_CODE_INPUT)
                st.rerun()


signed_out = st.session_state.get(K_SIGNED_OUT, False)
resolved = identity.resolve_identity(
    login_email=_login_email(), query_code=st.query_params.get(identity.QUERY_PARAM),
    session_code=st.session_state.get(K_RATER),
    cookie_code=None if signed_out else st.context.cookies.get(identity.COOKIE_NAME),
)
if resolved is None:
    if signed_out:
        st.html(identity.cookie_script(None), unsafe_allow_javascript=True)  # forget the old code
    _sign_in()
    st.stop()
code, source = resolved
if st.session_state.get(K_RATER) != code or K_ROLE not in st.session_state:  # once per session and rater
    me = identity.register_rater(store, code, source="login" if source == "login" else "session")
    code = me.code
    st.session_state.update({K_RATER: code, K_ROLE: me.role, K_COOKIE_SET: False})
role = st.session_state[K_ROLE]
if source != "login":
    st.query_params[identity.QUERY_PARAM] = code
    if not st.session_state.get(K_COOKIE_SET):
        st.html(identity.cookie_script(code), unsafe_allow_javascript=True)  # validated code only
        st.session_state[K_COOKIE_SET] = True

names = [p.name for p in projects]
if st.session_state.get(K_PROJECT) not in names:
    wanted = st.query_params.get("project")
    st.session_state[K_PROJECT] = wanted if wanted in names else names[0]
project = labeling_items.get_project(store, st.session_state[K_PROJECT])
st.query_params["project"] = project.name


def _switch_rater() -> None:
    assignment.release(store, project, code)
    for key in (K_RATER, K_ROLE, K_VIEW, K_COOKIE_SET):
        st.session_state.pop(key, None)
    st.query_params.pop(identity.QUERY_PARAM, None)
    st.session_state[K_SIGNED_OUT] = True


top_left, top_mid, top_right = st.columns([3, 2, 1], vertical_alignment="bottom")
with top_left:
    st.markdown(f"Rating as **{render.escape_markdown(code)}** ({role})")
with top_mid:
    if len(names) > 1:
        st.selectbox("Project", names, key=K_PROJECT)
    else:
        st.caption(f"Project: {render.escape_markdown(project.name)}")
with top_right:
    if source != "login":
        st.button("Switch rater", on_click=_switch_rater, type="tertiary", key="labeling.switch")


def _current_view() -> assignment.ItemView | None:
    held = st.session_state.get(K_VIEW)
    if held and held["project"] == project.name and held["rater"] == code:
        return held["view"]
    view = assignment.next_item(store, project, code)
    _keep(view)
    return view


def _keep(view: assignment.ItemView | None) -> None:
    st.session_state[K_VIEW] = {"project": project.name, "rater": code, "view": view}
    st.session_state[K_SHOWN_AT] = time.time()


def _submit(token: str) -> None:
    view = (st.session_state.get(K_VIEW) or {}).get("view")
    if view is None or view.token != token:
        return  # a click on an item that is no longer shown (double click)
    score = float(st.session_state.get(f"labeling.score.{token}", 0.0))
    notes = (st.session_state.get(f"labeling.notes.{token}") or "").strip() or None
    spent = max(0.0, time.time() - st.session_state.get(K_SHOWN_AT, time.time()))
    started = time.perf_counter()
    try:
        _, nxt = assignment.submit_and_next(store, project, code, view.item_id, score, notes=notes,
                                            seconds_spent=round(spent, 1), token=token)
    except WorkbenchError as exc:  # the reservation expired and the item got its raters meanwhile
        _keep(assignment.next_item(store, project, code))
        st.session_state[K_FLASH] = str(exc)
        return
    st.session_state[K_LAST_MS] = (time.perf_counter() - started) * 1000
    _keep(nxt)
    st.session_state[K_FLASH] = f"Saved {score:+.2f}"


def _skip(token: str) -> None:
    view = (st.session_state.get(K_VIEW) or {}).get("view")
    if view is None or view.token != token:
        return
    _keep(assignment.skip_and_next(store, project, code, view.item_id))
    st.session_state[K_FLASH] = "Skipped: it moves to the end of your queue"


try:
    view = _current_view()
except WorkbenchError as exc:
    st.error(str(exc))
    st.stop()
flash = st.session_state.pop(K_FLASH, None)
if flash:
    st.toast(flash, icon=":material/check:")

prog = assignment.rater_progress(store, project, code)
p1, p2 = st.columns(2)
p1.progress(min(1.0, prog.my_items / prog.items) if prog.items else 0.0,
            text=f"You: {prog.my_items:,} of {prog.items:,} items ({prog.my_repeats:,} repeat audits)")
p2.progress(prog.filled_slots / prog.total_slots if prog.total_slots else 0.0,
            text=f"Project: {prog.filled_slots:,} of {prog.total_slots:,} ratings · "
                 f"{prog.complete_items:,} items complete")

with st.expander("Guidelines", expanded=prog.my_ratings == 0, icon=":material/menu_book:"):
    st.markdown(render.safe_markdown(project.guidelines) or "_No guidelines for this project._")
    neg, zero, pos = project.scale_labels
    st.caption(f"−1 {render.escape_markdown(neg)} · 0 {render.escape_markdown(zero)} · "
               f"+1 {render.escape_markdown(pos)}")

if view is None:
    st.success("Nothing left for you in this project: every item has its ratings. Thank you!")
    st.stop()

if view.is_repeat:
    st.info("Repeat audit: you rated this item before. Rate it again as if it were new.", icon=":material/replay:")
with st.container(border=True):
    st.markdown(f"##### {render.escape_markdown(view.prompt_title) or 'Prompt'}")
    if view.fields:
        st.caption(render.fields_caption(view.fields))
    st.markdown(render.safe_markdown(view.prompt_body))
with st.container(border=True):
    st.caption("Response")
    st.markdown(render.safe_markdown(view.response_text))

score_key = f"labeling.score.{view.token}"
neg, zero, pos = project.scale_labels
value = st.slider("Your rating", -1.0, 1.0, 0.0, 0.05, format="%+.2f", key=score_key)
left, mid, right = st.columns(3)
left.caption(f"−1 · {render.escape_markdown(neg)}")
mid.caption(f"0 · {render.escape_markdown(zero)}", text_alignment="center")
right.caption(f"+1 · {render.escape_markdown(pos)}", text_alignment="right")
st.markdown(f"Your rating: **{value:+.2f}** — closest to *{render.escape_markdown(render.nearest_label(value, project.scale_labels))}*")
st.text_area("Notes (optional)", key=f"labeling.notes.{view.token}", height=80,
             placeholder="Anything unclear or worth discussing?")
with st.container(horizontal=True, vertical_alignment="center"):
    st.button("Submit", type="primary", key="labeling.submit", on_click=_submit, args=(view.token,),
              shortcut=SUBMIT_SHORTCUT, icon=":material/check:", wrap=False)
    st.button("Skip", key="labeling.skip", on_click=_skip, args=(view.token,), shortcut=SKIP_SHORTCUT,
              icon=":material/skip_next:", wrap=False)
    last = st.session_state.get(K_LAST_MS)
    st.caption("Skipped items come back after all others."
               + (f" Last save took {last:.0f} ms." if last is not None else ""))
