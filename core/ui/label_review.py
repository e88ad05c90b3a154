"""Glue of the Label review page: one function per section (coverage, disagreements, agreement,
export, raters). The page picks the project and the section and calls :func:`show`."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl
import streamlit as st

from core import ui
from core.base.errors import WorkbenchError
from core.labeling import agreement, charts, claims, consensus, export, identity, render, reports
from core.labeling import store as label_store
from core.labeling.items import Project
from core.ui import hosting
from core.workspace import Workspace

K_ITEM, K_BINS, K_BOOT, K_PAIR = "label_review.item", "label_review.bins", "label_review.boot", "label_review.pair"
K_FLASH, K_QUEUE = "label_review.flash", "label_review.queue"


def count_column(label: str) -> Any:
    """A whole-number column shown with thousands separators (1,024)."""
    return st.column_config.NumberColumn(label, format="localized")


PAIR_COLUMNS: dict[str, Any] = {
    "rater_a": "rater A", "rater_b": "rater B",
    "n": st.column_config.NumberColumn("shared items", format="localized", width="small"),
    "pearson": "Pearson r [95% CI]", "spearman": "Spearman ρ [95% CI]",
    "mean_abs_diff": st.column_config.NumberColumn("mean |difference|", format="%.3f")}


def with_ci(value: float | None, lo: float | None, hi: float | None) -> str:
    """A statistic with its interval in one cell.

    >>> with_ci(0.9451, 0.8449, 0.981), with_ci(float("nan"), None, None)
    ('0.945 [0.845, 0.981]', 'n/a')
    """
    return "n/a" if value is None or not math.isfinite(value) else f"{num(value)} [{num(lo)}, {num(hi)}]"


def pairs_table(pairs: pl.DataFrame, retired: Collection[str]) -> pl.DataFrame:
    """Rater pairs as shown: codes marked, each correlation with its CI in one column."""
    rows = [{**r, "pearson": with_ci(r["pearson"], r["pearson_lo"], r["pearson_hi"]),
             "spearman": with_ci(r["spearman"], r["spearman_lo"], r["spearman_hi"])} for r in pairs.to_dicts()]
    frame = pl.DataFrame(rows, schema={"rater_a": pl.String, "rater_b": pl.String, "n": pl.Int64,
                                       "pearson": pl.String, "spearman": pl.String, "mean_abs_diff": pl.Float64})
    return mark_retired(frame, ["rater_a", "rater_b"], retired)


SECTIONS = ("Coverage", "Disagreements", "Agreement", "Export")  # core.ui.label_admin adds its own
STATUS = {consensus.NEEDS_DISCUSSION: "needs discussion", "adjudicated": "adjudicated", "calculated": "agreed"}


@dataclass(frozen=True)
class Context:
    """What every section needs: the store, the project, who is signed in and the model toggle."""

    ws: Workspace
    store: label_store.LabelStore
    project: Project
    code: str
    role: str
    include_models: bool


def marked(code: str, retired: Collection[str]) -> str:
    """A rater code as listed on this page: a code an admin retired carries "(retired)".

    >>> marked("ana", {"anna"}), marked("anna", {"anna"})
    ('ana', 'anna (retired)')
    """
    return f"{code} (retired)" if code in retired else code


def mark_retired(frame: pl.DataFrame, columns: Iterable[str], retired: Collection[str]) -> pl.DataFrame:
    """``frame`` with the rater codes in ``columns`` (a code or a list of codes per row) marked."""
    if not retired:
        return frame
    codes = list(retired)

    def mark(col: pl.Expr) -> pl.Expr:
        return pl.when(col.is_in(codes)).then(col + " (retired)").otherwise(col)

    return frame.with_columns(
        pl.col(c).list.eval(mark(pl.element())) if isinstance(frame.schema[c], pl.List) else mark(pl.col(c))
        for c in columns)


def num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def show_coverage(c: Context) -> None:
    summary = reports.project_summary(c.store, c.project)
    m = st.columns(4)
    m[0].metric("Items", f"{summary['items']:,}")
    m[1].metric("Complete", f"{summary['complete_items']:,}",
                help=f"Items with all the raters they need: {c.project.target_raters}, plus any extra rater routed to "
                     "an item whose raters disagreed.")
    m[2].metric("Ratings", f"{summary['ratings']:,}")
    m[3].metric("Raters", f"{summary['raters']:,}")
    st.subheader("Raters' progress")  # the whole width: every column of the table in view
    st.dataframe(mark_retired(reports.rater_progress_table(c.store, c.project), ["rater"],
                              identity.retired_codes(c.store)), hide_index=True, width="stretch", placeholder="—",
                 column_config={"n_ratings": count_column("ratings"), "n_items": count_column("items"),
                                "n_repeats": count_column("repeat audits"),
                                "mean_seconds": st.column_config.NumberColumn("mean seconds", format="%.0f"),
                                "last_rating_at": st.column_config.DatetimeColumn("last rating", format="YYYY-MM-DD")})
    left, _ = st.columns([1, 1], gap="large")
    with left:
        st.subheader("Items by number of raters")
        ui.show_chart(charts.coverage_chart(reports.coverage(c.store, c.project), target=c.project.target_raters),
                      width="stretch")
    show_routing(c)


def show_routing(c: Context) -> None:
    """Items that got a rater beyond the target because their raters disagreed, and why."""
    st.subheader("Extra raters where raters disagree")
    p = c.project
    if p.target_spread is None:
        st.caption("Off for this project: an admin can turn it on under Settings (a target spread and a cap).")
        return
    measure = "spread (max − min)" if p.spread_measure == "range" else "95% interval width of the mean"
    st.caption(f"An item whose {measure} exceeds {p.target_spread:.2f} once it has its raters gets one more, "
               f"up to {p.raters_cap} raters.")
    table = reports.routing_table(c.store, p)
    if table.is_empty():
        st.info("No item has needed an extra rater yet.")
        return
    st.dataframe(table.select("item_id", "reason", "raters_now", "needs", "routed_at"), hide_index=True,
                 width="stretch", column_config={
                     "item_id": st.column_config.NumberColumn("item", format="%d", width="small"),
                     "reason": st.column_config.TextColumn("why", width="large"), "raters_now": "raters now",
                     "needs": "needs", "routed_at": st.column_config.DatetimeColumn("routed (UTC)",
                                                                                   format="YYYY-MM-DD HH:mm")})


def next_item_after(ids: list[int], open_ids: set[int], current: int) -> int:
    """The item to show after ``current`` is adjudicated: the next one still needing discussion
    (in queue order, wrapping), else the next one in the queue.

    >>> next_item_after([5, 3, 9, 1], {9, 1}, 5), next_item_after([5, 3, 9], set(), 9), next_item_after([5], {5}, 5)
    (9, 5, 5)
    """
    order = ids[ids.index(current) + 1:] + ids[:ids.index(current)] if current in ids else ids
    for candidate in order:
        if candidate in open_ids:
            return candidate
    return order[0] if order else current


@hosting.guarded
def _record(c: Context, item_id: int, ids: list[int], open_ids: set[int]) -> None:
    """Form callback: record the consensus, then open the next item of the queue."""
    value = float(st.session_state[f"label_review.adj_value.{item_id}"])
    note = st.session_state.get(f"label_review.adj_note.{item_id}") or ""
    try:
        consensus.adjudicate(c.store, c.project, item_id, value, adjudicator=c.code, note=note,
                             include_models=c.include_models)
    except (WorkbenchError, ValueError) as exc:
        st.session_state[K_FLASH] = ("error", str(exc))
        return
    st.session_state[K_ITEM] = next_item_after(ids, open_ids - {item_id}, item_id)
    st.session_state[K_FLASH] = ("success", f"Recorded consensus {value:+.2f} for item #{item_id}; "
                                            f"showing the next item.")


def _pick_row(ids: list[int]) -> None:
    """Clicking a queue row opens that item."""
    rows = st.session_state[K_QUEUE].selection.rows
    if rows:
        st.session_state[K_ITEM] = ids[rows[0]]


def show_disagreements(c: Context) -> None:
    frame = consensus.compute_consensus(c.store, c.project, include_models=c.include_models)
    if frame.is_empty():
        st.info("No item has ratings from two raters yet.")
        return
    summary = consensus.consensus_summary(frame)
    m = st.columns(4)
    m[0].metric("Need discussion", f"{summary[consensus.NEEDS_DISCUSSION]:,}")
    m[1].metric("Adjudicated", f"{summary['adjudicated']:,}")
    m[2].metric("Agreed (mean)", f"{summary['calculated']:,}")
    m[3].metric("Stale adjudications", f"{summary['stale_adjudications']:,}")
    titles = reports.items_frame(c.store, c.project, frame["item_id"].to_list()).select("item_id", "prompt_title")
    queue = consensus.disagreement_queue(frame).join(titles, on="item_id", how="left", maintain_order="left")
    rows = queue.to_dicts()
    ids = [r["item_id"] for r in rows]
    open_ids = {r["item_id"] for r in rows if r["consensus_source"] == consensus.NEEDS_DISCUSSION}
    by_id = {r["item_id"]: r for r in rows}
    chosen = st.session_state.get(K_ITEM)
    wanted = next((i for i in ids if i == chosen), None)  # an item of the queue, or None
    held = claims.claim(c.store, c.project, c.code, ids, wanted=wanted)
    holders = claims.claimed_by(c.store, c.project)
    if wanted is not None and held != wanted:
        st.warning(f"Item #{wanted} is being adjudicated by {render.escape_markdown(holders.get(wanted, '?'))}; "
                   f"you hold #{held} instead." if held is not None else
                   f"Item #{wanted} is being adjudicated by someone else.", icon=":material/lock:")
    st.session_state[K_ITEM] = held if held is not None else ids[0]
    queue = queue.with_columns(pl.col("item_id").replace_strict(holders, default="", return_dtype=pl.String)
                               .alias("claimed_by"))
    st.caption("Click a row to open the item. The item you open is held for you for 10 minutes: another "
               "adjudicator opening the queue gets a different one.")
    shown = mark_retired(queue, ["raters"], identity.retired_codes(c.store)).with_columns(
        pl.col("consensus_source").replace_strict(STATUS, default=pl.col("consensus_source")),
        pl.col("raters").list.join(", "),
        pl.col("scores").list.eval(pl.element().round(2)),
        pl.when(pl.col("consensus").is_null()).then(pl.lit("—"))
        .otherwise(pl.col("consensus").map_elements(lambda v: f"{v:+.2f}", return_dtype=pl.String))
        .alias("consensus"))
    st.dataframe(shown.select("item_id", "consensus_source", "spread", "scores", "raters", "consensus", "claimed_by",
                              "prompt_title"),
                 hide_index=True, width="stretch", height=260, key=K_QUEUE, on_select=lambda: _pick_row(ids),
                 selection_mode="single-row",
                 column_config={"item_id": st.column_config.NumberColumn("item", format="%d", width="small"),
                                "consensus_source": "status", "spread": st.column_config.NumberColumn(format="%.2f"),
                                "claimed_by": "held by",
                                "prompt_title": st.column_config.TextColumn("prompt", width="large")})
    st.selectbox("Item", ids, key=K_ITEM, format_func=lambda i: render.spread_label(by_id[i]))
    show_item(c, by_id[st.session_state[K_ITEM]], ids, open_ids)


def show_item(c: Context, row: dict, ids: list[int], open_ids: set[int]) -> None:
    """One queue item: the whole prompt and response, every rater's score and notes, the form."""
    item_id = row["item_id"]
    item = reports.items_frame(c.store, c.project, [item_id]).row(0, named=True)
    retired = identity.retired_codes(c.store)
    if c.code in row["raters"]:
        st.warning(f"You rated this item yourself ({render.escape_markdown(c.code)}): "
                   "consider leaving its adjudication to someone else.", icon=":material/flag:")
    left, right = st.columns([3, 2], gap="large")
    with left, st.container(border=True):
        st.markdown(f"##### {render.escape_markdown(item['prompt_title']) or 'Prompt'}")
        st.markdown(render.safe_markdown(item["prompt_body"]))
        st.caption("Response")
        st.markdown(render.safe_markdown(item["response_text"]))
    with right:
        ui.show_chart(charts.rater_values_chart([marked(r, retired) for r in row["raters"]], row["scores"], labels=c.project.scale_labels),
                        width="stretch")
        if row["consensus_source"] == "adjudicated" or row["stale"]:
            st.caption(f"{'Earlier' if row['stale'] else 'Current'} adjudication by "
                       f"{render.escape_markdown(marked(row['adjudicator'] or '?', retired))}: {num(row['consensus'], 2)} — "
                       f"{render.escape_markdown(row['note'] or '')}")
        default = row["consensus"] if row["consensus"] is not None else sum(row["scores"]) / len(row["scores"])
        with st.form(f"label_review.adjudicate.{item_id}"):
            st.slider("Consensus value", -1.0, 1.0, round(default * 20) / 20, 0.05, format="%+.2f",
                      key=f"label_review.adj_value.{item_id}")
            st.text_area("Note (why this value)", placeholder="What the discussion concluded",
                         key=f"label_review.adj_note.{item_id}")
            st.form_submit_button("Record consensus and open the next item", type="primary",
                                  key=f"label_review.adj_submit.{item_id}", on_click=_record,
                                  args=(c, item_id, ids, open_ids))
    st.markdown("**Every rating of this item, with the rater's notes**")
    ratings = mark_retired(reports.ratings_frame(c.store, c.project, include_models=c.include_models).filter(
        pl.col("item_id") == item_id), ["rater"], retired).with_columns(
        pl.col("notes").fill_null(""), pl.when(pl.col("is_repeat")).then(pl.lit("repeat audit"))
        .otherwise(pl.lit("first")).alias("is_repeat"))
    st.dataframe(ratings.select("rater", "score", "notes", "is_repeat", "created_at"), hide_index=True,
                 width="stretch", column_config={
                     "score": st.column_config.NumberColumn(format="%+.2f", width="small"), "is_repeat": "pass",
                     "notes": st.column_config.TextColumn("notes", width="large"),
                     "created_at": st.column_config.DatetimeColumn("rated (UTC)", format="YYYY-MM-DD HH:mm")})


