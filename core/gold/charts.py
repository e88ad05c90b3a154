"""Altair charts of the Gold page. Functions return Altair charts; nothing here calls ``st``.

Statuses have one colour everywhere (:data:`STATUS_HEX`); the pass-rate goal is a dashed rule.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from core.gold.scoring import STATUSES

STATUS_HEX = {"pass": "#2f9e44", "acceptable": "#f08c00", "fail": "#e03131"}
STATUS_SCALE = alt.Scale(domain=list(STATUSES), range=[STATUS_HEX[s] for s in STATUSES])
AnyChart = alt.Chart | alt.LayerChart | alt.FacetChart


def _goal_rule(goal: float) -> AnyChart:
    data = pl.DataFrame({"goal": [goal], "label": [f"pass-rate goal {goal:.0%}"]})
    base = alt.Chart(data).encode(y=alt.Y("goal:Q"))
    rule = base.mark_rule(strokeDash=[6, 4], color="#495057").encode(tooltip=[alt.Tooltip("label:N")])
    text = base.mark_text(align="right", dx=-2, dy=-7, color="#495057", fontSize=11).encode(
        text=alt.Text("label:N"), x=alt.XValue("width"))
    return alt.layer(rule, text)


def breakdown_chart(frame: pl.DataFrame, *, goal: float, title: str) -> AnyChart:
    """Overall score and pass rate per group (``breakdown_frame``) as grouped bars, with the goal."""
    data = frame.select("group", "count", "overall_score", "pass_rate").unpivot(
        index=["group", "count"], variable_name="metric", value_name="value").with_columns(
        pl.col("metric").replace_strict({"overall_score": "overall score", "pass_rate": "pass rate"})
    ).fill_nan(None)  # NaN as null, as the pandas path wrote it
    bars = alt.Chart(data).mark_bar().encode(
        x=alt.X("group:N", title=title, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("metric:N"),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title=None, axis=alt.Axis(format="%")),
        color=alt.Color("metric:N", scale=alt.Scale(domain=["overall score", "pass rate"], range=["#3b5bdb", "#2f9e44"]),
                        title=None, legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("group:N", title=title), alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=".3f"),
                 alt.Tooltip("count:Q", title="samples")],
    )
    return alt.layer(bars, _goal_rule(goal), height=240)


def status_chart(samples: pl.DataFrame) -> alt.Chart:
    """Samples per status (pass, acceptable, fail) as one stacked bar per task."""
    data = samples.group_by("task", "status").len("samples")
    return alt.Chart(data).mark_bar().encode(
        y=alt.Y("task:N", title=None),
        x=alt.X("samples:Q", title="samples"),
        color=alt.Color("status:N", scale=STATUS_SCALE, title=None, legend=alt.Legend(orient="bottom")),
        order=alt.Order("status:N"),
        tooltip=[alt.Tooltip("task:N"), alt.Tooltip("status:N"), alt.Tooltip("samples:Q")],
    ).properties(height=alt.Step(28))


def history_chart(history: pl.DataFrame, *, goal: float) -> AnyChart:
    """Pass rate and overall score of a set's reports over time, one colour per model, with the goal."""
    data = history.select("time", "report", "model", "accuracy_method", "overall_score", "pass_rate").unpivot(
        index=["time", "report", "model", "accuracy_method"], variable_name="metric", value_name="value"
    ).with_columns(pl.col("metric").replace_strict({"overall_score": "overall score", "pass_rate": "pass rate"}))
    base = alt.Chart(data.to_pandas()).encode(  # pandas: a null time is "" in the spec (polars: null)
        x=alt.X("time:T", title="report time", axis=alt.Axis(
            format="%Y-%m-%d", labelAngle=0, labelOverlap="greedy", tickCount=alt.TimeIntervalStep(interval="day", step=1))),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title=None, axis=alt.Axis(format="%")),
        strokeDash=alt.StrokeDash("metric:N", title=None, legend=alt.Legend(orient="bottom")),
    )
    line = base.mark_line(color="#adb5bd")
    points = base.mark_point(filled=True, size=90).encode(
        color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom", columns=1, labelLimit=420)),
        shape=alt.Shape("metric:N", title=None),
        tooltip=[alt.Tooltip("report:N"), alt.Tooltip("model:N"), alt.Tooltip("accuracy_method:N", title="accuracy"),
                 alt.Tooltip("metric:N"),
                 alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("time:T", format="%Y-%m-%d %H:%M")],
    )
    return alt.layer(line, points, _goal_rule(goal), height=300)


def compare_chart(frame: pl.DataFrame, *, label_a: str, label_b: str) -> AnyChart:
    """Overall score per sample, report A against report B; points below the diagonal got worse."""
    data = frame.drop_nulls(["overall_a", "overall_b"]).fill_nan(None)  # NaN as null, as the pandas path wrote it
    points = alt.Chart(data).mark_circle(size=70, opacity=0.8).encode(
        x=alt.X("overall_a:Q", scale=alt.Scale(domain=[0, 1]), title=f"overall, {label_a}"),
        y=alt.Y("overall_b:Q", scale=alt.Scale(domain=[0, 1]), title=f"overall, {label_b}"),
        color=alt.Color("change:N", title="change", scale=alt.Scale(
            domain=["regression", "worse score", "same", "better score", "improvement"],
            range=["#e03131", "#ff8787", "#adb5bd", "#74c0fc", "#1971c2"])),
        tooltip=[alt.Tooltip("sample_id:N"), alt.Tooltip("change:N"), alt.Tooltip("overall_a:Q", format=".3f"),
                 alt.Tooltip("overall_b:Q", format=".3f"), alt.Tooltip("question:N")],
    )
    diagonal = alt.Chart(pl.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]})).mark_line(
        color="#868e96", strokeDash=[4, 4]).encode(x=alt.X("x:Q"), y=alt.Y("y:Q"))
    return alt.layer(diagonal, points, height=300, width=360)
