"""Glue of the Label review page's admin and rater sections: raters (roles, retired codes,
personal links), project settings (what raters see, scale labels, guidelines, extra raters) and
the per-rater scale view (leniency and range use with intervals)."""

from __future__ import annotations

import json
import math

import polars as pl
import streamlit as st

from core import ui
from core.base.errors import WorkbenchError
from core.labeling import assignment, charts, consensus, identity, links, rater_stats, render, reports
from core.labeling import items as labeling_items
from core.labeling.store import ROLES, SPREAD_MEASURES, LabelStore
from core.ui import hosting
from core.ui.label_review import K_FLASH, Context, mark_retired, num

SECTIONS = ("Rater scales", "Raters", "Settings")
K_NEW_LINK = "label_review.new_link"  # (code, token) of the link just created: shown once


@hosting.guarded
def _retire(c: Context) -> None:
    who = (st.session_state.get("label_review.retire_code") or "").strip()
    try:
        identity.retire_rater(c.store, who, by=c.code, reason=st.session_state.get("label_review.retire_reason") or "")
    except ValueError as exc:
        st.session_state[K_FLASH] = ("error", str(exc))
        return
    st.session_state[K_FLASH] = ("success", f"Retired {who}: the code cannot sign in again; its ratings stay, "
                                            "marked (retired).")


def show_raters(c: Context) -> None:
    table = identity.list_raters(c.store).with_columns(
        pl.when(pl.col("retired_at").is_not_null()).then(pl.lit("retired")).otherwise(pl.lit("active")).alias("status"))
    shown = table.with_columns(pl.col("retired_at").dt.strftime("%Y-%m-%d").fill_null(""),
                               pl.col("retired_by").fill_null(""))
    st.dataframe(shown.select("code", "role", "status", "kind", "n_ratings", "created_at", "retired_at", "retired_by"),
                 hide_index=True, width="stretch", column_config={
                     "n_ratings": "ratings", "created_at": st.column_config.DatetimeColumn("first seen", format="YYYY-MM-DD"),
                     "retired_at": "retired", "retired_by": "retired by"})
    if c.role != "admin":
        st.caption("Only admins grant roles and retire codes.")
        return
    refused = hosting.admin_refusal(c.ws, "grant roles or retire codes")
    if refused:  # a team deployment's admin parts need the team admin too; a demo changes no roles
        st.caption(refused)
        return
    left, right = st.columns(2, gap="large")
    with left, st.form("label_review.role"):
        st.markdown("**Grant a role**")
        who = st.text_input("Rater code", key="label_review.role_code")
        new_role = st.selectbox("Role", ROLES, key="label_review.role_value")
        if st.form_submit_button("Set role", key="label_review.role_submit"):
            try:
                identity.set_role(c.store, identity.check_code(who), new_role)
            except ValueError as exc:
                st.error(str(exc))
            else:
                st.session_state[K_FLASH] = ("success", f"{who} is now {new_role}.")
                st.rerun()
    with right, st.form("label_review.retire"):
        st.markdown("**Retire a mistyped code**")
        active = table.filter(pl.col("retired_at").is_null() & (pl.col("code") != c.code))["code"].to_list()
        st.selectbox("Rater code", active, key="label_review.retire_code", index=None, placeholder="choose a code")
        st.text_input("Reason", key="label_review.retire_reason", placeholder="e.g. typo of ana")
        st.form_submit_button("Retire code", key="label_review.retire_submit", on_click=_retire, args=(c,))
    show_links(c.store, by=c.code)


@hosting.guarded
def _create_link(store: LabelStore, by: str) -> None:
    who = (st.session_state.get("label_review.link_code") or "").strip()
    try:
        token = links.create_link(store, identity.check_stored_code(who), by=by)
    except ValueError as exc:
        st.session_state[K_FLASH] = ("error", str(exc))
        return
    st.session_state[K_NEW_LINK] = (who, token)


@hosting.guarded
def _revoke_links(store: LabelStore) -> None:
    who = st.session_state.get("label_review.revoke_code")
    if who:
        n = links.revoke_links(store, who)
        st.session_state[K_FLASH] = ("success", f"Revoked {n} link(s) of {who}: they sign nobody in any more.")


