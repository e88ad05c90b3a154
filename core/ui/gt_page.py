"""Page glue of the Ground truth page: its controls and sections (the page script calls these).

Every loader comes from :mod:`core.ui.cache`; values from data are shown through
:mod:`core.ui.text` or in dataframes; verdict colours come from :func:`core.ground_truth.views.charts.verdict_palette`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.ground_truth import gt_filename, k_label
from core.ground_truth import views as gt_views
from core.ground_truth.coverage import short_message
from core.ground_truth.views import charts
from core.ground_truth.views.status import offline_judge_kind
from core.judgments import set_gt_judge
from core.tasks import get_task
from core.ui import cache, gt_runs, hosting, judge_jobs
from core.ui.paid import cost_line, paid_refusal
from core.ui.text import safe
from core.workspace import Workspace

K_TASK, K_DEF, K_KS, K_JUDGE = "gt.task", "gt.definition", "gt.ks", "gt.judge"
K_FLIPS, K_SORT, K_SEARCH, K_PAGE, K_PAGE_SIZE = "gt.flips_only", "gt.sort", "gt.search", "gt.page", "gt.page_size"
K_REST, K_AT, K_LAYOUT, K_EXPORT_K = "gt.business_id", "gt.k", "gt.layout", "gt.export_k"
K_GRID, K_TABLE, K_TABLE_IDS, K_USE_OPENAI = "gt.grid_chart", "gt.table", "gt.table_ids", "gt.use_openai"
K_RUN_REPORT, K_KS_DROPPED, K_PREFLIGHT = "gt.run_report", "gt.ks_dropped", "gt.preflight"
K_TAB, K_PRIM_PAGE = "gt.tab", "gt.primitives_page"
K_CHOICES = ["25", "50", "100", "200", "all"]
DEFAULT_KS = ["25", "50", "100", "200"]
OFFLINE_NAMES = {"heuristic-v2": "heuristic-v2", "cues": "the cue judge offline-cues-v1"}


@dataclass(frozen=True)
class Choice:
    """What the controls picked."""

    task: str
    definition: str
    ks: list[int | None]
    judge: str | None
    status: gt_views.JudgingStatus
    scale: tuple[str, ...]  # the definition's ordered verdicts, mildest first
    scored: bool  # False for a rule policy without points (its "score" means nothing)
    chosen: Any  # cache.resolved(ws, definition): the definition as an object, with its constants


def _drop_bad_ks() -> None:
    """Drop K chips that are not a valid K before the widget is drawn; remember them for a warning."""
    chips = list(st.session_state.get(K_KS) or [])
    ks, bad = gt_views.split_ks(chips)
    if bad:
        st.session_state[K_KS_DROPPED] = bad
    ordered = [k_label(k) for k in ks] or list(DEFAULT_KS)  # chips read in K order, all last
    if ordered != [str(c) for c in chips]:
        st.session_state[K_KS] = ordered


def controls(ws: Workspace, dataset: str, tasks: list[str]) -> Choice:
    """The control row: task, formula/policy/variant, K chips, judge."""
    if st.session_state.get(K_TASK) not in tasks:
        st.session_state[K_TASK] = tasks[0]
    st.session_state.setdefault(K_KS, list(DEFAULT_KS))
    _drop_bad_ks()
    c_task, c_def, c_ks, c_judge = st.columns([2, 2, 4, 2])
    task = c_task.selectbox("Task", tasks, key=K_TASK, persist_state="session")
    defs = cache.definitions(ws, task)
    if st.session_state.get(K_DEF) not in defs:
        st.session_state[K_DEF] = defs[0]
    definition = c_def.selectbox("Formula / policy / variant", defs, key=K_DEF, persist_state="session",
                                 format_func=lambda name: definition_label(ws, name),
                                 help="Formulas (v1, v2), the task's policies and the what-if variants saved on the "
                                      "Trace page. All are computed from the same judgments. ⚠ dead rules: parts of "
                                      "an imported policy that can never apply (`policies show ID` lists them).")
    c_ks.multiselect("K values", K_CHOICES, key=K_KS, persist_state="session", accept_new_options=True,
                     help="Reviews with idx < K count. Type any positive K and press Enter; 'all' uses every review.")
    dropped = st.session_state.pop(K_KS_DROPPED, None)
    if dropped:
        st.warning(safe("Dropped K {bad}: a K is a positive whole number (at most 1,000,000,000) or 'all'.",
                        bad=", ".join(dropped)[:80]))
    ks = gt_views.parse_ks(st.session_state[K_KS])
    status = cache.judging_status(ws, dataset, task)
    judges = [j["judge"] for j in status.judges]
    if judges and st.session_state.get(K_JUDGE) not in judges:
        st.session_state[K_JUDGE] = status.gt_judge or judges[0]
    judge = c_judge.selectbox("Judge", judges, key=K_JUDGE, persist_state="session", disabled=not judges,
                              help="Whose judgments the GT uses (human overrides are applied on top).")
    chosen = cache.resolved(ws, definition)
    d = chosen.definition
    return Choice(task, definition, ks, judge, status, gt_views.verdict_scale(d), gt_views.is_scored(d), chosen)


def definition_label(ws: Workspace, name: str) -> str:
    """The picker's label of a definition: its name, flagged "⚠ 2 dead" when it is a policy with
    rules that can never apply (``Policy.dead_rules``; the picker's help says so)."""
    try:
        dead = getattr(cache.resolved(ws, name).definition, "dead_rules", ())
    except Exception:  # noqa: BLE001 - a label never breaks the picker; choosing it shows the error
        return name
    return f"{name} ⚠ {len(dead)} dead" if dead else name  # short: the picker is a narrow column


def k_at() -> int | None:
    """The K chosen for the restaurant panel and the primitive table."""
    return gt_views.parse_ks([st.session_state[K_AT]])[0]


def describe(definition: str, chosen: Any) -> str:
    """One line about a formula, policy or variant (markdown-safe); ``chosen``: its ``cache.resolved``."""
    if chosen.variant is None:
        return safe("**{name}**: {text}", name=definition, text=gt_views.describe(chosen.definition))
    changes = ", ".join(f"{k} = {v}" for k, v in chosen.variant.changes.items())
    return safe("**{name}**: saved variant of {base} ({changes}); constants sha256 {sha}…", name=definition,
                base=chosen.base, changes=changes, sha=chosen.provenance()["variant_constants_sha256"][:12])


def _judge_table(status: gt_views.JudgingStatus) -> pl.DataFrame:
    rows = [{"judge": j["judge"], "judgments": j["n"], "parse errors": j["n_parse_errors"],
             "last judged": str(j.get("last_created_at") or "")[:16].replace("T", " ") or "—",
             "GT judge": "yes" if j.get("is_gt_judge") else ""} for j in status.judges]
    return pl.DataFrame(rows)


def judging_section(ws: Workspace, dataset: str, choice: Choice) -> None:
    """Judging status with the index-and-judge button, which starts a background job (a paid judge needs an
    admin and a confirmation), and the newest judging job's progress or outcome."""
    status, task, judge = choice.status, choice.task, choice.judge
    busy = judge_jobs.busy(ws, dataset, task)  # one judging job per dataset/task at a time
    st.caption(f"{status.judged:,} reviews judged by the GT judge" if status.judged is not None
               else f"{len(status.judges)} judges, none chosen as the GT judge" if status.judges
               else "No judgments yet.")
    m = st.columns(5)
    m[0].metric("Reviews", f"{status.reviews:,}")
    m[1].metric("Keyword-matched", "—" if status.matched is None else f"{status.matched:,}",
                help="Reviews containing a keyword of the task; only these are judged.")
    m[2].metric("Judged (GT judge)", "—" if status.judged is None else f"{status.judged:,}")
    m[3].metric("Parse errors", "—" if status.parse_errors is None else f"{status.parse_errors:,}",
                help="Answers outside the schema; they are stored and left out of the GT.")
    m[4].metric("Not judged yet", "—" if status.unjudged is None else f"{status.unjudged:,}")
    if status.judges:
        st.dataframe(cache.table_data(("gt-judges", repr(status.judges)), lambda: _judge_table(status)),
                     hide_index=True, width="stretch", placeholder="—")
    if judge and status.judges and status.gt_judge is None:
        st.warning("Several judges and none chosen as the GT judge of this dataset/task.")
        if st.button(safe("Use {j} as the GT judge", j=judge), key="gt.set_judge",
                     disabled=bool(hosting.write_refusal("choosing the GT judge"))):
            set_gt_judge(ws, dataset, task, judge)  # the judgments stamp changes: loaders recompute
            st.rerun()
    if status.index_current is False:
        st.caption("The keyword index is missing or out of date; the run below builds it first.")
    use_openai = st.toggle(safe("Use the OpenAI-compatible judge ({m})", m=status.openai_model or "model from env"),
                           key=K_USE_OPENAI, disabled=not status.openai,
                           help="Configured through OPENAI_API_KEY / OPENAI_BASE_URL and WORKBENCH_JUDGE_MODEL.")
    if not status.runnable:
        st.caption("This dataset stores no review text (made from a judgments file), so nothing can be judged here.")
    refused = hosting.write_refusal("judging (it writes judgments into the workspace)")
    if refused:
        st.caption(refused)
    if use_openai:
        _paid_run(ws, dataset, task, status, busy)
    elif st.button(f"Build the keyword index and judge with {OFFLINE_NAMES[offline_judge_kind(get_task(task, ws))]} "
                   "(offline)", key="gt.run",
                   type="primary" if not status.ready else "secondary",
                   disabled=not status.runnable or busy or bool(refused)):
        _run(ws, dataset, task, use_openai=False)
    judge_jobs.panel(ws, dataset, task)


def _paid_run(ws: Workspace, dataset: str, task: str, status: gt_views.JudgingStatus, busy: bool) -> None:
    refusal = paid_refusal(ws)
    if refusal:
        st.button("Judge with the OpenAI judge", key="gt.run", disabled=True)
        st.warning(refusal, icon=":material/lock:")
        return
    if st.button("Judge with the OpenAI judge…", key="gt.run", disabled=not status.runnable or busy,
                 help="Shows the estimated cost first; nothing is sent before you confirm."):
        try:
            st.session_state[K_PREFLIGHT] = gt_views.openai_preflight(ws, dataset, task)
        except (WorkbenchError, ValueError) as exc:
            st.error(str(exc))
    pre = st.session_state.get(K_PREFLIGHT)
    if pre:
        with st.container(border=True):
            st.markdown(safe("**Confirm a paid run** with {model}: ", model=pre["model"]) + cost_line(pre))
            a, b = st.columns(2)
            if a.button("Confirm and judge", key="gt.run_confirm", type="primary", disabled=not pre["to_judge"] or busy):
                st.session_state.pop(K_PREFLIGHT, None)
                _run(ws, dataset, task, use_openai=True)
            b.button("Cancel", key="gt.run_cancel", on_click=lambda: st.session_state.pop(K_PREFLIGHT, None))


def _run(ws: Workspace, dataset: str, task: str, *, use_openai: bool) -> None:
    limited = hosting.take_token("judge")
    if limited:
        st.error(limited)
        return
    judge_jobs.start(ws, dataset, task, use_openai=use_openai)  # a process of its own: survives this tab
    st.rerun()


def coverage_warning(views: cache.FrameViews) -> None:
    """The warning when some restaurant has fewer reviews than a chosen K (``views``: the frame's
    ``cache.frame_views``)."""
    message = short_message(views.short_counts, total=views.restaurants, note=" (marked * in the grid)")
    if message:
        st.warning(message, icon=":material/warning:")


def distribution_section(frame: pl.DataFrame, key: tuple, judge: str | None, scale: tuple[str, ...],
                         views: cache.FrameViews) -> None:
    """Verdict counts per K as a table and a chart, with the provenance of the numbers (``views``:
    ``cache.frame_views(key, frame, scale)``)."""
    left, right = st.columns([2, 3], gap="large")
    with left:
        dist = cache.table_data(("dist-table", *key, tuple(scale)), lambda: views.distribution_table(frame, scale))
        st.dataframe(dist, hide_index=True, width="stretch", placeholder="—", key="gt.dist")
        a, b = st.columns(2)
        a.metric("Restaurants", f"{views.restaurants:,}")
        b.metric("Verdict changes with K", f"{views.flips:,}",
                 help="Restaurants whose verdict is not the same at every chosen K.")
        st.caption(safe("Judge {j} · judgments sha256 {sha}… · formula version {v}", j=judge or "",
                        sha=frame["judgments_sha256"][0][:12], v=frame["formula_version"][0]
                        if "formula_version" in frame.columns else frame["policy_id"][0]))
    with right:
        st.vega_lite_chart(cache.chart_spec(("dist", *key), lambda: charts.distribution_chart(
            views.distribution_by_k(frame), views.verdicts)), key="gt.dist_chart", width="stretch")


def export_section(ws: Workspace, dataset: str, choice: Choice, frame: pl.DataFrame) -> None:
    """Download the GT of one K in the xnot or ADDM layout."""
    labels = [k_label(k) for k in choice.ks]
    e1, e2, e3 = st.columns([2, 1, 2], vertical_alignment="bottom")
    layout = e1.radio("Layout", ["xnot", "addm"], key=K_LAYOUT, persist_state="session", horizontal=True,
                      format_func=lambda x: {"xnot": "xnot computed_gt (by name)", "addm": "ADDM groundtruth (by id)"}[x])
    if st.session_state.get(K_EXPORT_K) not in labels:
        st.session_state[K_EXPORT_K] = labels[-1]
    e2.selectbox("K", labels, key=K_EXPORT_K, persist_state="session")
    export_k = gt_views.parse_ks([st.session_state[K_EXPORT_K]])[0]

    def _bytes() -> bytes:  # built on click only
        chosen = cache.resolved(ws, choice.definition)
        base = cache.resolved(ws, chosen.base).definition  # the committed one, as an object
        inputs = cache.gt_inputs(ws, dataset, choice.task, choice.judge)
        return gt_views.export_document(frame, task=choice.task, definition=base, k=export_k, layout=layout,
                                        judgments=inputs.judgments, restaurants=inputs.restaurants,
                                        name=choice.definition, constants=chosen.constants)[1]

    filename = gt_filename(choice.definition, export_k, layout)
    hosting.download_button(e3, f"Download {filename}", _bytes, file_name=filename, mime="application/json",
                            key="gt.download", icon=":material/download:")
    gt_runs.write_button(ws, dataset, choice.task, cache.resolved(ws, choice.definition), export_k, layout)
    st.caption("The file carries the formula version, K asked for, each restaurant's reviews used, how many "
               "restaurants fell short of K, the dataset, task and the sha256 of the judgments (and, for a "
               "variant, its name and the sha256 of its constants).")
