"""Trace: one restaurant's GT as a formula tree down to its reviews; why K changes it; overrides; what-if.

Shareable: ``/trace?dataset=demo&task=G1a&formula=v1&k=50&business_id=…`` opens this trace, and the
URL follows every selection made here.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import streamlit as st

from core import charts, gt_views, ui, variants
from core.errors import WorkbenchError
from core.ground_truth import explain_k_change, k_label, trace_gt, verdict_changes
from core.judgments import list_judges
from core.overrides import add_override, list_overrides, revert_override
from core.tasks import get_task, task_ids
from core.workspace import Workspace

K_DATASET, K_SIDEBAR_SEEN, K_APPLIED = "trace.dataset", "trace.sidebar_seen", "trace.applied_query"
K_TASK, K_DEF, K_K, K_REST, K_JUDGE = "trace.task", "trace.definition", "trace.k", "trace.business_id", "trace.judge"
K_FOCUS, K_NEUTRAL, K_EDIT, K_LAST = "trace.focus", "trace.include_neutral", "trace.edit_idx", "trace.last_change"
K_FROM, K_TO, K_KC_FOR, K_AUTHOR = "trace.k_from", "trace.k_to", "trace.kchange_for", "trace.author"
K_ALL_OV, K_TAB, K_VARIANT = "trace.all_overrides", "trace.tab", "trace.variant"
QUERY = {"dataset": K_DATASET, "task": K_TASK, "formula": K_DEF, "k": K_K, "business_id": K_REST, "judge": K_JUDGE}
DEFAULT_KS = ["25", "50", "100", "200"]
TABS = ("Formula and reviews", "Why K changes the verdict", "Overrides", "What-if")
BADGE = {"severe": "red", "moderate": "orange", "mild": "yellow", "firsthand": "blue", "secondhand": "gray",
         "hypothetical": "gray", "positive": "green", "negative": "orange", "betrayal": "red", "none": "gray"}


@st.cache_data(max_entries=8, show_spinner=False)
def _inputs(root: str, dataset: str, task: str, judge: str | None, stamp: tuple) -> gt_views.GTInputs:
    return gt_views.load_inputs(Workspace(Path(root)), dataset, task, judge)


@st.cache_data(max_entries=32, show_spinner=False)
def _frame(root: str, dataset: str, task: str, judge: str | None, stamp: tuple, definition: str,
           ks: tuple[int | None, ...], changes: tuple = ()) -> pl.DataFrame:
    inputs = _inputs(root, dataset, task, judge, stamp)
    return gt_views.compute_frame(inputs, definition, ks, changes=dict(changes), dataset=dataset, task=task)


@st.cache_data(max_entries=64, show_spinner=False)
def _texts(root: str, dataset: str, business_id: str, stamp: tuple) -> dict[int, str]:
    return gt_views.review_texts(Workspace(Path(root)), dataset, business_id)


def _restaurant(root: str, dataset: str, task: str, judge: str | None, stamp: tuple, business_id: str) -> tuple:
    one = gt_views.restaurant_inputs(_inputs(root, dataset, task, judge, stamp), business_id)
    return one, _texts(root, dataset, business_id, stamp)


@st.cache_data(max_entries=64, show_spinner=False)
def _trace(root: str, dataset: str, task: str, judge: str | None, stamp: tuple, business_id: str, definition: str,
           k: str):
    one, texts = _restaurant(root, dataset, task, judge, stamp, business_id)
    return trace_gt(one.judgments, one.restaurants, business_id, definition, gt_views.parse_ks([k])[0], texts=texts)


@st.cache_data(max_entries=64, show_spinner=False)
def _kchange(root: str, dataset: str, task: str, judge: str | None, stamp: tuple, business_id: str,
             definition: str, k_from: str, k_to: str):
    one, texts = _restaurant(root, dataset, task, judge, stamp, business_id)
    a, b = (gt_views.parse_ks([k])[0] for k in (k_from, k_to))
    return explain_k_change(one.judgments, one.restaurants, business_id, definition, a, b, texts=texts)


@st.cache_data(max_entries=64, show_spinner=False)
def _spec(key: tuple, _build) -> dict:
    """A chart's Vega-Lite spec, built once per ``key`` (Altair's to_dict costs ~50 ms a chart)."""
    return _build().to_dict()


def _apply_query() -> None:
    """Copy new URL parameters into the page's selection (once per distinct URL)."""
    query = {name: st.query_params.get(name) for name in QUERY if st.query_params.get(name)}
    signature = json.dumps(sorted(query.items()))
    if query and (st.session_state.get(K_APPLIED) != signature or K_REST not in st.session_state):
        for name, key in QUERY.items():
            if name in query:
                st.session_state[key] = query[name]
        st.session_state[K_APPLIED] = signature
        st.session_state[K_SIDEBAR_SEEN] = st.session_state.get(ui.SIDEBAR_DATASET)
        st.session_state[K_EDIT] = None