def show_links(store: LabelStore, *, by: str) -> None:
    """Personal sign-in links (team mode): create one for a rater code, list them, revoke them."""
    st.subheader("Personal rater links")
    st.caption("In the team mode a rater signs in with their own link and sees Labeling only (Label review too "
               "when they adjudicate); a typed code is not accepted there. The link is shown once: send it to "
               "that rater only. The store keeps only its SHA-256.")
    new = st.session_state.pop(K_NEW_LINK, None)
    if new:
        base = str(getattr(st.context, "url", "") or "").split("/label-review")[0].rstrip("/")
        st.success(f"Link for {render.escape_markdown(new[0])} (shown once):")
        st.code(f"{base}/labeling?{links.QUERY_PARAM}={new[1]}", language=None)
    left, right = st.columns(2, gap="large")
    with left, st.form("label_review.link"):
        st.text_input("Rater code", key="label_review.link_code", placeholder="e.g. ana")
        st.form_submit_button("Create link", on_click=_create_link, args=(store, by), key="label_review.link_submit")
    table = pl.DataFrame(links.list_links(store), schema={"code": pl.String, "created_at": pl.Datetime("us"),
                                                          "created_by": pl.String, "revoked_at": pl.Datetime("us")})
    with right, st.form("label_review.revoke"):
        active = sorted(set(table.filter(pl.col("revoked_at").is_null())["code"].to_list()))
        st.selectbox("Rater code", active, key="label_review.revoke_code", index=None, placeholder="choose a code")
        st.form_submit_button("Revoke their links", on_click=_revoke_links, args=(store,),
                              key="label_review.revoke_submit")
    if table.height:
        st.dataframe(table, hide_index=True, width="stretch", column_config={
            "created_at": st.column_config.DatetimeColumn("created", format="YYYY-MM-DD HH:mm"),
            "created_by": "by", "revoked_at": st.column_config.DatetimeColumn("revoked", format="YYYY-MM-DD HH:mm")})


def show_links_only(store: LabelStore) -> None:
    """A team admin signed in with the shared admin code has no rater identity: links only."""
    st.info("You are signed in as a team admin without a personal rater identity: create rater links here "
            "(one for yourself too, to adjudicate).", icon=":material/badge:")
    show_links(store, by="team admin")


def _field_options(c: Context) -> list[str]:
    keys: set[str] = set()
    for meta in reports.items_frame(c.store, c.project)["metadata"].head(500).to_list():
        keys.update(json.loads(meta or "{}"))
    hidden = labeling_items.BLINDED_FIELDS
    return [*labeling_items.ITEM_FIELDS, *sorted(k for k in keys if k not in hidden and k not in
                                                 labeling_items.ITEM_FIELDS)]


@hosting.guarded
def _save_settings(c: Context) -> None:
    get = st.session_state.get
    spread = get("label_review.set_spread_on") and float(get("label_review.set_spread") or 0.5)
    target, cap = int(get("label_review.set_target") or 1), int(get("label_review.set_max") or 1)
    try:
        labeling_items.update_project(
            c.store, c.project.name, visible_fields=list(get("label_review.set_fields") or []),
            scale_labels=(get("label_review.set_neg"), get("label_review.set_zero"), get("label_review.set_pos")),
            guidelines=get("label_review.set_guidelines") or "", target_raters=target,
            target_spread=spread or None, spread_measure=get("label_review.set_measure"),
            max_raters=cap if spread else None)
    except (ValueError, WorkbenchError) as exc:
        st.session_state[K_FLASH] = ("error", str(exc))
        return
    st.session_state[K_FLASH] = ("success", f"Saved the settings of {c.project.name}: raters see them from their "
                                            "next item on.")


def show_settings(c: Context) -> None:
    """What raters see (fields, the title included), scale labels, guidelines, raters per item and
    extra raters where they disagree; with a preview of one item as a rater sees it."""
    p = c.project
    refused = hosting.admin_refusal(c.ws, "change a project's settings") or (
        None if c.role == "admin" else "Only admins change a project's settings.")
    options = _field_options(c)
    with st.form(f"label_review.settings.{p.name}"):
        st.multiselect("Fields raters see (besides the prompt and the response)", options,
                       default=[f for f in p.visible_fields if f in options], key="label_review.set_fields",
                       format_func=lambda f: "title (prompt_title)" if f == "prompt_title" else f,
                       help="Leave out prompt_title when titles carry the answer (e.g. a reference verdict).")
        cols = st.columns(3)
        for col, key, label, value in zip(cols, ("neg", "zero", "pos"), ("−1 means", "0 means", "+1 means"),
                                          p.scale_labels, strict=True):
            col.text_input(label, value=value, key=f"label_review.set_{key}")
        st.text_area("Guidelines (markdown)", value=p.guidelines, key="label_review.set_guidelines", height=160)
        row = st.columns(4)
        row[0].number_input("Raters per item", 1, 20, p.target_raters, key="label_review.set_target")
        row[1].checkbox("Extra raters on disagreement", value=p.target_spread is not None,
                         key="label_review.set_spread_on")
        row[1].number_input("Target spread", 0.05, 2.0, p.target_spread or 0.5, 0.05, key="label_review.set_spread")
        row[2].selectbox("Measured as", SPREAD_MEASURES, index=SPREAD_MEASURES.index(p.spread_measure),
                          key="label_review.set_measure",
                          format_func=lambda m: {"range": "spread (max − min)", "ci_width": "95% interval width"}[m])
        row[3].number_input("At most raters per item", 1, 20, p.raters_cap if p.target_spread else p.target_raters + 2,
                             key="label_review.set_max")
        st.form_submit_button("Save settings", type="primary", disabled=bool(refused), on_click=_save_settings,
                              args=(c,), key="label_review.save_settings")
    if refused:
        st.caption(refused)
    _preview(c)


