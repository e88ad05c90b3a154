"""Loaders and page glue of the Gold page (the only gold code that imports streamlit).

Loaders are keyed by the workspace's gold files' modification stamp, so a saved report or a new
answers file shows at once. Texts from gold sets and answers are escaped before they are shown
as HTML.
"""

from __future__ import annotations

import html
import json
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core import ui
from core.base.errors import WorkbenchError
from core.base.stamps import folder_stamps
from core.gold import charts, store
from core.gold.answers import write_answers_file
from core.gold.compare import (
    breakdown_frame,
    compare_reports,
    compare_summary,
    history_frame,
    sample_detail,
    samples_frame,
)
from core.gold.evaluation import EXPECTED_LABEL, EvalRequest, get_answers, run_evaluation
from core.gold.items import load_gold_files
from core.gold.report import now_timestamp, read_report
from core.gold.scoring import STATUSES, GoldConfig
from core.ui import hosting, page_progress
from core.workspace import Workspace

EXPECTED = "expected"  # the answer-source key of the expected outputs
MODEL = "model"  # the answer-source key of "ask a model"
PCT = st.column_config.NumberColumn(format="percent")
SCORE = st.column_config.NumberColumn(format="%.3f")
CSS = """<style>
.gold-text{white-space:pre-wrap;border:1px solid #dee2e6;border-radius:6px;padding:.6rem .8rem;line-height:1.5}
.gold-text mark.keyword{background:#fff3bf}.gold-text mark.found{background:#b2f2bb}
.gold-chip{display:inline-block;border-radius:10px;padding:0 .5rem;margin:.1rem;font-size:.85rem}
.gold-chip.found{background:#b2f2bb}.gold-chip.missing{background:#ffc9c9}
</style>"""


def guarded(fn: Any, *args: Any) -> Any:
    """``fn(*args)``; bad data (a set's file or config) is shown as one error line and stops the page."""
    try:
        return fn(*args)
    except (WorkbenchError, ValueError, FileNotFoundError) as exc:
        st.error(str(exc))
        st.stop()


def stamp(ws: Workspace) -> tuple:
    """The stamps of every file under ``gold/`` (the loaders' cache key: a parameter Streamlit
    hashes, so no leading underscore). A file replaced by an older one, or removed, changes it too."""
    return folder_stamps(ws.gold_dir, "**/*")


@st.cache_data(max_entries=64, show_spinner=False)
def _evaluate(root: str, set_name: str, source: str, method: str, gold_stamp: tuple) -> dict[str, Any]:
    ws = Workspace(Path(root))
    answers = None if source == EXPECTED else store.answers_path(ws, set_name, source)
    request = EvalRequest(store.set_files(ws, set_name), store.set_config(ws, set_name),
                          source=EXPECTED if answers is None else "answers", answers_path=answers, accuracy=method,
                          timestamp=now_timestamp())
    return run_evaluation(ws, request)


def evaluate(ws: Workspace, set_name: str, source: str, method: str) -> dict[str, Any]:
    """The report of a set scored against an answer source (offline methods only; cached)."""
    return _evaluate(str(ws.root), set_name, source, method, stamp(ws))


@st.cache_data(max_entries=64, show_spinner=False)
def _must_include(root: str, set_name: str, gold_stamp: tuple) -> dict[str, list[str]]:
    ws = Workspace(Path(root))
    return {i.sample_id: list(i.must_include) for i in load_gold_files(store.set_files(ws, set_name))}


def must_include(ws: Workspace, set_name: str) -> dict[str, list[str]]:
    """Required keywords per sample id of a set."""
    return _must_include(str(ws.root), set_name, stamp(ws))


@st.cache_data(max_entries=32, show_spinner=False)
def _report(root: str, name: str, gold_stamp: tuple) -> dict[str, Any]:
    return read_report(store.report_path(Workspace(Path(root)), name))


def report(ws: Workspace, name: str) -> dict[str, Any]:
    """A saved report."""
    return _report(str(ws.root), name, stamp(ws))


