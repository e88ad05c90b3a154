"""Page glue of the Trace page's tabs: formula and reviews, why K changes the verdict, overrides, what-if."""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.ground_truth import k_label, variants
from core.ground_truth import views as gt_views
from core.ground_truth.views import charts
from core.judgments.overrides import list_overrides, revert_override
from core.tasks import get_task
from core.ui import cache, hosting
from core.ui.text import safe
from core.ui.trace_page import (
    K_ALL_OV,
    K_AUTHOR,
    K_FOCUS,
    K_FROM,
    K_KC_FOR,
    K_NEUTRAL,
    K_TO,
    K_VARIANT,
    Trace,
    badge,
    compare_selector,
    recompute_after_write,
    review_card,
)


def formula_tab(t: Trace, trace_root: Any) -> None:
    """The formula tree (left) and the reviews that contribute (right)."""
    st.caption(f"Reviews idx 0–{'all' if t.k_value is None else t.k_value - 1} count at K={t.k_text}. Hover a value "
               "for its unrounded number; the tree lists each primitive once.")
    left, right = st.columns([5, 6], gap="large")
    prims = gt_views.primitives_with_reviews(trace_root)
    if st.session_state.get(K_FOCUS) not in ["", *prims]:
        st.session_state[K_FOCUS] = ""
    with right:
        counts = {n.name: len(n.reviews) for _, n in trace_root.walk()}
        focus = st.selectbox("Contributing reviews of", ["", *prims], key=K_FOCUS, persist_state="session",
                             format_func=lambda p: "every review that moves a value" if not p
                             else f"{gt_views.label(p)} ({counts[p]})")
        include = st.toggle("Also reviews that only count as judged", key=K_NEUTRAL, persist_state="session",
                            disabled=bool(focus))
        other = compare_selector(t)
        cards = gt_views.review_cards(trace_root, primitive=focus or None, include_neutral=include)
        count = f"{len(cards)} review" + ("" if len(cards) == 1 else "s")
        st.caption(count + ("" if focus or include else " " + _moving_note(t, trace_root)))
        for card in cards:
            review_card(t, card, trace_root, other)
    with left:
        st.html(gt_views.tree_html(trace_root, focus=focus or None))


def _moving_note(t: Trace, trace_root: Any) -> str:
    """What the listed reviews are, in the task's own words (not G1a's for every task)."""
    neutral = [n.name for _, n in trace_root.walk() if n.name in gt_views.NEUTRAL]
    if t.task == "G1a":
        return "with an incident or a staff interaction (the others only add to N_ALLERGY_REVIEWS)"
    name = get_task(t.task, t.ws).name
    rest = f"the others only add to {gt_views.label(neutral[0])}" if neutral else "the others move no value"
    return f"that move a value of this {name} definition ({rest})"


def k_tab(t: Trace, by_k: dict, flips: list[dict]) -> None:
    """Why the verdict changes between two K: the primitives that move and the reviews that enter."""
    labels = [k_label(k) for k in t.ks]
    if st.session_state.get(K_KC_FOR) != (t.business_id, t.definition):
        st.session_state[K_KC_FOR] = (t.business_id, t.definition)
        if flips:
            st.session_state[K_FROM], st.session_state[K_TO] = k_label(flips[0]["k_from"]), k_label(flips[0]["k_to"])
        else:
            i = labels.index(t.k_text)
            st.session_state[K_FROM], st.session_state[K_TO] = labels[max(0, i - 1)], labels[max(1, i)]
    a, b, _ = st.columns([1, 1, 3])
    a.selectbox("From K", labels, key=K_FROM, persist_state="session")
    b.selectbox("To K", labels, key=K_TO, persist_state="session")
    k_from, k_to = st.session_state[K_FROM], st.session_state[K_TO]
    if k_from == k_to:
        st.info("Pick two different K.")
        return
    ks = gt_views.parse_ks([k_from])[0], gt_views.parse_ks([k_to])[0]
    change = cache.kchange(t.ws, t.dataset, t.task, t.judge, t.business_id, t.definition, *ks)
    (s0, v0), (s1, v1) = by_k[k_from], by_k[k_to]
    pts = (f" {s0:.2f}", f" {s1:.2f}") if t.scored else ("", "")
    st.markdown(f"**K={k_from} → K={k_to}**: {badge(v0, t.scale)}{pts[0]} → {badge(v1, t.scale)}{pts[1]}")
    moved, entering, neutral = gt_views.kchange_frames(change)
    verb = "enter" if change.direction == "enter" else "leave"
    st.caption("Primitives that move")
    st.dataframe(moved, hide_index=True, width="stretch", placeholder="—", key="trace.k_moved",
                 column_config={"primitive": st.column_config.TextColumn(width="medium"),
                                "before": st.column_config.TextColumn(width="medium"),
                                "after": st.column_config.TextColumn(width="medium")})
    st.caption(f"Reviews that {verb} between the two K and move a value (score effect: the change this review "
               "alone makes on top of the smaller K)")
    st.dataframe(entering, hide_index=True, width="stretch", placeholder="—", key="trace.k_reviews",
                 column_config={"score_effect": st.column_config.NumberColumn("score effect", format="%+.2f",
                                                                              width="small"),
                                "stars": st.column_config.NumberColumn(format="%.1f"),
                                "judgment": st.column_config.TextColumn(width="large"),
                                "primitives": st.column_config.TextColumn(width="large")})
    what = "judged review that only adds" if neutral == 1 else "judged reviews that only add"
    st.caption(f"Also {neutral} {what} to the number of judged reviews.")