def _preview(c: Context) -> None:
    first = reports.items_frame(c.store, c.project).head(1)
    if first.is_empty():
        return
    view = assignment.item_view(c.store, c.project, int(first["item_id"][0]))
    st.subheader("What a rater sees")
    st.caption("The first item, as the Labeling page shows it with these settings.")
    with st.container(border=True):
        st.markdown(f"##### {render.escape_markdown(view.prompt_title) or 'Prompt'}")
        if view.fields:
            st.caption(render.fields_caption(view.fields))
        st.markdown(render.safe_markdown(view.prompt_body[:600] + ("…" if len(view.prompt_body) > 600 else "")))


def _ci(row: dict | None, name: str) -> str:
    """``+0.063 [+0.005, +0.120]`` of a leniency row, or "n/a"."""
    if row is None or row[name] is None or not math.isfinite(row[name]):
        return "n/a"
    lo, hi = row["ci_lo"], row["ci_hi"]
    bounds = f"[{lo:+.3f}, {hi:+.3f}]" if lo is not None and math.isfinite(lo) else "[n/a]"
    return f"{row[name]:+.3f} {bounds}"


def show_rater_scales(c: Context) -> None:
    """Per rater: leniency (mean offset from the item consensus) and range use, with 95 % intervals."""
    latest = reports.latest_ratings(reports.ratings_frame(c.store, c.project, include_models=c.include_models))
    if latest.is_empty():
        st.info("No ratings yet.")
        return
    retired = identity.retired_codes(c.store)
    lenient = mark_retired(rater_stats.leniency(latest, consensus.compute_consensus(
        c.store, c.project, include_models=c.include_models)), ["rater"], retired)
    use = mark_retired(rater_stats.range_use(latest), ["rater"], retired)
    st.caption("Each rater's latest rating of each item. Leniency: the mean of (their score − the item's "
               "consensus; for items still needing discussion the mean of its raters), over items with ≥ 2 raters; "
               "right of 0 rates higher than the consensus. Range use: how much of −1 … +1 they use.")
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Leniency")
        if lenient.is_empty():
            st.info("Needs items with at least two raters.")
        else:
            ui.show_chart(charts.interval_dots_chart(lenient, value="leniency", lo="ci_lo", hi="ci_hi",
                                                     title="mean offset from the item consensus (95% CI)"),
                          width="stretch")
    with right:
        st.subheader("Range use")
        ui.show_chart(charts.interval_dots_chart(use.rename({"sd_lo": "lo", "sd_hi": "hi"}), value="sd", lo="lo",
                                                 hi="hi", title="standard deviation of their scores (95% CI)",
                                                 centre=None), width="stretch")
    shared = {r["rater"]: r for r in lenient.to_dicts()}
    rows = [{"rater": u["rater"], "ratings": u["n"], "leniency [95% CI]": _ci(shared.get(u["rater"]), "leniency"),
             "items with co-raters": (shared.get(u["rater"]) or {}).get("n"),
             "sd [95% CI]": f"{num(u['sd'])} [{num(u['sd_lo'])}, {num(u['sd_hi'])}]",
             "5–95% of scores": f"{u['p05']:+.2f} … {u['p95']:+.2f}",
             "share at the ends [95% CI]": f"{num(u['extreme_share'], 2)} [{num(u['extreme_lo'], 2)}, "
                                           f"{num(u['extreme_hi'], 2)}]"} for u in use.to_dicts()]
    st.dataframe(pl.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(f"Ends: |score| ≥ {rater_stats.EXTREME}. Intervals: t for leniency, chi-square for the sd, "
               "Wilson for the share.")


def show(section: str, c: Context) -> None:
    """Show a flash message from the last action, then ``section``."""
    flash = st.session_state.pop(K_FLASH, None)
    if flash:
        kind, text = flash if isinstance(flash, tuple) else ("success", flash)
        (st.error if kind == "error" else st.success)(text)
    if section == "Rater scales" and c.project.is_audit:
        st.info("A judge audit's raters answer categories, not a scale: no leniency or range use to measure.")
        return
    {"Rater scales": show_rater_scales, "Raters": show_raters, "Settings": show_settings}[section](c)
