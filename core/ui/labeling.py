"""Glue of the Labeling page: the item shown, Submit/Skip callbacks and the rating widgets."""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from core.base.errors import WorkbenchError
from core.labeling import assignment, render
from core.labeling.items import Project
from core.labeling.store import LabelStore
from core.ui import hosting

K_VIEW, K_SHOWN_AT, K_FLASH = "labeling.view", "labeling.shown_at", "labeling.flash"
K_LAST_MS = "labeling.last_submit_ms"
K_EDIT = "labeling.edit"  # rating_id the rater is changing
SUBMIT_SHORTCUT, SKIP_SHORTCUT = "Ctrl+Enter", "Ctrl+Shift+Enter"


def score_key(token: str) -> str:
    return f"labeling.score.{token}"


def touched_key(token: str) -> str:
    """Set by the slider's on_change: the rater moved it (an untouched 0 is not an answer)."""
    return f"labeling.touched.{token}"


def zero_key(token: str) -> str:
    return f"labeling.zero_ok.{token}"


def notes_key(token: str) -> str:
    return f"labeling.notes.{token}"


def current_view(store: LabelStore, project: Project, code: str) -> assignment.ItemView | None:
    """The item this rater is shown: the one held in the session, else the next one assigned."""
    held = st.session_state.get(K_VIEW)
    if held and held["project"] == project.name and held["rater"] == code:
        return held["view"]
    view = assignment.next_item(store, project, code)
    keep(project, code, view)
    return view


def keep(project: Project, code: str, view: assignment.ItemView | None) -> None:
    st.session_state[K_VIEW] = {"project": project.name, "rater": code, "view": view}
    st.session_state[K_SHOWN_AT] = time.time()


def _shown(token: str) -> assignment.ItemView | None:
    view = (st.session_state.get(K_VIEW) or {}).get("view")
    return view if view is not None and view.token == token else None  # else a stale double click


def answered(token: str) -> bool:
    """True once the slider was moved or "0 is my answer" was ticked."""
    return bool(st.session_state.get(touched_key(token)) or st.session_state.get(zero_key(token)))


def submit_message(result: assignment.SubmitResult) -> tuple[str, str]:
    """(kind, text) telling the rater what a submission stored; never "Saved" without a stored row.

    >>> submit_message(assignment.SubmitResult(7, "correction", 0.4, replaced=0.2))[1]
    'You had rated this item +0.20 in another tab; your +0.40 replaces it (both kept in the history).'
    >>> submit_message(assignment.SubmitResult(7, "duplicate", 0.4, stored=0.2, ms_apart=12))[0]
    'warning'
    """
    if result.status == "correction":
        return "info", (f"You had rated this item {result.replaced:+.2f} in another tab; your {result.score:+.2f} "
                        "replaces it (both kept in the history).")
    if result.status == "duplicate":
        if result.stored == result.score:
            return "toast", f"Saved {result.score:+.2f} (the same submission arrived twice; stored once)"
        return "warning", (f"Not stored: your rating {result.stored:+.2f} of this item was saved "
                           f"{result.ms_apart:.0f} ms earlier (another tab?). Change it under \"Your recent "
                           "ratings\" if you meant the new value.")
    return "toast", f"Saved {result.score:+.2f}"


@hosting.guarded
def submit(store: LabelStore, project: Project, code: str, token: str) -> None:
    """Submit callback: store the rating and show the next item (refused while unanswered)."""
    view = _shown(token)
    if view is None:
        return
    if not answered(token):
        st.session_state[K_FLASH] = ("warning", "Move the slider, or tick \"0 is my answer\", before submitting.")
        return
    score = float(st.session_state.get(score_key(token), 0.0))
    notes = (st.session_state.get(notes_key(token)) or "").strip() or None
    spent = max(0.0, time.time() - st.session_state.get(K_SHOWN_AT, time.time()))
    started = time.perf_counter()
    try:
        result = assignment.submit_rating(store, project, code, view.item_id, score, notes=notes,
                                          seconds_spent=round(spent, 1), token=token)
    except WorkbenchError as exc:  # the item has its raters (reservation expired, or a lowered target)
        keep(project, code, assignment.next_item(store, project, code))
        st.session_state[K_FLASH] = ("error", str(exc))
        return
    st.session_state[K_LAST_MS] = (time.perf_counter() - started) * 1000
    keep(project, code, result.next)
    st.session_state[K_FLASH] = submit_message(result)