def _metric(col, label: str, value: float, lo: float, hi: float, band: str, help_text: str) -> None:
    col.metric(label, num(value), help=help_text)
    col.caption(f"95% CI [{num(lo)}, {num(hi)}] · {band}")


def _ratings_digest(frame: pl.DataFrame) -> str:
    """A digest of the ratings shown (every column of every row): the agreement's cache key."""
    return hashlib.blake2b(frame.serialize(), digest_size=16).hexdigest()


@st.cache_data(max_entries=16, show_spinner="Bootstrapping the agreement statistics…")
def _agreement(digest: str, threshold: float, n_boot: int, _frame: pl.DataFrame) -> dict[str, Any]:
    """:func:`core.labeling.agreement.agreement_report` of the ratings ``digest`` names (1,000
    resamples of 6,000 ratings take about a second: once per ratings and options, not per rerun)."""
    return agreement.agreement_report(_frame, threshold=threshold, n_boot=n_boot)


def show_agreement(c: Context) -> None:
    frame = reports.ratings_frame(c.store, c.project, include_models=c.include_models)
    c1, c2, _ = st.columns([1, 1, 3])
    c1.number_input("Bin threshold (±)", 0.05, 0.95, step=0.01, key=K_BINS, format="%.2f")
    c2.selectbox("Bootstrap resamples", [200, 1000, 2000], key=K_BOOT)
    if frame.is_empty():
        st.info("No ratings yet.")
        return
    view = (c.project.name, c.include_models, st.session_state[K_BINS], st.session_state[K_BOOT], frame.height)
    if not hosting.view_allowed("bootstrap", view):
        return
    rep = _agreement(_ratings_digest(frame), float(st.session_state[K_BINS]), int(st.session_state[K_BOOT]), frame)
    st.caption(f"{rep['n_ratings']:,} ratings of {rep['n_items']:,} items by {rep['n_raters']} raters; "
               f"{rep['n_items_multi']:,} items have ≥ 2 raters. Each rater's first rating per item counts.")
    a, icc, b = rep["alpha"], rep["icc"], rep["binned"]
    m = st.columns(4)
    _metric(m[0], "Krippendorff's α (interval)", a["value"], a["ci"][0], a["ci"][1], a["band"],
            "Bootstrap CI over items. ≥ .80 reliable, ≥ .667 tentative (Krippendorff 2004).")
    _metric(m[1], "ICC(1,1)", icc["icc1"], icc["icc1_lo"], icc["icc1_hi"], icc["band_icc1"],
            "One-way random effects, one rater. Koo & Li (2016): ≥ .90 excellent, ≥ .75 good, ≥ .50 moderate.")
    _metric(m[2], f"ICC(1,k), k₀ = {num(icc['k0'], 2)}", icc["icck"], icc["icck_lo"], icc["icck_hi"],
            icc["band_icck"], "Reliability of the mean of the item's raters.")
    _metric(m[3], f"Fleiss' κ (bins ±{b['threshold']:.2f})", b["kappa"], b["kappa_lo"], b["kappa_hi"], b["band"],
            f"Observed agreement {num(b['observed_agreement'])}. Landis & Koch (1977) bands.")
    retired = identity.retired_codes(c.store)
    pairs = pl.DataFrame(rep["pairwise"])
    st.subheader("Rater pairs")
    if pairs.is_empty():
        st.info("No two raters share at least 3 items yet.")
    else:
        st.dataframe(pairs_table(pairs, retired), hide_index=True, width="stretch", column_config=PAIR_COLUMNS)
        labels = [f"{marked(r['rater_a'], retired)} ~ {marked(r['rater_b'], retired)}" for r in rep["pairwise"]]
        if st.session_state.get(K_PAIR) not in labels:
            st.session_state[K_PAIR] = labels[0]
        chosen = rep["pairwise"][labels.index(st.selectbox("Pair", labels, key=K_PAIR))]
        first = mark_retired(reports.first_ratings(frame), ["rater"], retired)
        ui.show_chart(charts.pair_scatter_chart(first, marked(chosen["rater_a"], retired),
                                                  marked(chosen["rater_b"], retired)), width="content")
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Per-rater bias")
        bias = pl.DataFrame(rep["rater_bias"])
        if bias.is_empty():
            st.info("Needs items with at least two raters.")
        else:
            ui.show_chart(charts.rater_bias_chart(mark_retired(bias, ["rater"], retired)), width="stretch")
    with right:
        st.subheader("Test–retest (repeat audits)")
        retest = pl.DataFrame(rep["test_retest"])
        if retest.is_empty():
            st.info("No repeat audits yet: raters get them once they have rated everything they can.")
        else:
            st.dataframe(mark_retired(retest, ["rater"], retired), hide_index=True, width="stretch", column_config={
                "n_pairs": st.column_config.NumberColumn("pairs", width="small"),
                "mean_abs_diff": st.column_config.NumberColumn("mean |diff.|", format="%.3f", width="small"),
                "pearson": st.column_config.NumberColumn("Pearson r", format="%.3f", width="small"),
                "same_bin": st.column_config.NumberColumn("same bin", format="%.3f", width="small")})


