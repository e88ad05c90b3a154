"""Ground truth: verdicts per K, the restaurant × K grid, every primitive, judging status, export."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import streamlit as st

from core import charts, gt_views, ui
from core.errors import WorkbenchError
from core.ground_truth import distribution_by_k, gt_filename, k_label
from core.judgments import set_gt_judge
from core.tasks import task_ids
from core.workspace import Workspace

K_TASK, K_DEF, K_KS, K_JUDGE = "gt.task", "gt.definition", "gt.ks", "gt.judge"
K_FLIPS, K_SORT, K_SEARCH, K_ALL_ROWS = "gt.flips_only", "gt.sort", "gt.search", "gt.all_rows"
K_REST, K_AT, K_LAYOUT, K_EXPORT_K = "gt.business_id", "gt.k", "gt.layout", "gt.export_k"
K_GRID, K_TABLE, K_TABLE_IDS, K_USE_OPENAI = "gt.grid_chart", "gt.table", "gt.table_ids", "gt.use_openai"
K_RUN_REPORT = "gt.run_report"
GRID_ROWS = 30
K_CHOICES = ["25", "50", "100", "200", "all"]


@st.cache_data(max_entries=8, show_spinner=False)
def _status(root: str, dataset: str, task: str, stamp: tuple) -> gt_views.JudgingStatus:
    return gt_views.judging_status(Workspace(Path(root)), dataset, task)


@st.cache_data(max_entries=8, show_spinner=False)
def _inputs(root: str, dataset: str, task: str, judge: str, stamp: tuple) -> gt_views.GTInputs:
    return gt_views.load_inputs(Workspace(Path(root)), dataset, task, judge)


@st.cache_data(max_entries=32, show_spinner=False)
def _frame(root: str, dataset: str, task: str, judge: str, stamp: tuple, definition: str,
           ks: tuple[int | None, ...]) -> pl.DataFrame:
    inputs = _inputs(root, dataset, task, judge, stamp)
    return gt_views.compute_frame(inputs, definition, ks, dataset=dataset, task=task)


@st.cache_data(max_entries=128, show_spinner=False)
def _spec(key: tuple, _build) -> dict:
    """A chart's Vega-Lite spec, built once per ``key`` (Altair's to_dict costs ~50 ms a chart)."""
    return _build().to_dict()


def _on_grid_select() -> None:
    picked = (st.session_state[K_GRID].selection or {}).get(charts.SELECTION) or []
    if picked:
        st.session_state[K_REST] = picked[0]["business_id"]
        st.session_state[K_AT] = picked[0]["k_label"]


def _on_table_select() -> None:
    rows = st.session_state[K_TABLE].selection.rows
    if rows:
        st.session_state[K_REST] = st.session_state[K_TABLE_IDS][rows[0]]


ws = ui.current_workspace()
dataset = ui.current_dataset(ws)
st.title("Ground truth")
st.caption("How each restaurant's verdict comes out of the stored judgments, for every K (the reviews a method "
           "sees). Pick a restaurant to trace any number back to the reviews behind it.")
if not dataset:
    st.info("No dataset in this workspace. Generate the demo (`python -m core demo`) or import a dataset.")
    st.stop()

# -- selection -------------------------------------------------------------------------------------
tasks = task_ids(ws)
if st.session_state.get(K_TASK) not in tasks:
    st.session_state[K_TASK] = tasks[0]
st.session_state.setdefault(K_KS, ["25", "50", "100", "200"])
c_task, c_def, c_ks, c_judge = st.columns([2, 2, 3, 2])
task = c_task.selectbox("Task", tasks, key=K_TASK, persist_state="session")
defs = gt_views.definitions(task, ws)
if st.session_state.get(K_DEF) not in defs:
    st.session_state[K_DEF] = defs[0]
definition = c_def.selectbox("Formula / policy", defs, key=K_DEF, persist_state="session", help="Formulas (v1, v2) and point/rule policies "
                             "of the task. All are computed from the same judgments.")
c_ks.multiselect("K values", K_CHOICES, key=K_KS, persist_state="session", accept_new_options=True,
                 help="Reviews with idx < K count. Type any positive K and press Enter; 'all' uses every review.")
try:
    ks = gt_views.parse_ks(st.session_state[K_KS] or ["25", "50", "100", "200"])
except ValueError as exc:
    st.error(f"K values: {exc}")
    st.stop()
stamp = gt_views.data_stamp(ws, dataset, task)
status = _status(str(ws.root), dataset, task, stamp)
judges = [j["judge"] for j in status.judges]
if judges and st.session_state.get(K_JUDGE) not in judges:
    st.session_state[K_JUDGE] = status.gt_judge or judges[0]
judge = c_judge.selectbox("Judge", judges, key=K_JUDGE, persist_state="session", disabled=not judges,
                          help="Whose judgments the GT uses (human overrides are applied on top).")
st.caption(f"**{definition}**: {gt_views.md_escape(gt_views.describe(definition))}")

# -- judging status ------------------------------------------------------------------------------
summary = (f"{status.judged:,} judged by {status.gt_judge}" if status.judged is not None
           else f"{len(judges)} judge(s), no GT judge chosen" if judges else "no judgments yet")
with st.expander(f"Judging status · {summary}", expanded=not status.ready):
    m = st.columns(5)
    m[0].metric("Reviews", f"{status.reviews:,}")
    m[1].metric("Keyword-matched", "—" if status.matched is None else f"{status.matched:,}",
                help="Reviews containing a keyword of the task (SPEC §2.2); only these are judged.")
    m[2].metric("Judged (GT judge)", "—" if status.judged is None else f"{status.judged:,}")
    m[3].metric("Parse errors", "—" if status.parse_errors is None else f"{status.parse_errors:,}",
                help="Answers outside the schema; they are stored and left out of the GT.")
    m[4].metric("Not judged yet", "—" if status.unjudged is None else f"{status.unjudged:,}")
    if status.judges:
        st.dataframe(pl.DataFrame(status.judges).select("judge", "n", "n_parse_errors", "last_created_at",
                                                       "is_gt_judge"), hide_index=True, width="stretch")
    if judges and status.gt_judge is None:
        st.warning("Several judges and none chosen as the GT judge of this dataset/task.")
        if st.button(f"Use {judge} as the GT judge", key="gt.set_judge"):
            set_gt_judge(ws, dataset, task, judge)
            ui.clear_data_caches()
            st.rerun()
    if status.index_current is False:
        st.caption("The keyword index is missing or out of date; the run below builds it first.")
    use_openai = st.toggle(f"Use the OpenAI-compatible judge ({status.openai_model or 'model from env'})",
                           key=K_USE_OPENAI, disabled=not status.openai,
                           help="Configured through OPENAI_API_KEY / OPENAI_BASE_URL and WORKBENCH_JUDGE_MODEL.")
    label = "Build the keyword index and judge with " + ("the OpenAI judge" if use_openai else "heuristic-v1")
    if not status.runnable:
        st.caption("This dataset stores no review text (made from a judgments file), so nothing can be judged here.")
    if st.button(label, key="gt.run", type="primary" if not status.ready else "secondary",
                 disabled=not status.runnable):
        progress, done = ui.page_progress("Judging")
        try:
            report = gt_views.run_index_and_judge(ws, dataset, task, use_openai=use_openai, progress=progress)
        except (WorkbenchError, ValueError) as exc:
            done()
            st.error(str(exc))
        else:
            done()
            st.session_state[K_RUN_REPORT] = report
            ui.clear_data_caches()
            st.rerun()
    if st.session_state.get(K_RUN_REPORT):
        r = st.session_state[K_RUN_REPORT]
        st.success(f"{r['judge']}: judged {r['judged']:,} reviews ({r['parse_errors']} parse errors, "
                   f"{r['failures']} failures, {r['skipped_already_judged']:,} already judged) in {r['seconds']} s"
                   + (" · keyword index built" if r["index_built"] else ""))

if not status.ready:
    st.info("No judgments for this dataset and task yet: run the judge above, `python -m core judge`, or import "
            "judgments (`python -m core judgments import`).")
    st.stop()

try:
    frame = _frame(str(ws.root), dataset, task, judge, stamp, definition, tuple(ks))
except (WorkbenchError, ValueError) as exc:
    st.error(str(exc))
    st.stop()

base_key = (str(ws.root), dataset, task, judge, stamp, definition, tuple(ks))  # what every chart depends on

# -- distribution --------------------------------------------------------------------------------
st.subheader("Verdicts by K")
scale = gt_views.verdict_scale(definition)
dist = distribution_by_k(frame, scale)
flipping = gt_views.flips(frame)
left, right = st.columns([2, 3], gap="large")
with left:
    st.dataframe(dist.with_columns(pl.col("k").cast(pl.Utf8).fill_null("all").alias("K")).select(
        "K", *dist.columns[1:]), hide_index=True, width="stretch", key="gt.dist")
    a, b = st.columns(2)
    a.metric("Restaurants", f"{frame['business_id'].n_unique():,}")
    b.metric("Verdict changes with K", f"{flipping.height:,}",
             help="Restaurants whose verdict is not the same at every chosen K.")
    st.caption(f"Judge `{judge}` · judgments sha256 `{frame['judgments_sha256'][0][:12]}…` · "
               f"formula version `{frame['formula_version'][0]}`")
with right:
    st.vega_lite_chart(_spec(("dist", *base_key), lambda: charts.distribution_chart(dist, scale)), key="gt.dist_chart")

# -- restaurant × K grid ---------------------------------------------------------------------------
st.subheader("Restaurant × K")
g1, g2, g3, g4 = st.columns([1, 1, 2, 1])
g1.toggle("Flips only", key=K_FLIPS, persist_state="session", help="Only restaurants whose verdict changes with K.")
g2.selectbox("Sort by", gt_views.SORTS, key=K_SORT, persist_state="session")
g3.text_input("Find a restaurant", key=K_SEARCH, persist_state="session", placeholder="name contains …")
g4.toggle("All rows", key=K_ALL_ROWS, persist_state="session", help=f"Show every restaurant (default: the first {GRID_ROWS}).")
grid = gt_views.verdict_grid(frame, flips_only=st.session_state.get(K_FLIPS, False),
                             sort=st.session_state.get(K_SORT) or gt_views.SORTS[0],
                             search=st.session_state.get(K_SEARCH) or "")
shown = grid if st.session_state.get(K_ALL_ROWS) else grid.head(GRID_ROWS)
names = gt_views.display_names(frame)
order = grid["business_id"].to_list() + sorted(set(names) - set(grid["business_id"].to_list()),
                                               key=lambda b: names[b].lower())
if st.session_state.get(K_REST) not in names:
    st.session_state[K_REST] = order[0]
labels = [k_label(k) for k in ks]
if st.session_state.get(K_AT) not in labels:
    st.session_state[K_AT] = "50" if "50" in labels else labels[0]
judge_param = None if judge == status.gt_judge else judge
grid_col, detail_col = st.columns([5, 6], gap="large")
with grid_col:
    if grid.height == 0:
        st.info("No restaurant matches.")
    else:
        long = gt_views.grid_long(frame, shown["business_id"].to_list())
        grid_key = ("grid", *base_key, tuple(shown["business_id"].to_list()))
        st.vega_lite_chart(_spec(grid_key, lambda: charts.verdict_grid_chart(long, shown["name"].to_list(), scale)),
                           key=K_GRID, width="content", on_select=_on_grid_select, selection_mode=charts.SELECTION)
        st.caption(f"{shown.height} of {grid.height} restaurants · colour = verdict, number = score. Hover for "
                   "details; click a cell to show that restaurant on the right.")
        with st.expander("The grid as a table (sortable)"):
            st.dataframe(grid.drop("business_id"), hide_index=True, width="stretch", key="gt.grid_table",
                         column_config={"max_score": st.column_config.NumberColumn("max score", format="%.2f"),
                                        "path": st.column_config.TextColumn("verdict along K", width="large")})
with detail_col:
    r1, r2 = st.columns([3, 1])
    business_id = r1.selectbox("Restaurant", order, key=K_REST, persist_state="session",
                               format_func=lambda b: names.get(b, b))
    r2.selectbox("K for the tables", labels, key=K_AT, persist_state="session")
    series = gt_views.score_series(frame, business_id)
    path = grid.filter(pl.col("business_id") == business_id)["path"].to_list() or \
        gt_views.verdict_grid(frame).filter(pl.col("business_id") == business_id)["path"].to_list()
    st.caption("Verdict along K: " + gt_views.md_escape(path[0]))
    st.vega_lite_chart(_spec(("score", *base_key, business_id),
                             lambda: charts.score_chart(series, gt_views.thresholds(definition), verdicts=scale)), key="gt.score_chart")
    st.markdown("**Open the trace**: every number of this restaurant back to its reviews")
    link_cols = st.columns(min(4, series.height))
    for i, row in enumerate(series.iter_rows(named=True)):
        link_cols[i % len(link_cols)].page_link(
            "app_pages/trace.py", icon=":material/account_tree:", label=f"K={row['k_label']} · {row['score']:.2f}",
            query_params=gt_views.trace_params(dataset, task, definition, row["k"], business_id, judge_param))
k_at = gt_views.parse_ks([st.session_state[K_AT]])[0]

# -- every primitive at one K -------------------------------------------------------------------
st.subheader(f"Every primitive at K={k_label(k_at)}")
table = gt_views.primitive_table(frame, k_at)
table = table.with_columns(pl.Series("trace", [gt_views.trace_url(dataset, task, definition, k_at, b, judge_param)
                                               for b in table["business_id"].to_list()]))
st.session_state[K_TABLE_IDS] = table["business_id"].to_list()
st.dataframe(table.drop("business_id"), hide_index=True, width="stretch", height=360, key=K_TABLE,
             on_select=_on_table_select, selection_mode="single-row",
             column_config={"trace": st.column_config.LinkColumn("trace", display_text="open trace"),
                            "score": st.column_config.NumberColumn(format="%.2f")})
st.caption("Select a row to show that restaurant in the panel above; 'open trace' opens its trace in a new tab.")

# -- export ----------------------------------------------------------------------------------------
st.subheader("Export")
e1, e2, e3 = st.columns([2, 1, 2])
layout = e1.radio("Layout", ["xnot", "addm"], key=K_LAYOUT, persist_state="session", horizontal=True,
                  format_func=lambda x: {"xnot": "xnot computed_gt (by name)", "addm": "ADDM groundtruth (by id)"}[x])
if st.session_state.get(K_EXPORT_K) not in labels:
    st.session_state[K_EXPORT_K] = labels[-1]
e2.selectbox("K", labels, key=K_EXPORT_K, persist_state="session")
export_k = gt_views.parse_ks([st.session_state[K_EXPORT_K]])[0]


def _export_bytes() -> bytes:
    inputs = _inputs(str(ws.root), dataset, task, judge, stamp)
    return gt_views.export_document(frame, task=task, definition=definition, k=export_k, layout=layout,
                                    judgments=inputs.judgments, restaurants=inputs.restaurants)[1]


filename = gt_filename(definition, export_k, layout)
e3.download_button(f"Download {filename}", _export_bytes, file_name=filename, mime="application/json",
                   key="gt.download", icon=":material/download:", on_click="ignore")
st.caption("The file carries the formula version, K, dataset, task and the sha256 of the judgments it came from.")
