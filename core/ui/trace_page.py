"""Page glue of the Trace page: the URL ↔ selection, the header, review cards and override forms.

Every value from the URL or from data is shown through :mod:`core.ui.text` (never as markdown),
every loader comes from :mod:`core.ui.cache`, verdict colours from
:func:`core.ground_truth.views.charts.verdict_badges`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl
import streamlit as st

from core import ui
from core.base.errors import DataError, LockError, WorkbenchError
from core.ground_truth import k_label, verdict_changes
from core.ground_truth import views as gt_views
from core.ground_truth.views import charts
from core.judgments.overrides import add_override
from core.tasks import get_task, task_ids
from core.ui import cache, hosting, trace_cache
from core.ui.text import safe, show
from core.workspace import Workspace

K_DATASET, K_SIDEBAR_SEEN, K_APPLIED = "trace.dataset", "trace.sidebar_seen", "trace.applied_query"
K_TASK, K_DEF, K_K, K_REST, K_JUDGE = "trace.task", "trace.definition", "trace.k", "trace.business_id", "trace.judge"
K_FOCUS, K_NEUTRAL, K_EDIT, K_LAST = "trace.focus", "trace.include_neutral", "trace.edit_idx", "trace.last_change"
K_FROM, K_TO, K_KC_FOR, K_AUTHOR = "trace.k_from", "trace.k_to", "trace.kchange_for", "trace.author"
K_ALL_OV, K_TAB, K_VARIANT, K_COMPARE = "trace.all_overrides", "trace.tab", "trace.variant", "trace.compare"
K_FIND = "trace.find"
QUERY = {"dataset": K_DATASET, "task": K_TASK, "formula": K_DEF, "k": K_K, "business_id": K_REST, "judge": K_JUDGE,
         "compare": K_COMPARE}
DEFAULT_KS = ["25", "50", "100", "200"]
TABS = ("Formula and reviews", "Why K changes the verdict", "Knife edge", "Overrides", "What-if")
BADGE = {"severe": "red", "moderate": "orange", "mild": "blue", "firsthand": "violet", "secondhand": "gray",
         "hypothetical": "gray", "positive": "blue", "negative": "orange", "betrayal": "red", "none": "gray"}


@dataclass(frozen=True)
class Trace:
    """What the page traces: the selection and the frame of every K shown."""

    ws: Workspace
    dataset: str
    task: str
    definition: str
    judge: str | None
    business_id: str
    k_text: str
    k_value: int | None
    ks: list[int | None]
    frame: pl.DataFrame  # the GT of this restaurant only, at every K shown
    names: Mapping[str, str]  # business_id -> display name of every restaurant (looked up, not a dict)
    scale: tuple[str, ...] = ()  # the definition's ordered verdicts, mildest first
    scored: bool = True  # False for a rule policy without points (no score to show)
    compare: str | None = None  # a second judge whose values the review cards show beside the first's
    gt_judge: str | None = None  # the judge actually traced (the chosen one, else the GT judge)

    @property
    def root(self) -> str:
        return str(self.ws.root)


def badge(verdict: str, scale: tuple[str, ...] | list[str] = ()) -> str:
    """A verdict as a coloured, labelled markdown badge: the colour of its place on ``scale`` (the
    definition's ordered verdicts; default Low/High/Critical Risk), colour-blind-safe."""
    order = list(scale) if verdict in scale else [*charts.VERDICT_HEX, verdict]
    colour = charts.verdict_badges(order).get(verdict, "gray")
    return f":{colour}-badge[{safe('{v}', v=verdict)}]"


def apply_query() -> None:
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


def pick_dataset(ws: Workspace) -> str | None:
    """The dataset of the link (until the sidebar changes), else the sidebar's; warns about a bad link."""
    datasets = ws.datasets()
    sidebar = st.session_state.get(ui.SIDEBAR_DATASET)
    if st.session_state.get(K_DATASET) and sidebar != st.session_state.get(K_SIDEBAR_SEEN):
        st.session_state.pop(K_DATASET)  # the sidebar changed after the link was opened: follow it
    linked = st.session_state.get(K_DATASET)
    dataset = linked if linked in datasets else ui.current_dataset(ws)
    if linked and linked not in datasets:
        show(st.warning, "The link names dataset '{name}', which is not in this workspace.", name=str(linked)[:80])
    elif linked and sidebar and linked != sidebar:
        show(st.caption, "Dataset {d} from the link (the sidebar shows {s}).", d=dataset, s=sidebar)
    return dataset


def _k_from_state() -> tuple[str, int | None]:
    if not st.session_state.get(K_K):
        st.session_state[K_K] = "50"
    try:
        k_value = gt_views.parse_ks([st.session_state[K_K]])[0]
    except ValueError as exc:
        show(st.warning, "K from the link: {why}; showing K=50.", why=str(exc))
        st.session_state[K_K], k_value = "50", 50
    return k_label(k_value), k_value


def select(ws: Workspace, dataset: str) -> Trace | None:
    """The selection row (restaurant, task, definition, K, judge), kept in the URL."""
    tasks = task_ids(ws)
    if st.session_state.get(K_TASK) not in tasks:
        st.session_state[K_TASK] = tasks[0]
    task = st.session_state[K_TASK]
    judges = [j["judge"] for j in cache.judging_status(ws, dataset, task).judges]  # one reading of the logs: it is needed below
    if not judges:
        show(st.info, "No judgments for {d}/{t}: judge the reviews on the Ground truth page first.", d=dataset, t=task)
        st.page_link("app_pages/ground_truth.py", label="Ground truth", icon=":material/rule:")
        return None
    if st.session_state.get(K_JUDGE) not in judges:
        st.session_state[K_JUDGE] = None
    if st.session_state.get(K_COMPARE) not in judges:
        st.session_state[K_COMPARE] = None
    defs = cache.definitions(ws, task)
    if st.session_state.get(K_DEF) not in defs:
        st.session_state[K_DEF] = defs[0]
    k_text, k_value = _k_from_state()
    ks = gt_views.parse_ks([*DEFAULT_KS, k_text])
    try:
        names = trace_cache.restaurant_names(ws, dataset, task, st.session_state.get(K_JUDGE))
        trace_cache.check_inputs(ws, dataset, task, st.session_state.get(K_JUDGE), names,
                                 st.session_state.get(K_REST))
    except (DataError, LockError) as exc:  # a broken judgment or override file: no other judge helps
        show(st.error, "Cannot trace {task}: {why}. Home lists the workspace's unreadable files.", task=task,
             why=str(exc))
        return None
    except (WorkbenchError, ValueError) as exc:
        st.error(f"{exc}. Pick a judge below.")
        st.session_state[K_JUDGE] = st.session_state.get(K_JUDGE) or judges[0]
        names = trace_cache.restaurant_names(ws, dataset, task, st.session_state[K_JUDGE])
        trace_cache.check_inputs(ws, dataset, task, st.session_state[K_JUDGE], names, st.session_state.get(K_REST))
    lookup = trace_cache.names_lookup(names)
    if st.session_state.get(K_REST) not in lookup:
        if st.session_state.get(K_REST):
            show(st.warning, "No restaurant '{b}' in {d}; showing another one.", b=str(st.session_state[K_REST])[:80],
                 d=dataset)
        st.session_state[K_REST] = names["business_id"][0]
    k_options = list(dict.fromkeys([*DEFAULT_KS, k_text, "all"]))
    c_rest, c_task, c_def, c_k, c_judge = st.columns([4, 2, 2, 1, 2], vertical_alignment="bottom")
    search = ""
    if names.height > trace_cache.LIST_ALL:
        search = c_rest.text_input("Find a restaurant", key=K_FIND, placeholder="name contains …",
                                   help=f"The picker lists the first {trace_cache.LIST_ALL:,} restaurants whose "
                                        f"name contains this text (of {names.height:,}).") or ""
    options = trace_cache.picker_options(names, st.session_state[K_REST], search)
    business_id = c_rest.selectbox("Restaurant", list(options), key=K_REST, persist_state="session",
                                   format_func=lambda b: options.get(b, b))
    c_task.selectbox("Task", tasks, key=K_TASK, persist_state="session")
    definition = c_def.selectbox("Formula / policy / variant", defs, key=K_DEF, persist_state="session")
    c_k.selectbox("K", k_options, key=K_K, persist_state="session", accept_new_options=True,
                  help="Reviews with idx < K count; type any K.")
    judge = c_judge.selectbox("Judge", judges, key=K_JUDGE, persist_state="session", index=None,
                              placeholder="GT judge (default)")
    compare = st.session_state.get(K_COMPARE)
    st.query_params.from_dict({k: v for k, v in (("dataset", dataset), ("task", task), ("formula", definition),
                                                  ("k", k_text), ("business_id", business_id), ("judge", judge),
                                                  ("compare", compare)) if v})
    st.session_state[K_APPLIED] = json.dumps(sorted((k, v) for k, v in st.query_params.to_dict().items()
                                                    if k in QUERY))
    frame = trace_cache.restaurant_frame(ws, dataset, task, judge, definition, ks, business_id)  # this one only
    d = cache.resolved(ws, definition).definition
    traced = judge or cache.judging_status(ws, dataset, task).gt_judge
    return Trace(ws, dataset, task, definition, judge, business_id, k_text, k_value, ks, frame, lookup,
                 gt_views.verdict_scale(d), gt_views.is_scored(d), compare, traced)


def compare_selector(t: Trace) -> dict[int, dict[str, Any]]:
    """A second judge to show beside the traced one on every review card; its fields by idx."""
    others = [j["judge"] for j in cache.judging_status(t.ws, t.dataset, t.task).judges if j["judge"] != t.gt_judge]
    if not others:
        return {}
    chosen = st.selectbox("Compare with judge", others, key=K_COMPARE, index=None, placeholder="no second judge",
                          help="Show a second judge's values on each review card (e.g. from Compare judges on the "
                               "Ground truth page); override the traced judge's values from the card.")
    if not chosen:
        return {}
    other = cache.gt_inputs(t.ws, t.dataset, t.task, chosen).judgments
    spec = get_task(t.task, t.ws)
    rows = other.filter(pl.col("business_id") == t.business_id).select("idx", *spec.field_names).to_dicts()
    return {r.pop("idx"): r for r in rows}


def verdicts_by_k(frame: pl.DataFrame, business_id: str) -> dict[str, tuple[float, str]]:
    """K label -> (score, verdict) of one restaurant."""
    series = gt_views.score_series(frame, business_id)
    return {r["k_label"]: (r["score"], r["verdict"]) for r in series.iter_rows(named=True)}


def header(t: Trace) -> tuple[dict[str, tuple[float, str]], list[dict[str, Any]]]:
    """Name, verdict, facts and the score strip along K; returns (verdicts by K, verdict changes)."""
    info = cache.restaurant_info(t.ws, t.dataset, t.task, t.business_id)
    by_k = verdicts_by_k(t.frame, t.business_id)
    score, verdict = by_k[t.k_text]
    head, strip = st.columns([2, 3], gap="large")
    with head:
        show(st.subheader, "{name}", name=t.names[t.business_id])
        points = f" **{score:.2f}**" if t.scored else ""  # a rule policy has no score: its rules decide
        st.markdown(f"{badge(verdict, t.scale)}{points} at K={t.k_text} · " + safe("{d}", d=t.definition))
        where = ", ".join(p for p in (info.get("city"), info.get("state")) if p)
        stars = f"★ {info['stars']:.1f}" if info.get("stars") is not None else "no stars"
        parts = [info.get("categories") or "no categories", where, stars, f"{info.get('n_reviews')} reviews stored",
                 f"id {t.business_id}"]
        show(st.caption, "{facts}", facts=" · ".join(p for p in parts if p))
        st.page_link("app_pages/ground_truth.py", label="Back to Ground truth", icon=":material/arrow_back:")
    with strip:
        cols = st.columns(len(by_k))
        for col, (lab, (s, v)) in zip(cols, by_k.items(), strict=True):
            if t.scored:
                col.metric(f"K={lab}" + (" ◀" if lab == t.k_text else ""), f"{s:.2f}")
            else:
                col.markdown(f"**K={lab}**" + (" ◀" if lab == t.k_text else ""))
            col.markdown(badge(v, t.scale))
        flips = verdict_changes(t.frame, t.business_id)
        st.caption("Verdict changes along K: " + ("; ".join(
            f"K={k_label(c['k_from'])}→{k_label(c['k_to'])}: {c['verdict_from']} → {c['verdict_to']}" for c in flips)
            if flips else "none (the same verdict at every K shown)."))
        stored = info.get("n_reviews")
        short = [lab for lab in by_k if lab != "all" and stored is not None and int(lab) > stored]
        if short:
            st.warning(f"This restaurant has {stored:,} reviews stored: K={', '.join(short)} use them all.",
                       icon=":material/warning:")
    return by_k, flips


def last_change(t: Trace) -> None:
    """What the last override or revert changed (values at this K, verdicts by K)."""
    last = st.session_state.get(K_LAST)
    if not (last and last["business_id"] == t.business_id):
        return
    with st.container(border=True):
        st.markdown(":material/published_with_changes: " + safe("**{title}**", title=last["title"]))
        a, b = st.columns(2)
        a.caption(f"Values at K={t.k_text} that moved")
        a.dataframe(gt_views.changes_frame(last["changes"]), hide_index=True, width="stretch", placeholder="—", key="trace.last_values")
        b.caption("Score and verdict by K")
        b.dataframe(pl.DataFrame(last["verdicts"]), hide_index=True, width="stretch", placeholder="—", key="trace.last_verdicts")
        st.button("Dismiss", key="trace.dismiss", on_click=lambda: st.session_state.pop(K_LAST, None))


def recompute_after_write(t: Trace, title: str, before_root: Any, before_k: dict) -> None:
    """Record what a write changed and rerun. No cache clear: the write changed the data stamp,
    which keys every loader; other entries stay."""
    after = cache.trace(t.ws, t.dataset, t.task, t.judge, t.business_id, t.definition, t.k_value)
    after_k = verdicts_by_k(trace_cache.restaurant_frame(t.ws, t.dataset, t.task, t.judge, t.definition, t.ks,
                                                         t.business_id), t.business_id)
    rows = [{"K": k, "before": f"{before_k[k][0]:.2f} {before_k[k][1]}", "after": f"{after_k[k][0]:.2f} {after_k[k][1]}"}
            for k in after_k if k in before_k]
    st.session_state[K_LAST] = {"business_id": t.business_id, "title": title, "verdicts": rows,
                                "changes": gt_views.value_changes(before_root, after)}
    st.session_state[K_EDIT] = None
    st.rerun()


def _badges(fields: dict) -> str:
    return " ".join(f":{BADGE.get(str(v), 'violet')}-badge[{safe('{f}: {v}', f=k.replace('_', ' '), v=v)}]"
                    for k, v in fields.items())


def _override_form(t: Trace, card: gt_views.ReviewCard, root_before: Any) -> None:
    spec = get_task(t.task, t.ws)
    with st.form(f"trace.override_form.{card.idx}"):
        st.markdown(f"**Override the judgment of idx {card.idx}** (stored apart; the judge's record is kept)")
        cols = st.columns(len(spec.fields))
        chosen = {}
        for col, field in zip(cols, spec.fields, strict=True):
            current = card.fields.get(field.name)
            chosen[field.name] = col.selectbox(field.name.replace("_", " "), field.values,
                                               key=f"trace.ov.{card.idx}.{field.name}",
                                               index=field.values.index(current) if current in field.values else 0)
        reason = st.text_input("Reason", key=f"trace.ov.{card.idx}.reason", placeholder="why the judge was wrong")
        author = st.text_input("Author", key=K_AUTHOR)
        saved = st.form_submit_button("Save override and recompute", type="primary",
                                      disabled=bool(hosting.write_refusal("overriding a judgment")))
    st.button("Cancel", key=f"trace.ov.{card.idx}.cancel", on_click=lambda: st.session_state.update({K_EDIT: None}))
    if saved:
        corrected = {k: v for k, v in chosen.items() if v != card.fields.get(k)}
        if not corrected:
            st.error("Change at least one field.")
            return
        try:
            record = add_override(t.ws, t.dataset, t.task, business_id=t.business_id, idx=card.idx, corrected=corrected,
                                  reason=reason, author=author, original=dict(card.fields))
        except (WorkbenchError, ValueError) as exc:
            st.error(str(exc))
            return
        what = ", ".join(f"{k} → {v}" for k, v in corrected.items())
        recompute_after_write(t, f"Override {record['override_id']} by {author} on idx {card.idx}: {what}",
                              root_before, verdicts_by_k(t.frame, t.business_id))


def review_card(t: Trace, card: gt_views.ReviewCard, root_before: Any,
                other: dict[int, dict[str, Any]] | None = None) -> None:
    """One contributing review: header, judgment badges (and a second judge's, when compared),
    contributions, text with the excerpt marked."""
    with st.container(border=True):
        top, button = st.columns([5, 2], vertical_alignment="top")
        flag = " · :violet-badge[overridden]" if card.overridden else ""
        rid = safe("  \n:gray[review {r}]", r=card.review_id) if card.review_id else ""
        top.markdown(safe("**{h}**", h=card.header()) + f"{flag}  \n{_badges(card.fields)}{rid}")
        if t.compare and other is not None:
            theirs = other.get(card.idx)
            if theirs is None:
                top.markdown(safe(":gray[{j}: not judged]", j=t.compare))
            else:
                differ = {k: v for k, v in theirs.items() if card.fields.get(k) != v}
                note = safe(" :orange[differs in {f}]", f=", ".join(k.replace("_", " ") for k in differ)) if differ else ""
                top.markdown(safe(":gray[{j}:] ", j=t.compare) + _badges(theirs) + note)
        refused = hosting.write_refusal("overriding a judgment")
        button.button("Override", key=f"trace.edit.{card.idx}", icon=":material/edit:", disabled=bool(refused),
                      help=refused or "Override this judgment (stored apart; the judge's record is kept)",
                      on_click=lambda i=card.idx: st.session_state.update({K_EDIT: i}))
        st.markdown("\n".join(f"- `{gt_views.label(name)}` " + safe("{x}", x=text) for name, _, text in card.contributions))
        if card.text:
            st.html(gt_views.highlight_html(card.text, card.excerpt))
            if card.excerpt and not gt_views.excerpt_found(card.text, card.excerpt):
                st.caption("The judge's excerpt is not in the text verbatim:")
                st.text(card.excerpt)
        else:
            st.caption("No full text stored for this review (dataset made from a judgments file). Judge's excerpt:")
            st.text(card.excerpt or "(no excerpt)")
        if st.session_state.get(K_EDIT) == card.idx:
            _override_form(t, card, root_before)