def show_flash() -> None:
    """The message the last Submit, Skip or change left (a toast for plain saves)."""
    flash = st.session_state.pop(K_FLASH, None)
    if not flash:
        return
    kind, text = flash if isinstance(flash, tuple) else ("toast", flash)
    if kind == "toast":
        st.toast(text, icon=":material/check:")
    else:
        {"info": st.info, "warning": st.warning, "error": st.error, "success": st.success}[kind](text)


@hosting.guarded
def skip(store: LabelStore, project: Project, code: str, token: str) -> None:
    """Skip callback: the item goes to the end of this rater's queue."""
    view = _shown(token)
    if view is None:
        return
    keep(project, code, assignment.skip_and_next(store, project, code, view.item_id))
    st.session_state[K_FLASH] = ("toast", "Skipped: it moves to the end of your queue")


def show_progress(prog: assignment.RaterProgress) -> None:
    p1, p2 = st.columns(2)
    p1.progress(min(1.0, prog.my_items / prog.items) if prog.items else 0.0,
                text=f"You: {prog.my_items:,} of {prog.items:,} items ({prog.my_repeats:,} repeat audits)")
    p2.progress(prog.filled_slots / prog.total_slots if prog.total_slots else 0.0,
                text=f"Project: {prog.filled_slots:,} of {prog.total_slots:,} ratings · "
                     f"{prog.complete_items:,} items complete")


def show_item(view: assignment.ItemView, response_label: str = "Response") -> None:
    """The prompt and the response (a judge audit's: the review), whole (rendered from escaped, sanitised markdown)."""
    if view.is_repeat:
        st.info("Repeat audit: you rated this item before. Rate it again as if it were new.", icon=":material/replay:")
    with st.container(border=True):
        st.markdown(f"##### {render.escape_markdown(view.prompt_title) or 'Prompt'}")
        if view.fields:
            st.caption(render.fields_caption(view.fields))
        st.markdown(render.safe_markdown(view.prompt_body))
    with st.container(border=True):
        st.caption(response_label)
        st.markdown(render.safe_markdown(view.response_text))


def rating_widgets(store: LabelStore, project: Project, code: str, view: assignment.ItemView) -> None:
    """Slider, scale labels, notes, "0 is my answer", Submit and Skip."""
    token = view.token
    neg, zero, pos = project.scale_labels
    value = st.slider("Your rating", -1.0, 1.0, 0.0, 0.05, format="%+.2f", key=score_key(token),
                      on_change=lambda: st.session_state.__setitem__(touched_key(token), True))
    left, mid, right = st.columns(3)
    left.caption(f"−1 · {render.escape_markdown(neg)}")
    mid.caption(f"0 · {render.escape_markdown(zero)}", text_alignment="center")
    right.caption(f"+1 · {render.escape_markdown(pos)}", text_alignment="right")
    if st.session_state.get(touched_key(token)):
        label = render.escape_markdown(render.nearest_label(value, project.scale_labels))
        st.markdown(f"Your rating: **{value:+.2f}** — closest to *{label}*")
    else:
        st.checkbox(f"0 is my answer ({render.escape_markdown(zero)})", key=zero_key(token),
                    help="The slider starts at 0. Move it, or tick this to submit 0 on purpose.")
    st.text_area("Notes (optional)", key=notes_key(token), height=80,
                 placeholder="Anything unclear or worth discussing?")
    ready = answered(token)
    action_row(store, project, code, token, submit, ready=ready,
               hint="" if ready else "Move the slider (or tick \"0 is my answer\") to submit. ",
               note=" Open in two tabs? The later submit replaces the earlier one (both kept in the history).")


