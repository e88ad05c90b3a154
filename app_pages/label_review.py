"""Label review (adjudicators and admins): coverage, disagreements and adjudication, agreement
statistics and exports (SPEC §6.3–§6.5)."""

from __future__ import annotations

import math

import polars as pl
import streamlit as st

from core import ui
from core.errors import WorkbenchError
from core.labeling import agreement, charts, consensus, export, identity, render, reports
from core.labeling import items as labeling_items
from core.labeling import store as label_store

K_RATER = "labeling.rater"  # shared with the Labeling page
K_SIGNED_OUT = "labeling.signed_out"
K_PROJECT, K_SECTION, K_MODELS = "label_review.project", "label_review.section", "label_review.include_models"
K_ITEM, K_BINS, K_BOOT, K_PAIR = "label_review.item", "label_review.bins", "label_review.boot", "label_review.pair"
K_FLASH = "label_review.flash"
SECTIONS = ("Coverage", "Disagreements", "Agreement", "Export", "Raters")

ws = ui.current_workspace()
st.title("Label review")
if not label_store.store_exists(ws.root):
    st.info("No label store in this workspace yet: `python -m core labels init NAME`.")
    st.stop()
store = label_store.open_store(ws.root)


def _login_email() -> str | None:
    try:
        return st.user.get("email") if st.user.is_logged_in else None
    except Exception:  # noqa: BLE001 - st.login not configured
        return None


resolved = identity.resolve_identity(
    login_email=_login_email(), query_code=st.query_params.get(identity.QUERY_PARAM),
    session_code=st.session_state.get(K_RATER),
    cookie_code=None if st.session_state.get(K_SIGNED_OUT) else st.context.cookies.get(identity.COOKIE_NAME),
)
if resolved is None:
    st.info("Enter your rater code on the Labeling page first (or open this page with `?rater=CODE`).")
    st.page_link("app_pages/labeling.py", label="Go to Labeling", icon=":material/thumbs_up_down:")
    st.stop()
code, source = resolved
if source != "login":
    st.session_state[K_RATER] = code
    st.query_params[identity.QUERY_PARAM] = code
role = identity.get_role(store, code)
if role not in identity.REVIEW_ROLES:
    st.error(f"This page is for adjudicators and admins; {code} has the role {role}. "
             "An admin can grant a role here or with `python -m core labels role CODE adjudicator`.")
    st.stop()

projects = labeling_items.list_projects(store)
if not projects:
    st.info("No labeling project yet: `python -m core labels init NAME`.")
    st.stop()
names = [p.name for p in projects]
if st.session_state.get(K_PROJECT) not in names:
    st.session_state[K_PROJECT] = st.query_params.get("project") if st.query_params.get("project") in names else names[0]
for key, default in ((K_SECTION, SECTIONS[0]), (K_MODELS, False), (K_BINS, agreement.DEFAULT_BIN_THRESHOLD),
                     (K_BOOT, 1000)):
    st.session_state.setdefault(key, default)

c1, c2, c3 = st.columns([2, 2, 3], vertical_alignment="bottom")
c1.selectbox("Project", names, key=K_PROJECT)
c2.toggle("Include model raters", key=K_MODELS, help="Ratings imported from LLM raters (codes `llm:…`).")
c3.caption(f"Signed in as **{render.escape_markdown(code)}** ({role})")
project = labeling_items.get_project(store, st.session_state[K_PROJECT])
include_models = bool(st.session_state[K_MODELS])
section = st.segmented_control("Section", SECTIONS, key=K_SECTION, required=True, label_visibility="collapsed")
flash = st.session_state.pop(K_FLASH, None)
if flash:
    st.success(flash)


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def show_coverage() -> None:
    summary = reports.project_summary(store, project)
    m = st.columns(4)
    m[0].metric("Items", f"{summary['items']:,}")
    m[1].metric(f"Complete (≥ {project.target_raters} raters)", f"{summary['complete_items']:,}")
    m[2].metric("Ratings", f"{summary['ratings']:,}")
    m[3].metric("Raters", f"{summary['raters']:,}")
    left, right = st.columns([2, 3], gap="large")
    with left:
        st.subheader("Items by number of raters")
        st.altair_chart(charts.coverage_chart(reports.coverage(store, project), target=project.target_raters),
                        width="stretch")
    with right:
        st.subheader("Raters' progress")
        st.dataframe(reports.rater_progress_table(store, project), hide_index=True, width="stretch",
                     column_config={"mean_seconds": st.column_config.NumberColumn("mean seconds", format="%.0f")})