def _verdicts_by_k(frame: pl.DataFrame, business_id: str) -> dict[str, tuple[float, str]]:
    series = gt_views.score_series(frame, business_id)
    return {r["k_label"]: (r["score"], r["verdict"]) for r in series.iter_rows(named=True)}


def _remember_change(title: str, before_root, before_k: dict, after_root, after_k: dict) -> None:
    rows = [{"K": k, "before": f"{before_k[k][0]:.2f} {before_k[k][1]}", "after": f"{after_k[k][0]:.2f} {after_k[k][1]}"}
            for k in after_k if k in before_k]
    st.session_state[K_LAST] = {"business_id": business_id, "title": title, "verdicts": rows,
                                "changes": gt_views.value_changes(before_root, after_root)}


def _recompute_after_write(title: str, before_root, before_k: dict) -> None:
    # No cache clear: every loader is keyed by the data stamp, which the write has just changed
    # (the overrides file is part of it); clearing would throw away every unrelated entry too.
    stamp2 = gt_views.data_stamp(ws, dataset, task)
    after = _trace(root, dataset, task, judge, stamp2, business_id, definition, k_text)
    frame2 = _frame(root, dataset, task, judge, stamp2, definition, tuple(ks))
    _remember_change(title, before_root, before_k, after, _verdicts_by_k(frame2, business_id))
    st.session_state[K_EDIT] = None
    st.rerun()


def _badges(fields: dict) -> str:
    return " ".join(f":{BADGE.get(str(v), 'violet')}-badge[{gt_views.md_escape(f'{k} {v}')}]" for k, v in fields.items())


def _override_form(card: gt_views.ReviewCard, root_before) -> None:
    spec = get_task(task, ws)
    with st.form(f"trace.override_form.{card.idx}"):
        st.markdown(f"**Correct the judgment of idx {card.idx}** (stored apart; the judge's record is kept)")
        cols = st.columns(len(spec.fields))
        chosen = {}
        for col, field in zip(cols, spec.fields, strict=True):
            current = card.fields.get(field.name)
            chosen[field.name] = col.selectbox(field.name, field.values, key=f"trace.ov.{card.idx}.{field.name}",
                                               index=field.values.index(current) if current in field.values else 0)
        reason = st.text_input("Reason", key=f"trace.ov.{card.idx}.reason", placeholder="why the judge was wrong")
        author = st.text_input("Author", key=K_AUTHOR)
        saved = st.form_submit_button("Save override and recompute", type="primary")
    st.button("Cancel", key=f"trace.ov.{card.idx}.cancel", on_click=lambda: st.session_state.update({K_EDIT: None}))
    if saved:
        corrected = {k: v for k, v in chosen.items() if v != card.fields.get(k)}
        if not corrected:
            st.error("Change at least one field.")
            return
        try:
            record = add_override(ws, dataset, task, business_id=business_id, idx=card.idx, corrected=corrected,
                                  reason=reason, author=author, original=dict(card.fields))
        except (WorkbenchError, ValueError) as exc:
            st.error(str(exc))
            return
        what = ", ".join(f"{k} → {v}" for k, v in corrected.items())
        _recompute_after_write(f"Override {record['override_id']} by {author} on idx {card.idx}: {what}",
                               root_before, _verdicts_by_k(frame, business_id))


