"""Glue of the Labeling page for a judge audit: one radio per field, each value with its meaning,
nothing chosen at first (no judge's answer is shown, and none is suggested)."""

from __future__ import annotations

import time

import streamlit as st

from core.base.errors import WorkbenchError
from core.labeling import assignment, render
from core.labeling.answers import answers_text
from core.labeling.items import Project
from core.labeling.store import LabelStore
from core.ui import hosting
from core.ui.labeling import (
    K_FLASH,
    K_LAST_MS,
    K_SHOWN_AT,
    K_VIEW,
    action_row,
    keep,
    notes_key,
    short_title,
)


def answer_key(token: str, field: str) -> str:
    return f"labeling.answer.{token}.{field}"


def _chosen(project: Project, token: str) -> dict[str, str]:
    return {f.name: st.session_state[answer_key(token, f.name)] for f in project.answer_fields
            if st.session_state.get(answer_key(token, f.name)) is not None}


def answers_message(result: assignment.SubmitResult) -> tuple[str, str]:
    """(kind, text) telling the rater what a submission stored; never "Saved" without a stored row.

    >>> answers_message(assignment.SubmitResult(3, "saved", None, answers={"sev": "mild"}))
    ('toast', 'Saved: sev: mild')
    """
    if result.status == "correction":
        return "info", ("You had answered this item in another tab; these answers replace those (both kept in the "
                        f"history): {answers_text(result.answers or {})}")
    if result.status == "duplicate":
        return "warning", (f"Not stored again: your answers to this item were saved {result.ms_apart:.0f} ms earlier "
                           "(another tab?).")
    return "toast", f"Saved: {answers_text(result.answers or {})}"


@hosting.guarded
def submit(store: LabelStore, project: Project, code: str, token: str) -> None:
    """Submit callback: store the answers and show the next item (refused until every field is answered)."""
    view = (st.session_state.get(K_VIEW) or {}).get("view")
    if view is None or view.token != token:
        return  # a stale double click
    chosen = _chosen(project, token)
    if len(chosen) < len(project.answer_fields):
        st.session_state[K_FLASH] = ("warning", "Answer every field before submitting.")
        return
    notes = (st.session_state.get(notes_key(token)) or "").strip() or None
    spent = max(0.0, time.time() - st.session_state.get(K_SHOWN_AT, time.time()))
    started = time.perf_counter()
    try:
        result = assignment.submit_answers(store, project, code, view.item_id, chosen, notes=notes,
                                           seconds_spent=round(spent, 1), token=token)
    except (WorkbenchError, ValueError) as exc:
        keep(project, code, assignment.next_item(store, project, code))
        st.session_state[K_FLASH] = ("error", str(exc))
        return
    st.session_state[K_LAST_MS] = (time.perf_counter() - started) * 1000
    keep(project, code, result.next)
    st.session_state[K_FLASH] = answers_message(result)


def answer_widgets(store: LabelStore, project: Project, code: str, view: assignment.ItemView) -> None:
    """One radio per answer field (value — meaning), notes, Submit and Skip."""
    token = view.token
    st.markdown("**Your answers** (as the task defines each field; the judge's answers are not shown)")
    for f in project.answer_fields:
        meanings = dict(f.values)
        st.radio(f.name, f.names, index=None, key=answer_key(token, f.name), horizontal=False,
                 format_func=lambda v, m=meanings: f"{v} — {m[v]}" if m.get(v) else v,
                 help=f.description or None)
    st.text_area("Notes (optional)", key=notes_key(token), height=68, placeholder="Anything unclear or worth discussing?")
    missing = [f.name for f in project.answer_fields if st.session_state.get(answer_key(token, f.name)) is None]
    hint = render.escape_markdown(f"Still to answer: {', '.join(missing)}.") + "  " if missing else ""
    action_row(store, project, code, token, submit, ready=not missing, hint=hint)


def show_recent_answers(store: LabelStore, project: Project, code: str) -> None:
    """The rater's last answers (a correction is a new row: ask an adjudicator, or answer again in a new round)."""
    recent = assignment.recent_ratings(store, project, code, limit=5)
    if not recent:
        return
    with st.expander("Your recent answers", icon=":material/history:", expanded=False):
        for r in recent:
            title = short_title(r["title"])
            st.markdown(f"item #{r['item_id']}" + (f" · {render.escape_markdown(title)}" if title else "")
                        + f" · {render.escape_markdown(answers_text(r['answers'] or {}))}"
                        + f" · {r['created_at']:%H:%M:%S} UTC")