def _adjudication_form(row: dict, default: float) -> None:
    with st.form(f"label_review.adjudicate.{row['item_id']}"):
        value = st.slider("Consensus value", -1.0, 1.0, float(default), 0.05, format="%+.2f",
                          key=f"label_review.adj_value.{row['item_id']}")
        note = st.text_area("Note (why this value)", placeholder="What the discussion concluded",
                            key=f"label_review.adj_note.{row['item_id']}")
        if st.form_submit_button("Record consensus", type="primary", key=f"label_review.adj_submit.{row['item_id']}"):
            try:
                consensus.adjudicate(store, project, row["item_id"], value, adjudicator=code, note=note,
                                     include_models=include_models)
            except (WorkbenchError, ValueError) as exc:
                st.error(str(exc))
                return
            st.session_state[K_FLASH] = f"Recorded consensus {value:+.2f} for item #{row['item_id']}."
            st.rerun()


def show_disagreements() -> None:
    frame = consensus.compute_consensus(store, project, include_models=include_models)
    if frame.is_empty():
        st.info("No item has ratings from two raters yet.")
        return
    summary = consensus.consensus_summary(frame)
    m = st.columns(4)
    m[0].metric("Need discussion", summary[consensus.NEEDS_DISCUSSION])
    m[1].metric("Adjudicated", summary["adjudicated"])
    m[2].metric("Agreed (mean)", summary["calculated"])
    m[3].metric("Stale adjudications", summary["stale_adjudications"])
    titles = reports.items_frame(store, project, frame["item_id"].to_list()).select("item_id", "prompt_title")
    queue = consensus.disagreement_queue(frame).join(titles, on="item_id", how="left", maintain_order="left")
    st.dataframe(
        queue.select("item_id", "consensus_source", "spread", "scores", "raters", "consensus", "prompt_title"),
        hide_index=True, width="stretch", height=260,
        column_config={"item_id": st.column_config.NumberColumn("item", format="%d"),
                       "consensus_source": "status", "spread": st.column_config.NumberColumn(format="%.2f"),
                       "consensus": st.column_config.NumberColumn(format="%+.2f"), "prompt_title": "prompt"})
    rows = queue.to_dicts()
    ids = [r["item_id"] for r in rows]
    if st.session_state.get(K_ITEM) not in ids:
        st.session_state[K_ITEM] = ids[0]
    by_id = {r["item_id"]: r for r in rows}
    st.selectbox("Item", ids, key=K_ITEM, format_func=lambda i: render.spread_label(by_id[i]))
    row = by_id[st.session_state[K_ITEM]]
    item = reports.items_frame(store, project, [row["item_id"]]).row(0, named=True)
    with st.expander("Prompt and response", expanded=False):
        st.markdown(f"##### {render.escape_markdown(item['prompt_title'])}")
        st.markdown(render.safe_markdown(item["prompt_body"]))
        st.divider()
        st.markdown(render.safe_markdown(item["response_text"]))
    st.altair_chart(charts.rater_values_chart(row["raters"], row["scores"], labels=project.scale_labels),
                    width="stretch")
    if row["consensus_source"] == "adjudicated" or row["stale"]:
        st.caption(f"{'Earlier' if row['stale'] else 'Current'} adjudication by "
                   f"{render.escape_markdown(row['adjudicator'] or '?')}: {_num(row['consensus'], 2)} — "
                   f"{render.escape_markdown(row['note'] or '')}")
    default = row["consensus"] if row["consensus"] is not None else sum(row["scores"]) / len(row["scores"])
    _adjudication_form(row, round(default * 20) / 20)


def _metric(col, label: str, value: float, lo: float, hi: float, band: str, help_text: str) -> None:
    col.metric(label, _num(value), help=help_text)
    col.caption(f"95% CI [{_num(lo)}, {_num(hi)}] · {band}")