def _review_card(card: gt_views.ReviewCard, root_before) -> None:
    with st.container(border=True):
        top, button = st.columns([4, 1], vertical_alignment="top")
        flag = " · :violet-badge[overridden]" if card.overridden else ""
        rid = f"  \n:gray[review {gt_views.md_escape(card.review_id)}]" if card.review_id else ""
        top.markdown(f"**{gt_views.md_escape(card.header())}**{flag}  \n{_badges(card.fields)}{rid}")
        button.button("Edit", key=f"trace.edit.{card.idx}", icon=":material/edit:", help="Override this judgment",
                      on_click=lambda i=card.idx: st.session_state.update({K_EDIT: i}))
        st.markdown("\n".join(f"- `{gt_views.label(name)}` {gt_views.md_escape(text)}"
                              for name, _, text in card.contributions))
        if card.text:
            st.html(gt_views.highlight_html(card.text, card.excerpt))
            if card.excerpt and not gt_views.excerpt_found(card.text, card.excerpt):
                st.caption("The judge's excerpt is not in the text verbatim:")
                st.text(card.excerpt)
        else:
            st.caption("No full text stored for this review (dataset made from a judgments file). Judge's excerpt:")
            st.text(card.excerpt or "(no excerpt)")
        if st.session_state.get(K_EDIT) == card.idx:
            _override_form(card, root_before)


# -- selection ----------------------------------------------------------------------------------------
_apply_query()
ws = ui.current_workspace()
root = str(ws.root)
datasets = ws.datasets()
sidebar = st.session_state.get(ui.SIDEBAR_DATASET)
if st.session_state.get(K_DATASET) and sidebar != st.session_state.get(K_SIDEBAR_SEEN):
    st.session_state.pop(K_DATASET)  # the sidebar changed after the link was opened: follow it
linked = st.session_state.get(K_DATASET)
dataset = linked if linked in datasets else ui.current_dataset(ws)
st.title("Trace")
st.caption("Every number of one restaurant's ground truth, back to the reviews and judgments that make it.")
if linked and linked not in datasets:
    st.warning(f"The link names dataset {linked!r}, which is not in this workspace.")
if not dataset:
    st.info("No dataset in this workspace.")
    st.stop()
if linked and linked != sidebar:
    st.caption(f"Dataset `{dataset}` from the link (the sidebar shows `{sidebar}`).")

tasks = task_ids(ws)
if st.session_state.get(K_TASK) not in tasks:
    st.session_state[K_TASK] = tasks[0]
task = st.session_state[K_TASK]
stamp = gt_views.data_stamp(ws, dataset, task)
judges = [j["judge"] for j in list_judges(ws, dataset, task)]
if not judges:
    st.info(f"No judgments for {dataset}/{task}: judge the reviews on the Ground truth page first.")
    st.page_link("app_pages/ground_truth.py", label="Ground truth", icon=":material/rule:")
    st.stop()
if st.session_state.get(K_JUDGE) not in judges:
    st.session_state[K_JUDGE] = None
defs = gt_views.definitions(task, ws)
if st.session_state.get(K_DEF) not in defs:
    st.session_state[K_DEF] = defs[0]
k_options = list(dict.fromkeys([*DEFAULT_KS, str(st.session_state.get(K_K) or "50"), "all"]))
if not st.session_state.get(K_K):
    st.session_state[K_K] = "50"
try:
    k_value = gt_views.parse_ks([st.session_state[K_K]])[0]
except ValueError as exc:
    st.warning(f"K from the link: {exc}; showing K=50.")
    st.session_state[K_K], k_value = "50", 50
k_text = k_label(k_value)
ks = gt_views.parse_ks([*DEFAULT_KS, k_text])
try:
    frame = _frame(root, dataset, task, st.session_state.get(K_JUDGE), stamp, st.session_state[K_DEF], tuple(ks))
except (WorkbenchError, ValueError) as exc:
    st.error(f"{exc}. Pick a judge below.")
    st.session_state[K_JUDGE] = st.session_state.get(K_JUDGE) or judges[0]
    frame = _frame(root, dataset, task, st.session_state[K_JUDGE], stamp, st.session_state[K_DEF], tuple(ks))
names = gt_views.display_names(frame)
if st.session_state.get(K_REST) not in names:
    if st.session_state.get(K_REST):
        st.warning(f"No restaurant {st.session_state[K_REST]!r} in {dataset}; showing another one.")
    st.session_state[K_REST] = gt_views.verdict_grid(frame)["business_id"][0]

c_rest, c_task, c_def, c_k, c_judge = st.columns([4, 2, 2, 1, 2])
business_id = c_rest.selectbox("Restaurant", sorted(names, key=lambda b: names[b].lower()), key=K_REST, persist_state="session",
                               format_func=lambda b: names.get(b, b))
