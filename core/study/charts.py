"""Altair charts of the analysis page; functions return ``alt.Chart`` and never call ``st``.

Perspectives have one colour everywhere (:data:`PERSPECTIVE_HEX`); the score axis always spans
−1 (sides with the tenant) … +1 (sides with the landlord).
"""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from core.study.grid import PERSPECTIVES

PERSPECTIVE_HEX = {"landlord": "#c2410c", "tenant": "#1d4ed8", "neutral": "#6b7280"}
PERSPECTIVE_SCALE = alt.Scale(domain=list(PERSPECTIVES), range=[PERSPECTIVE_HEX[p] for p in PERSPECTIVES])
SCORE_SCALE = alt.Scale(domain=[-1, 1])


def group_means_chart(groups: list[dict[str, Any]]) -> alt.LayerChart:
    """Mean score per model and perspective with its 95% interval (one row per model and perspective)."""
    rows = [{"row": f"{g['model_id']} · {g['perspective']}", **{k: g[k] for k in ("model_id", "perspective", "n",
                                                                                "mean", "ci_low", "ci_high")}}
            for g in groups]
    frame = pl.DataFrame(rows, schema={"row": pl.String, "model_id": pl.String, "perspective": pl.String,
                                       "n": pl.Int64, "mean": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64})
    base = alt.Chart(frame).encode(
        y=alt.Y("row:N", sort=frame["row"].to_list(), title=None, axis=alt.Axis(labelLimit=360)),
        color=alt.Color("perspective:N", scale=PERSPECTIVE_SCALE, title="asked as", legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("model_id:N"), alt.Tooltip("perspective:N"), alt.Tooltip("n:Q"),
                 alt.Tooltip("mean:Q", format="+.3f"),
                 alt.Tooltip("ci_low:Q", format="+.3f", title="95% CI low"),
                 alt.Tooltip("ci_high:Q", format="+.3f", title="95% CI high")],
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", scale=SCORE_SCALE, title="mean score (−1 sides with tenant · +1 sides with landlord)"),
        x2=alt.X2("ci_high:Q"))
    points = base.mark_point(filled=True, size=90).encode(x=alt.X("mean:Q", scale=SCORE_SCALE))
    zero = alt.Chart(pl.DataFrame({"x": [0.0]})).mark_rule(color="#adb5bd", strokeDash=[4, 4]).encode(x=alt.X("x:Q"))
    chart: alt.LayerChart = alt.LayerChart(layer=[zero, bars, points], height=alt.Step(26))
    return chart


def bland_altman_chart(points: list[dict[str, Any]], summary: dict[str, Any]) -> alt.LayerChart:
    """Bland–Altman plot: per audited response the mean of scorer and human (x) against their
    difference scorer − human (y), with the bias and the 95% limits of agreement as lines."""
    frame = pl.DataFrame(points, schema={"model_id": pl.String, "perspective": pl.String, "prompt_id": pl.String,
                                         "mean": pl.Float64, "diff": pl.Float64})
    reach = max([0.5, *(abs(v) for v in frame["diff"].drop_nulls().to_list()),
                 *(abs(v) for v in (summary.get("loa_low"), summary.get("loa_high")) if v is not None and v == v)])
    dots = alt.Chart(frame).mark_circle(size=70, opacity=0.8).encode(
        x=alt.X("mean:Q", scale=SCORE_SCALE, title="mean of scorer and human consensus"),
        y=alt.Y("diff:Q", scale=alt.Scale(domain=[-1.15 * reach, 1.15 * reach]), title="scorer − human"),
        color=alt.Color("perspective:N", scale=PERSPECTIVE_SCALE, title="asked as", legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("model_id:N"), alt.Tooltip("perspective:N"), alt.Tooltip("prompt_id:N"),
                 alt.Tooltip("mean:Q", format="+.2f"),
                 alt.Tooltip("diff:Q", format="+.2f")],
    )
    lines = pl.DataFrame({"y": [summary.get("bias"), summary.get("loa_low"), summary.get("loa_high")],
                          "what": ["bias", "95% limit", "95% limit"]}).drop_nulls()
    rules = alt.Chart(lines).mark_rule().encode(
        y=alt.Y("y:Q"), strokeDash=alt.StrokeDash("what:N", title=None, legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("what:N"), alt.Tooltip("y:Q", format="+.3f")])
    chart: alt.LayerChart = alt.LayerChart(layer=[dots, rules], height=300)
    return chart