def show_export(c: Context) -> None:
    store, project = c.store, c.project
    datasets = sorted(set(reports.items_frame(store, project)["dataset"].to_list()))
    st.write("Reviews: one line per rating. Consensus: one line per item with ≥ 2 raters.")
    cols = st.columns(max(1, len(datasets)) + 1)
    for col, ds in zip(cols, datasets, strict=False):
        hosting.download_button(
            col, f"{ds}_reviews.jsonl", lambda ds=ds: export.to_jsonl(  # type: ignore[misc]
                [r for r in export.review_rows(store, project) if r["dataset"] == ds]),
            file_name=f"{ds}_reviews.jsonl", mime="application/jsonl", icon=":material/download:",
            key=f"label_review.dl.{ds}")
    hosting.download_button(
        cols[-1], f"{project.name}_consensus.jsonl", icon=":material/download:", key="label_review.dl.consensus",
        build=lambda: export.to_jsonl(export.consensus_rows(store, project, include_models=c.include_models)),
        file_name=f"{project.name}_consensus.jsonl", mime="application/jsonl")
    refused = hosting.write_refusal("writing exports into the workspace")
    if refused:
        st.caption(refused)
    if st.button("Write both to the workspace", key="label_review.write", disabled=bool(refused)):
        limited = hosting.take_token("export")
        if limited:
            st.error(limited)
            return
        out = c.ws.labels_export_dir(project.name)
        result = export.export_project(store, project, out, include_models=c.include_models)
        st.success(f"Wrote {result['n_reviews']:,} reviews and {result['n_consensus']:,} consensus lines to "
                   f"`{out}`.")


def show_flash() -> None:
    """The message of the last action, once."""
    flash = st.session_state.pop(K_FLASH, None)
    if flash:
        kind, text = flash if isinstance(flash, tuple) else ("success", flash)
        (st.error if kind == "error" else st.success)(text)


def show(section: str, c: Context) -> None:
    """Show a flash message from the last action, then ``section`` (a judge audit's: :func:`core.ui.audit_review.show`)."""
    show_flash()
    {"Coverage": show_coverage, "Disagreements": show_disagreements, "Agreement": show_agreement,
     "Export": show_export}[section](c)