c_task.selectbox("Task", tasks, key=K_TASK, persist_state="session")
definition = c_def.selectbox("Formula / policy", defs, key=K_DEF, persist_state="session")
c_k.selectbox("K", k_options, key=K_K, persist_state="session", accept_new_options=True, help="Reviews with idx < K count; type any K.")
judge = c_judge.selectbox("Judge", judges, key=K_JUDGE, persist_state="session", index=None, placeholder="GT judge (default)")
st.query_params.from_dict({k: v for k, v in (("dataset", dataset), ("task", task), ("formula", definition),
                                              ("k", k_text), ("business_id", business_id), ("judge", judge)) if v})
st.session_state[K_APPLIED] = json.dumps(sorted((k, v) for k, v in st.query_params.to_dict().items()
                                                if k in QUERY))

# -- header -------------------------------------------------------------------------------------------
info = gt_views.restaurant_info(ws, dataset, business_id)
by_k = _verdicts_by_k(frame, business_id)
score, verdict = by_k[k_text]
head, strip = st.columns([2, 3], gap="large")
with head:
    st.subheader(gt_views.md_escape(names[business_id]))
    st.markdown(f":{gt_views.VERDICT_COLORS[verdict]}-badge[{verdict}] **{score:.2f}** at K={k_text} · "
                f"{gt_views.md_escape(definition)}")
    where = ", ".join(p for p in (info.get("city"), info.get("state")) if p)
    parts = [info.get("categories") or "no categories", where, f"{info.get('n_reviews')} reviews stored", f"id {business_id}"]
    st.caption(gt_views.md_escape(" · ".join(p for p in parts if p)))
    st.page_link("app_pages/ground_truth.py", label="Back to Ground truth", icon=":material/arrow_back:")
with strip:
    cols = st.columns(len(by_k))
    for col, (lab, (s, v)) in zip(cols, by_k.items(), strict=True):
        col.metric(f"K={lab}" + (" ◀" if lab == k_text else ""), f"{s:.2f}")
        col.markdown(f":{gt_views.VERDICT_COLORS[v]}-badge[{v}]")
    flips = verdict_changes(frame, business_id)
    st.caption("Verdict changes along K: " + ("; ".join(
        f"K={k_label(c['k_from'])}→{k_label(c['k_to'])}: {c['verdict_from']} → {c['verdict_to']}" for c in flips)
        if flips else "none (the same verdict at every K shown)."))

last = st.session_state.get(K_LAST)
if last and last["business_id"] == business_id:
    with st.container(border=True):
        st.markdown(f":material/published_with_changes: **{gt_views.md_escape(last['title'])}**")
        a, b = st.columns(2)
        a.caption(f"Values at K={k_text} that moved")
        a.dataframe(gt_views.changes_frame(last["changes"]), hide_index=True, width="stretch", key="trace.last_values")
        b.caption("Score and verdict by K")
        b.dataframe(pl.DataFrame(last["verdicts"]), hide_index=True, width="stretch", key="trace.last_verdicts")
        st.button("Dismiss", key="trace.dismiss", on_click=lambda: st.session_state.pop(K_LAST, None))

tab_formula, tab_k, tab_ov, tab_whatif = st.tabs(list(TABS), key=K_TAB, on_change="rerun")
trace_root = _trace(root, dataset, task, judge, stamp, business_id, definition, k_text)

# -- formula tree and contributing reviews ----------------------------------------------------------------
if tab_formula.open is not False:
    with tab_formula:
        st.caption(f"Reviews idx 0–{'all' if k_value is None else k_value - 1} count at K={k_text}. Hover a value "
                   "for its unrounded number; the tree lists each primitive once.")
        left, right = st.columns([5, 6], gap="large")
        prims = gt_views.primitives_with_reviews(trace_root)
        if st.session_state.get(K_FOCUS) not in ["", *prims]:
            st.session_state[K_FOCUS] = ""
        with right:
            counts = {n.name: len(n.reviews) for _, n in trace_root.walk()}
            focus = st.selectbox("Contributing reviews of", ["", *prims], key=K_FOCUS, persist_state="session", format_func=lambda p: (
                "every review that moves a value" if not p else f"{gt_views.label(p)} ({counts[p]})"))
            include = st.toggle("Also reviews that only count as judged", key=K_NEUTRAL, persist_state="session", disabled=bool(focus))
            cards = gt_views.review_cards(trace_root, primitive=focus or None, include_neutral=include)
            st.caption(f"{len(cards)} review(s)" + ("" if focus or include else
                       " with an incident or a staff interaction (the others only add to N_ALLERGY_REVIEWS)"))
            for card in cards:
                _review_card(card, trace_root)
        with left:
            st.html(gt_views.tree_html(trace_root, focus=focus or None))