def source_label(source: str) -> str:
    return {EXPECTED: "Expected answers (" + EXPECTED_LABEL.split("(")[1], MODEL: "Ask a model (LLM endpoint)…"}.get(
        source, f"Answers: {source}")


def show_metrics(rep: dict[str, Any], goal: float) -> None:
    """The aggregate metrics, with the pass rate against the goal."""
    agg = rep["aggregate_metrics"]
    m = st.columns(5)
    m[0].metric("Overall score", f"{agg['overall_score']:.3f}")
    m[1].metric("Accuracy", f"{agg['accuracy']:.3f}")
    m[2].metric("Citation coverage", f"{agg['citation_coverage']:.0%}")
    m[3].metric("Avg length (tokens)", f"{agg['avg_length_tokens']:.1f}")
    gap = agg["pass_rate"] - goal
    m[4].metric("Pass rate", f"{agg['pass_rate']:.0%}", delta=f"{gap:+.0%} vs goal {goal:.0%}")


def report_key(rep: dict[str, Any]) -> tuple:
    """What identifies a report's contents for the chart cache: its metadata (time, model, files,
    accuracy method) and headline figures."""
    return (json.dumps([rep["metadata"], rep["aggregate_metrics"]], sort_keys=True, default=str),
            len(rep.get("sample_results") or ()))


def show_breakdowns(rep: dict[str, Any], goal: float) -> None:
    """By task and by domain: a table and a chart each."""
    for col, key, title in zip(st.columns(2, gap="large"), ("task", "domain"), ("Task", "Domain"), strict=True):
        frame = breakdown_frame(rep, key)
        with col:
            st.subheader(f"By {key}")
            st.vega_lite_chart(ui.chart_spec(("gold-breakdown", key, goal, report_key(rep)),
                                             partial(charts.breakdown_chart, frame, goal=goal, title=title.lower())),
                               width="stretch")
            st.dataframe(frame.rename({"group": key}), hide_index=True, placeholder="—", width="stretch", column_config={
                "overall_score": st.column_config.NumberColumn("overall", format="%.3f"), "accuracy": SCORE,
                "pass_rate": st.column_config.NumberColumn("pass rate", format="percent")})


def detail_html(sample: dict[str, Any], keywords: list[str], config: GoldConfig) -> str:
    """Expected next to predicted, keywords highlighted, found/missing chips and the citation (escaped)."""
    d = sample_detail(sample, keywords, config)
    chips = "".join(f'<span class="gold-chip found">✓ {html.escape(k)}</span>' for k in d["found"])
    chips += "".join(f'<span class="gold-chip missing">✗ {html.escape(k)}</span>' for k in d["missing"])
    cite = html.escape(d["citation"]) if d["citation"] else "<em>none found</em>"
    return (f'{CSS}<div style="display:flex;gap:1rem"><div style="flex:1"><b>Expected</b>'
            f'<div class="gold-text gold-expected">{d["expected_html"]}</div></div><div style="flex:1"><b>Predicted</b>'
            f'<div class="gold-text gold-predicted">{d["predicted_html"] or "<em>(empty)</em>"}</div></div></div>'
            f'<p><b>Keywords</b> {chips or "<em>none required</em>"}</p><p><b>Citation found</b> {cite}</p>')


def samples_table(rep: dict[str, Any], statuses: list[str], config: GoldConfig) -> pl.DataFrame:
    """The sample table filtered to ``statuses``."""
    frame = samples_frame(rep, match_threshold=config.match_threshold)
    return frame.filter(pl.col("status").is_in(statuses or list(STATUSES)))


