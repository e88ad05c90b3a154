"""Glue of the Label review page for a judge audit: the fields whose raters tied, adjudicated one
at a time (the review text, every rater's answer and notes, a radio of the field's values and a note)."""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.labeling import answer_consensus, render, reports
from core.ui.label_review import K_FLASH, Context, show_coverage, show_flash

K_TIE = "label_review.audit_tie"
STATUS = {"needs_adjudication": "tie: needs adjudication", "adjudicated": "adjudicated", "majority": "majority",
          "unanimous": "unanimous"}


def _record(c: Context, item_id: int, field: str) -> None:
    value = st.session_state.get(f"label_review.audit_value.{item_id}.{field}")
    note = st.session_state.get(f"label_review.audit_note.{item_id}.{field}") or ""
    if value is None:
        st.session_state[K_FLASH] = ("error", "Choose the value first.")
        return
    try:
        answer_consensus.adjudicate_field(c.store, c.project, item_id, field, value, adjudicator=c.code, note=note)
    except (WorkbenchError, ValueError) as exc:
        st.session_state[K_FLASH] = ("error", str(exc))
        return
    st.session_state.pop(K_TIE, None)
    st.session_state[K_FLASH] = ("success", f"Recorded {field} = {value} for item #{item_id}.")


def show_ties(c: Context) -> None:
    """Counts by consensus source, the fields awaiting adjudication first, and the chosen one's form."""
    frame = answer_consensus.compute_answer_consensus(c.store, c.project, include_models=c.include_models)
    if frame.is_empty():
        st.info(f"No review has answers from {min(2, c.project.target_raters)} raters yet.")
        return
    s = answer_consensus.answer_summary(frame)
    m = st.columns(4)
    m[0].metric("Ties to adjudicate", s[answer_consensus.NEEDS_ADJUDICATION], help="Fields whose raters split evenly.")
    m[1].metric("Adjudicated", s["adjudicated"])
    m[2].metric("Majority / unanimous", f"{s['majority']} / {s['unanimous']}")
    m[3].metric("Stale adjudications", s["stale_adjudications"])
    titles = reports.items_frame(c.store, c.project, frame["item_id"].unique().to_list()).select("item_id", "prompt_title")
    queue = (frame.join(titles, on="item_id", how="left")
             .with_columns((pl.col("source") == answer_consensus.NEEDS_ADJUDICATION).alias("open"))
             .sort(["open", "item_id", "field"], descending=[True, False, False]))
    shown = queue.filter(pl.col("open") | (pl.col("source") == "adjudicated") | pl.col("stale"))
    if shown.is_empty():
        st.success("Every field of every review has a majority: nothing to adjudicate.")
        return
    st.dataframe(shown.with_columns(pl.col("source").replace_strict(STATUS, default=pl.col("source")),
                                    pl.col("values").list.join(", "), pl.col("raters").list.join(", "))
                 .select("item_id", "field", "source", "values", "raters", "consensus", "prompt_title"),
                 hide_index=True, width="stretch", height=220,
                 column_config={"item_id": st.column_config.NumberColumn("item", format="%d", width="small"),
                                "source": "status", "values": "answers", "prompt_title": "restaurant"})
    options = [(r["item_id"], r["field"]) for r in shown.iter_rows(named=True)]
    if st.session_state.get(K_TIE) not in options:
        st.session_state[K_TIE] = options[0]
    by_key = {(r["item_id"], r["field"]): r for r in shown.iter_rows(named=True)}
    st.selectbox("Field to adjudicate", options, key=K_TIE,
                 format_func=lambda o: f"#{o[0]} · {o[1]} · {STATUS.get(by_key[o]['source'], by_key[o]['source'])} · "
                                       f"{' '.join((by_key[o]['prompt_title'] or '').split())[:60]}")
    _show_tie(c, by_key[st.session_state[K_TIE]])


def _show_tie(c: Context, row: dict[str, Any]) -> None:
    item_id, name = row["item_id"], row["field"]
    item = reports.items_frame(c.store, c.project, [item_id]).row(0, named=True)
    spec = next(f for f in c.project.answer_fields if f.name == name)
    if c.code in row["raters"]:
        st.warning(f"You answered this review yourself ({render.escape_markdown(c.code)}): consider leaving it to "
                   "someone else.", icon=":material/flag:")
    left, right = st.columns([3, 2], gap="large")
    with left, st.container(border=True):
        st.markdown(f"##### {render.escape_markdown(item['prompt_title']) or 'Review'}")
        st.caption("Review")
        st.markdown(render.safe_markdown(item["response_text"]))
    with right:
        st.markdown(f"**{render.escape_markdown(name)}**: {render.escape_markdown(spec.description)}")
        for rater, value in zip(row["raters"], row["values"], strict=False):
            st.markdown(f"- {render.escape_markdown(rater)}: `{render.escape_markdown(value)}`")
        if row["adjudicator"]:
            st.caption(f"{'Earlier' if row['stale'] else 'Current'} adjudication by "
                       f"{render.escape_markdown(row['adjudicator'])}: {render.escape_markdown(row['adjudicated_value'])}"
                       f" — {render.escape_markdown(row['note'] or '')}")
        meanings = dict(spec.values)
        with st.form(f"label_review.audit_form.{item_id}.{name}"):
            st.radio("Value", spec.names, index=None, key=f"label_review.audit_value.{item_id}.{name}",
                     format_func=lambda v: f"{v} — {meanings[v]}" if meanings.get(v) else v)
            st.text_area("Note (why this value)", key=f"label_review.audit_note.{item_id}.{name}")
            st.form_submit_button("Record the value", type="primary", on_click=_record, args=(c, item_id, name))
    notes = answer_consensus.answers_frame(c.store, c.project).filter(
        (pl.col("item_id") == item_id) & pl.col("notes").is_not_null())
    if notes.height:
        st.markdown("**Raters' notes on this review**")
        st.dataframe(notes.select("rater", "notes", "created_at"), hide_index=True, width="stretch")


def show_audit_pointer(c: Context) -> None:
    """Agreement and export of a judge audit live with the judges it measures."""
    st.info("This project is a judge audit: each judge against the raters' consensus (confusion, precision and recall "
            "with intervals, Cohen's κ) is on the Ground truth page's **Compare judges** tab and in "
            f"`workbench audit report --project {c.project.name} --json`; `--confusion-out FILE` exports the "
            "confusion file.", icon=":material/fact_check:")


def show(section: str, c: Context) -> None:
    """A judge audit's Label review section: coverage as for scores, ties adjudicated field by field,
    agreement and export pointing to the audit report."""
    show_flash()
    {"Coverage": show_coverage, "Disagreements": show_ties, "Agreement": show_audit_pointer,
     "Export": show_audit_pointer}[section](c)