# -- why K changes the verdict ------------------------------------------------------------------------------
if tab_k.open:
    with tab_k:
        labels = [k_label(k) for k in ks]
        if st.session_state.get(K_KC_FOR) != (business_id, definition):
            st.session_state[K_KC_FOR] = (business_id, definition)
            if flips:
                st.session_state[K_FROM], st.session_state[K_TO] = k_label(flips[0]["k_from"]), k_label(flips[0]["k_to"])
            else:
                i = labels.index(k_text)
                st.session_state[K_FROM], st.session_state[K_TO] = labels[max(0, i - 1)], labels[max(1, i)]
        a, b = st.columns(2)
        a.selectbox("From K", labels, key=K_FROM, persist_state="session")
        b.selectbox("To K", labels, key=K_TO, persist_state="session")
        k_from, k_to = st.session_state[K_FROM], st.session_state[K_TO]
        if k_from == k_to:
            st.info("Pick two different K.")
        else:
            change = _kchange(root, dataset, task, judge, stamp, business_id, definition, k_from, k_to)
            (s0, v0), (s1, v1) = by_k[k_from], by_k[k_to]
            st.markdown(f"**K={k_from} → K={k_to}**: :{gt_views.VERDICT_COLORS[v0]}-badge[{v0}] {s0:.2f} → "
                        f":{gt_views.VERDICT_COLORS[v1]}-badge[{v1}] {s1:.2f}")
            moved, entering, neutral = gt_views.kchange_frames(change)
            verb = "enter" if change.direction == "enter" else "leave"
            c1, c2 = st.columns([1, 2], gap="large")
            c1.caption("Primitives that move")
            c1.dataframe(moved, hide_index=True, width="stretch", key="trace.k_moved")
            c2.caption(f"Reviews that {verb} between the two K and move a value (score effect: the change this "
                       "review alone makes on top of the smaller K)")
            c2.dataframe(entering, hide_index=True, width="stretch", key="trace.k_reviews",
                         column_config={"score_effect": st.column_config.NumberColumn("score effect", format="%+.2f")})
            c2.caption(f"Also {neutral} judged review(s) that only add to the number of judged reviews.")

# -- overrides ----------------------------------------------------------------------------------------------
if tab_ov.open:
    with tab_ov:
        show_all = st.toggle("All restaurants of this task", key=K_ALL_OV, persist_state="session")
        records = [r for r in list_overrides(ws, dataset, task) if show_all or r["business_id"] == business_id]
        if not records:
            st.info("No override yet. Use 'Override' on a review card to correct a judgment.")
        else:
            st.dataframe(pl.DataFrame([{
                "when": r["created_at"], "author": r["author"], "status": r["status"], "reason": r.get("reason"),
                "restaurant": names.get(r["business_id"], r["business_id"]), "idx": r.get("idx"),
                "corrected": json.dumps(r.get("corrected") or {}), "original": json.dumps(r.get("original") or {}),
                "override_id": r["override_id"], "reverts": r.get("reverts"),
            } for r in records]), hide_index=True, width="stretch", key="trace.ov_table")
            active = [r for r in records if r["status"] == "active" and r["business_id"] == business_id]
            if active:
                with st.form("trace.revert_form"):
                    pick = st.selectbox("Revert override", [r["override_id"] for r in active], key="trace.revert_id",
                                        format_func=lambda i: next(f"idx {r['idx']}: {json.dumps(r['corrected'])} "
                                                                   f"by {r['author']} ({i})" for r in active
                                                                   if r["override_id"] == i))
                    reason = st.text_input("Reason", key="trace.revert_reason")
                    author = st.text_input("Author", key=K_AUTHOR)
                    if st.form_submit_button("Revert (adds a revert record)"):
                        try:
                            rec = revert_override(ws, dataset, task, pick, reason=reason, author=author)
                        except (WorkbenchError, ValueError) as exc:
                            st.error(str(exc))
                        else:
                            _recompute_after_write(f"Revert {rec['override_id']} by {author} of override {pick}",
                                                   trace_root, by_k)