def _when(value: Any) -> str:
    return str(value or "")[:16].replace("T", " ") or "—"


def _fields(value: Any) -> str:
    return ", ".join(f"{k} → {v}" for k, v in (value or {}).items()) or "—"


def overrides_tab(t: Trace, trace_root: Any, by_k: dict) -> None:
    """Every override (this restaurant or all) and the form to revert one."""
    show_all = st.toggle("All restaurants of this task", key=K_ALL_OV, persist_state="session")
    records = [r for r in list_overrides(t.ws, t.dataset, t.task) if show_all or r["business_id"] == t.business_id]
    if not records:
        st.info("No override yet. Use 'Override' on a review card to correct a judgment.")
        return
    st.dataframe(pl.DataFrame([{
        "when (UTC)": _when(r["created_at"]), "author": r["author"] or "—", "status": r["status"],
        "reason": r.get("reason") or "—", "restaurant": t.names.get(r["business_id"], r["business_id"]),
        "idx": r.get("idx"), "override": _fields(r.get("corrected")), "judge said": _fields(r.get("original")),
        "override_id": r["override_id"], "reverts": r.get("reverts") or "—",
    } for r in records]), hide_index=True, width="stretch", placeholder="—", key="trace.ov_table")
    active = [r for r in records if r["status"] == "active" and r["business_id"] == t.business_id]
    if not active:
        return
    with st.form("trace.revert_form"):
        pick = st.selectbox("Revert override", [r["override_id"] for r in active], key="trace.revert_id",
                            format_func=lambda i: next(f"idx {r['idx']}: {_fields(r['corrected'])} by {r['author']} ({i})"
                                                       for r in active if r["override_id"] == i))
        reason = st.text_input("Reason", key="trace.revert_reason")
        author = st.text_input("Author", key=K_AUTHOR)
        refused = hosting.write_refusal("reverting an override")
        if refused:
            st.caption(refused)
        if st.form_submit_button("Revert override (adds a revert record)", disabled=bool(refused)):
            try:
                rec = revert_override(t.ws, t.dataset, t.task, pick, reason=reason, author=author)
            except (WorkbenchError, ValueError) as exc:
                st.error(str(exc))
            else:
                recompute_after_write(t, f"Revert {rec['override_id']} by {author} of override {pick}", trace_root, by_k)


def whatif_tab(t: Trace) -> None:
    """Edit the definition's constants, compare with the committed GT, save a named variant."""
    chosen = cache.resolved(t.ws, t.definition)
    base = chosen.base
    committed_def = cache.resolved(t.ws, base).definition  # the committed formula or policy (package or workspace)
    specs = variants.constant_specs(committed_def)
    prefix = f"trace.whatif.{base}."
    start = dict(chosen.variant.changes) if chosen.variant else {}

    def initial(s: variants.ConstantSpec) -> float:
        value = start.get(s.key, s.value)
        return int(value) if s.is_int else float(value)

    for s in specs:
        st.session_state.setdefault(prefix + s.key, initial(s))
    saved = variants.list_variants(t.ws, base)

    def _load_variant() -> None:
        picked = next((v for v in saved if v.name == st.session_state.get(K_VARIANT)), None)
        for s in specs:
            value = picked.changes.get(s.key, s.value) if picked else s.value
            st.session_state[prefix + s.key] = int(value) if s.is_int else float(value)

    v1, v2, v3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    v1.selectbox("Saved variants", [v.name for v in saved], key=K_VARIANT, persist_state="session", index=None,
                 placeholder="none saved yet" if not saved else "pick a variant to load")
    v2.button("Load", key="trace.whatif_load", on_click=_load_variant, disabled=not saved)
    def _reset() -> None:
        for s in specs:
            st.session_state[prefix + s.key] = int(s.value) if s.is_int else float(s.value)

    v3.button("Reset", key="trace.whatif_reset", on_click=_reset)
    inputs_col, result_col = st.columns([2, 3], gap="large")
    with inputs_col:
        for group in variants.GROUPS:
            mine = [s for s in specs if s.group == group]
            if not mine:
                continue
            with st.expander(group, expanded=group in ("Severity points", "Thresholds")):
                cols = st.columns(2)
                for i, s in enumerate(mine):
                    cols[i % 2].number_input(s.key, key=prefix + s.key, persist_state="session",
                                             step=int(s.step) if s.is_int else s.step, format="%d" if s.is_int else "%.3f")
    values = {s.key: st.session_state[prefix + s.key] for s in specs}
    with result_col:
        _whatif_result(t, base, committed_def, values)