def show_agreement() -> None:
    frame = reports.ratings_frame(store, project, include_models=include_models)
    c1, c2, _ = st.columns([1, 1, 3])
    c1.number_input("Bin threshold (±)", 0.05, 0.95, step=0.01, key=K_BINS, format="%.2f")
    c2.selectbox("Bootstrap resamples", [200, 1000, 2000], key=K_BOOT)
    if frame.is_empty():
        st.info("No ratings yet.")
        return
    rep = agreement.agreement_report(frame, threshold=float(st.session_state[K_BINS]),
                                     n_boot=int(st.session_state[K_BOOT]))
    st.caption(f"{rep['n_ratings']:,} ratings of {rep['n_items']:,} items by {rep['n_raters']} raters; "
               f"{rep['n_items_multi']:,} items have ≥ 2 raters. Each rater's first rating per item counts.")
    a, icc, b = rep["alpha"], rep["icc"], rep["binned"]
    m = st.columns(4)
    _metric(m[0], "Krippendorff's α (interval)", a["value"], *a["ci"], a["band"],
            "Bootstrap CI over items. ≥ .80 reliable, ≥ .667 tentative (Krippendorff 2004).")
    _metric(m[1], "ICC(1,1)", icc["icc1"], icc["icc1_lo"], icc["icc1_hi"], icc["band_icc1"],
            "One-way random effects, one rater. Koo & Li (2016): ≥ .90 excellent, ≥ .75 good, ≥ .50 moderate.")
    _metric(m[2], f"ICC(1,k), k₀ = {_num(icc['k0'], 2)}", icc["icck"], icc["icck_lo"], icc["icck_hi"],
            icc["band_icck"], "Reliability of the mean of the item's raters.")
    _metric(m[3], f"Fleiss' κ (bins ±{b['threshold']:.2f})", b["kappa"], b["kappa_lo"], b["kappa_hi"], b["band"],
            f"Observed agreement {_num(b['observed_agreement'])}. Landis & Koch (1977) bands.")
    pairs = pl.DataFrame(rep["pairwise"])
    st.subheader("Rater pairs")
    if pairs.is_empty():
        st.info("No two raters share at least 3 items yet.")
    else:
        st.dataframe(pairs, hide_index=True, width="stretch", column_config={
            c: st.column_config.NumberColumn(format="%.3f") for c in pairs.columns if pairs[c].dtype == pl.Float64})
        labels = [f"{r['rater_a']} ~ {r['rater_b']}" for r in rep["pairwise"]]
        if st.session_state.get(K_PAIR) not in labels:
            st.session_state[K_PAIR] = labels[0]
        chosen = rep["pairwise"][labels.index(st.selectbox("Pair", labels, key=K_PAIR))]
        first = reports.first_ratings(frame)
        st.altair_chart(charts.pair_scatter_chart(first, chosen["rater_a"], chosen["rater_b"]), width="content")
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Per-rater bias")
        bias = pl.DataFrame(rep["rater_bias"])
        if bias.is_empty():
            st.info("Needs items with at least two raters.")
        else:
            st.altair_chart(charts.rater_bias_chart(bias), width="stretch")
    with right:
        st.subheader("Test–retest (repeat audits)")
        retest = pl.DataFrame(rep["test_retest"])
        if retest.is_empty():
            st.info("No repeat audits yet: raters get them once they have rated everything they can.")
        else:
            st.dataframe(retest, hide_index=True, width="stretch", column_config={
                c: st.column_config.NumberColumn(format="%.3f") for c in ("mean_abs_diff", "pearson", "same_bin")})


def show_export() -> None:
    datasets = sorted(set(reports.items_frame(store, project)["dataset"].to_list()))
    st.write("Reviews: one line per rating (SPEC §6.5 layout). Consensus: one line per item with ≥ 2 raters.")
    cols = st.columns(max(1, len(datasets)) + 1)
    for col, ds in zip(cols, datasets, strict=False):
        col.download_button(
            f"{ds}_reviews.jsonl", data=lambda ds=ds: export.to_jsonl(
                [r for r in export.review_rows(store, project) if r["dataset"] == ds]),
            file_name=f"{ds}_reviews.jsonl", mime="application/jsonl", icon=":material/download:",
            key=f"label_review.dl.{ds}")
    cols[-1].download_button(
        f"{project.name}_consensus.jsonl", icon=":material/download:", key="label_review.dl.consensus",
        data=lambda: export.to_jsonl(export.consensus_rows(store, project, include_models=include_models)),
        file_name=f"{project.name}_consensus.jsonl", mime="application/jsonl")
    if st.button("Write both to the workspace", key="label_review.write"):
        result = export.export_project(store, project, ws.labels_export_dir(project.name), include_models=include_models)
        st.success(f"Wrote {result['n_reviews']:,} reviews and {result['n_consensus']:,} consensus lines to "
                   f"`{ws.labels_export_dir(project.name)}`.")


def show_raters() -> None:
    st.dataframe(identity.list_raters(store), hide_index=True, width="stretch")
    if role != "admin":
        st.caption("Only admins grant roles.")
        return
    with st.form("label_review.role"):
        c1, c2 = st.columns(2)
        who = c1.text_input("Rater code", key="label_review.role_code")
        new_role = c2.selectbox("Role", label_store.ROLES, key="label_review.role_value")
        if st.form_submit_button("Set role", key="label_review.role_submit"):
            try:
                identity.set_role(store, identity.check_code(who), new_role)
            except ValueError as exc:
                st.error(str(exc))
                return
            st.session_state[K_FLASH] = f"{who} is now {new_role}."
            st.rerun()


{"Coverage": show_coverage, "Disagreements": show_disagreements, "Agreement": show_agreement,
 "Export": show_export, "Raters": show_raters}[section]()