# -- what-if ---------------------------------------------------------------------------------------------
if tab_whatif.open:
    with tab_whatif:
        specs = variants.constant_specs(definition)
        prefix = f"trace.whatif.{definition}."
        for s in specs:
            st.session_state.setdefault(prefix + s.key, int(s.value) if s.is_int else float(s.value))
        saved = variants.list_variants(ws, definition)

        def _load_variant() -> None:
            chosen = next((v for v in saved if v.name == st.session_state.get(K_VARIANT)), None)
            for s in specs:
                value = chosen.changes.get(s.key, s.value) if chosen else s.value
                st.session_state[prefix + s.key] = int(value) if s.is_int else float(value)

        v1, v2, v3 = st.columns([3, 1, 1], vertical_alignment="bottom")
        v1.selectbox("Saved variants", [v.name for v in saved], key=K_VARIANT, persist_state="session", index=None,
                     placeholder="none saved yet" if not saved else "pick a variant to load")
        v2.button("Load", key="trace.whatif_load", on_click=_load_variant, disabled=not saved)
        v3.button("Reset", key="trace.whatif_reset", on_click=lambda: [st.session_state.__setitem__(
            prefix + s.key, int(s.value) if s.is_int else float(s.value)) for s in specs])
        inputs_col, result_col = st.columns([2, 3], gap="large")
        with inputs_col:
            for group in variants.GROUPS:
                mine = [s for s in specs if s.group == group]
                if not mine:
                    continue
                with st.expander(group, expanded=group in ("Severity points", "Thresholds")):
                    cols = st.columns(2)
                    for i, s in enumerate(mine):
                        cols[i % 2].number_input(s.key, key=prefix + s.key, persist_state="session", step=int(s.step) if s.is_int else s.step,
                                                 format="%d" if s.is_int else "%.3f")
        values = {s.key: st.session_state[prefix + s.key] for s in specs}
        changes = variants.changed_constants(definition, values)
        with result_col:
            if not changes:
                st.info("Change a constant on the left to compare with the committed definition. The official "
                        "formula is never changed here; a what-if can be saved as a named variant.")
            else:
                committed = variants.committed_constants(definition)
                st.caption("Changed: " + ", ".join(f"{k} {committed[k]} → {v}" for k, v in changes.items()))
                whatif = _frame(root, dataset, task, judge, stamp, definition, tuple(ks), tuple(sorted(changes.items())))
                mine_a, mine_b = (gt_views.score_series(f, business_id) for f in (frame, whatif))
                d, constants = variants.whatif_definition(definition, changes)
                key = (root, dataset, task, judge, stamp, definition, tuple(ks), tuple(sorted(changes.items())))
                st.vega_lite_chart(_spec(("whatif-score", *key, business_id), lambda: charts.whatif_score_chart(
                    mine_a, mine_b, gt_views.thresholds(definition), gt_views.thresholds(d, constants))),
                    key="trace.whatif_score")
                st.dataframe(pl.DataFrame({"K": mine_a["k_label"], "committed": [
                    f"{s:.2f} {v}" for s, v in zip(mine_a["score"], mine_a["verdict"], strict=True)], "what-if": [
                    f"{s:.2f} {v}" for s, v in zip(mine_b["score"], mine_b["verdict"], strict=True)]}),
                    hide_index=True, width="stretch", key="trace.whatif_mine")
                st.vega_lite_chart(_spec(("whatif-dist", *key), lambda: charts.whatif_distribution_chart(
                    gt_views.compare_distributions(frame, whatif))), key="trace.whatif_dist")
                moves = gt_views.verdict_moves(frame, whatif)
                with st.expander(f"{moves['business_id'].n_unique()} restaurant(s) change verdict at some K"):
                    st.dataframe(moves.drop("business_id"), hide_index=True, width="stretch", key="trace.whatif_moves")
                with st.form("trace.variant_form"):
                    name = st.text_input("Variant name", key="trace.variant_name",
                                         help="Letters, digits, '-', '_' or '.'; saved under gt/variants/.")
                    note = st.text_input("Description", key="trace.variant_note")
                    author = st.text_input("Author", key=K_AUTHOR)
                    if st.form_submit_button("Save as named variant"):
                        try:
                            saved_v = variants.save_variant(ws, name, definition, values, description=note,
                                                            author=author)
                        except (WorkbenchError, ValueError) as exc:
                            st.error(str(exc))
                        else:
                            st.success(f"Saved variant {saved_v.name} ({len(saved_v.changes)} change(s)).")