def action_row(store: LabelStore, project: Project, code: str, token: str, on_submit: Callable[..., None], *,
               ready: bool, hint: str, note: str = "") -> None:
    """Submit (``on_submit``, disabled until ``ready``) and Skip in one row, with the hint, the skip rule
    and the last save's time in a caption (slider items and audit items alike)."""
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button("Submit", type="primary", key="labeling.submit", on_click=on_submit,
                  args=(store, project, code, token), shortcut=SUBMIT_SHORTCUT, icon=":material/check:",
                  wrap=False, disabled=not ready)
        st.button("Skip", key="labeling.skip", on_click=skip, args=(store, project, code, token),
                  shortcut=SKIP_SHORTCUT, icon=":material/skip_next:", wrap=False)
        last = st.session_state.get(K_LAST_MS)
        st.caption(hint + "Skipped items come back after all others." + note
                   + (f" Last save took {last:.0f} ms." if last is not None else ""))


def short_title(raw: str, limit: int = 60) -> str:
    """An item title on one line, cut to ``limit`` characters with an ellipsis."""
    title = " ".join(raw.split())
    return title if len(title) <= limit else title[:limit - 1] + "…"


def show_recent(store: LabelStore, project: Project, code: str) -> None:
    """The rater's last ratings, each with a Change button (a change is a new row; history stays)."""
    recent = assignment.recent_ratings(store, project, code, limit=5)
    if not recent:
        return
    with st.expander("Your recent ratings", icon=":material/history:", expanded=False):
        for r in recent:
            left, right = st.columns([5, 1], vertical_alignment="center")
            title = short_title(r["title"])
            left.markdown(f"**{r['score']:+.2f}** · item #{r['item_id']}"
                          + (f" · {render.escape_markdown(title)}" if title else "")
                          + f" · {r['created_at']:%H:%M:%S} UTC" + (" · repeat audit" if r["is_repeat"] else ""))
            right.button("Change", key=f"labeling.change.{r['rating_id']}", type="tertiary",
                         on_click=st.session_state.__setitem__, args=(K_EDIT, r))


@hosting.guarded
def _save_change(store: LabelStore, project: Project, code: str, old: dict) -> None:
    value = float(st.session_state[f"labeling.edit_score.{old['rating_id']}"])
    notes = st.session_state.get(f"labeling.edit_notes.{old['rating_id']}") or None
    try:
        result = assignment.correct(store, project, code, old["rating_id"], value, notes=notes)
    except WorkbenchError as exc:
        st.session_state[K_FLASH] = ("error", str(exc))
    else:
        st.session_state[K_FLASH] = ("success", f"Changed your rating of item #{old['item_id']} from "
                                                f"{result.replaced:+.2f} to {result.score:+.2f} (both kept in the "
                                                "history).")
    st.session_state.pop(K_EDIT, None)


def show_change(store: LabelStore, project: Project, code: str) -> bool:
    """The form changing one earlier rating, when the rater asked for it (True: it is shown)."""
    old = st.session_state.get(K_EDIT)
    if not old:
        return False
    st.markdown(f"**Change your rating of item #{old['item_id']}** (now {old['score']:+.2f}). The earlier "
                "rating stays in the history; the new one counts.")
    show_item(assignment.item_view(store, project, old["item_id"]))
    rid = old["rating_id"]
    st.slider("New rating", -1.0, 1.0, float(old["score"]), 0.05, format="%+.2f", key=f"labeling.edit_score.{rid}")
    st.text_area("Notes (optional)", value=old.get("notes") or "", key=f"labeling.edit_notes.{rid}", height=80)
    with st.container(horizontal=True):
        st.button("Save change", type="primary", key="labeling.save_change", on_click=_save_change,
                  args=(store, project, code, old))
        st.button("Cancel", key="labeling.cancel_change", on_click=lambda: st.session_state.pop(K_EDIT, None))
    return True