def _whatif_result(t: Trace, base: str, committed_def: Any, values: dict[str, float]) -> None:
    changes = variants.changed_constants(committed_def, values)
    if not changes:
        st.info("Change a constant on the left to compare with the committed definition. The official "
                "formula is never changed here; a what-if can be saved as a named variant.")
        return
    committed = variants.committed_constants(committed_def)
    st.caption("Changed: " + ", ".join(f"{k} {committed[k]} → {v}" for k, v in changes.items()))
    frame = cache.gt_frame(t.ws, t.dataset, t.task, t.judge, base, t.ks)
    whatif = cache.gt_frame(t.ws, t.dataset, t.task, t.judge, base, t.ks, changes)
    mine_a, mine_b = (gt_views.score_series(f, t.business_id) for f in (frame, whatif))
    d, constants = variants.whatif_definition(committed_def, changes, t.ws)
    key = (*cache.frame_key(t.ws, t.dataset, t.task), t.judge, base, tuple(t.ks), tuple(sorted(changes.items())))
    if t.scored:
        st.vega_lite_chart(cache.chart_spec(("whatif-score", *key, t.business_id), lambda: charts.whatif_score_chart(
            mine_a, mine_b, gt_views.score_thresholds(committed_def, t.ks),
            gt_views.score_thresholds(d, t.ks, constants), verdicts=t.scale)), key="trace.whatif_score", width="stretch")
    def cell(s: float, v: str) -> str:
        return f"{s:.2f} {v}" if t.scored else v

    st.dataframe(pl.DataFrame({"K": mine_a["k_label"], "committed": [
        cell(s, v) for s, v in zip(mine_a["score"], mine_a["verdict"], strict=True)], "what-if": [
        cell(s, v) for s, v in zip(mine_b["score"], mine_b["verdict"], strict=True)]}),
        hide_index=True, width="stretch", placeholder="—", key="trace.whatif_mine")
    st.vega_lite_chart(cache.chart_spec(("whatif-dist", *key), lambda: charts.whatif_distribution_chart(
        gt_views.compare_distributions(frame, whatif, t.scale), t.scale)), key="trace.whatif_dist")
    moves = gt_views.verdict_moves(frame, whatif)
    with st.expander(f"{moves['business_id'].n_unique()} restaurant(s) change verdict at some K"):
        hidden = [] if t.scored else ["score_committed", "score_what_if"]
        st.dataframe(moves.drop("business_id", *hidden), hide_index=True, width="stretch", placeholder="—", key="trace.whatif_moves",
                     column_config={"name": "restaurant", "k_label": "K", "what_if": "what-if",
                                    "score_committed": st.column_config.NumberColumn("score (committed)", format="%.2f"),
                                    "score_what_if": st.column_config.NumberColumn("score (what-if)", format="%.2f")})
    with st.form("trace.variant_form"):
        name = st.text_input("Variant name", key="trace.variant_name",
                             help="Letters, digits, '-', '_' or '.'; saved under gt/variants/ and then selectable "
                                  "as a formula on both pages and with `gt --formula NAME`.")
        note = st.text_input("Description", key="trace.variant_note")
        author = st.text_input("Author", key=K_AUTHOR)
        refused = hosting.write_refusal("saving a variant")
        if refused:
            st.caption(refused)
        if st.form_submit_button("Save as named variant", disabled=bool(refused)):
            try:
                saved_v = variants.save_variant(t.ws, name, base, values, description=note, author=author)
            except (WorkbenchError, ValueError) as exc:
                st.error(str(exc))
            else:
                st.success(safe("Saved variant {n} ({c} change(s)).", n=saved_v.name, c=len(saved_v.changes)))