def show_samples_table(frame: pl.DataFrame) -> None:
    cols = ["sample_id", "question", "status", "overall", "accuracy", "matched", "citation", "length", "keywords",
            "tokens", "domain", "task", "error"]
    st.dataframe(frame.select(cols), hide_index=True, placeholder="—", width="stretch", height=300,
                 column_config={"overall": SCORE, "accuracy": SCORE, "citation": SCORE, "length": SCORE,
                                "keywords": PCT, "matched": st.column_config.CheckboxColumn("match ≥ .75"),
                                "question": st.column_config.TextColumn(width="medium")})


def show_compare(ws: Workspace, name_a: str, name_b: str) -> None:
    """Two saved reports side by side, regressions first."""
    a, b = report(ws, name_a), report(ws, name_b)
    frame = compare_reports(a, b)
    summary = compare_summary(frame)
    m = st.columns(4)
    m[0].metric("Regressions", summary["regression"])
    m[1].metric("Improvements", summary["improvement"])
    m[2].metric("Pass rate of B", f"{b['aggregate_metrics']['pass_rate']:.0%}",
                delta=f"{b['aggregate_metrics']['pass_rate'] - a['aggregate_metrics']['pass_rate']:+.0%}")
    m[3].metric("Overall score of B", f"{b['aggregate_metrics']['overall_score']:.3f}",
                delta=f"{b['aggregate_metrics']['overall_score'] - a['aggregate_metrics']['overall_score']:+.3f}")
    st.dataframe(frame, hide_index=True, placeholder="—", width="stretch", height=320, column_config={
        "overall_a": st.column_config.NumberColumn("overall A", format="%.3f"),
        "overall_b": st.column_config.NumberColumn("overall B", format="%.3f"),
        "delta": st.column_config.NumberColumn(format="%+.3f"), "status_a": "status A", "status_b": "status B",
        "question": st.column_config.TextColumn(width="large")})
    st.vega_lite_chart(ui.chart_spec(("gold-compare", report_key(a), report_key(b)),
                                     lambda: charts.compare_chart(frame, label_a="A", label_b="B")), width="content")


def ask_model(ws: Workspace, set_name: str, model: str) -> str:
    """Ask ``model`` every question of the set (cached calls, progress bar); save and name its answers."""
    items = load_gold_files(store.set_files(ws, set_name))
    progress, done = page_progress(f"Asking {model}")
    answers = get_answers(ws, items, EvalRequest([], source=MODEL, model=model), progress=progress)
    done()
    name = store.slug(model)
    write_answers_file(store.answers_path(ws, set_name, name), items, answers)
    return name


def score_with_model(ws: Workspace, set_name: str, source: str, method: str, accuracy_model: str) -> dict[str, Any]:
    """Score with a method that calls an endpoint (embedding, llm-judge); not cached by Streamlit (the
    judge's answers are in the workspace's LLM cache)."""
    answers = None if source == EXPECTED else store.answers_path(ws, set_name, source)
    request = EvalRequest(store.set_files(ws, set_name), store.set_config(ws, set_name),
                          source=EXPECTED if answers is None else "answers", answers_path=answers, accuracy=method,
                          accuracy_model=accuracy_model or None, timestamp=now_timestamp())
    progress, done = page_progress(f"Scoring with {method}")
    try:
        return run_evaluation(ws, request, progress=progress)
    finally:
        done()


def history(ws: Workspace, set_name: str) -> pl.DataFrame:
    """The set's saved reports over time."""
    return history_frame(store.history(ws, set_name))


def gated_button(label: str, key: str, refusal: str | None, *, disabled: bool = False, **kwargs: Any) -> bool:
    """A button that is disabled, with its one-line reason below, when the deployment refuses it."""
    clicked = st.button(label, key=key, disabled=disabled or bool(refusal), **kwargs)
    if refusal:
        st.caption(refusal)
    return clicked


def paid_block(ws: Workspace) -> str | None:
    """Why this session may not call the LLM endpoint (demo; team without admin), else None."""
    return hosting.admin_refusal(ws, "call the LLM endpoint")


def write_block(action: str) -> str | None:
    """Why ``action`` may not write into the workspace here (demo mode), else None."""
    return hosting.write_refusal(action)

