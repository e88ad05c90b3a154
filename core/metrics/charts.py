"""Altair charts of the Results page. Functions return ``alt.Chart``; nothing here calls ``st``.

Inputs are the frames of :mod:`core.metrics.views`; scores are in percent.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from core.ground_truth.views.charts import VERDICT_HEX

TARGET_PCT = 75.0
AnyChart = alt.Chart | alt.LayerChart | alt.FacetChart  # what the functions below return


def _verdict_scale(values: list[str]) -> alt.Scale:
    domain = [v for v in VERDICT_HEX if v in values] + sorted(v for v in values if v not in VERDICT_HEX)
    return alt.Scale(domain=domain, range=[VERDICT_HEX.get(v, "#868e96") for v in domain])


def pr_chart(curves: pl.DataFrame) -> AnyChart:
    """Precision–recall step curves, one per threshold (≥ High, ≥ Critical …), from
    :func:`core.metrics.views.pr_curves`.

    Points are joined in their ``point`` order with ``step-before``: the segment from one recall to
    the next is drawn at the precision of the point it reaches, so the area under each curve is the
    threshold's average precision (Σ (Rₙ − Rₙ₋₁)·Pₙ), as printed beside it. (``step-after`` would
    give each segment the precision of the point it leaves: a constant score, AP = prevalence,
    would be drawn flat at precision 1.)
    """
    return alt.Chart(curves).mark_line(interpolate="step-before", strokeWidth=2).encode(
        x=alt.X("recall:Q", scale=alt.Scale(domain=[0, 1]), title="recall"),
        y=alt.Y("precision:Q", scale=alt.Scale(domain=[0, 1.02]), title="precision"),
        color=alt.Color("threshold:N", title=None, legend=alt.Legend(orient="top")),
        order=alt.Order("point:Q"),
        tooltip=[alt.Tooltip("threshold:N"), alt.Tooltip("recall:Q", format=".3f"), alt.Tooltip("precision:Q", format=".3f")],
    ).properties(height=300, title="Precision–recall per threshold (area under each curve = its AP)")


def components_chart(frame: pl.DataFrame) -> AnyChart:
    """Process components as horizontal bars (value in %), labelled with their weights; a null
    component is drawn as an empty row labelled N/A."""
    data = frame.with_columns(
        (pl.col("value") * 100).alias("value_pct"),
        pl.when(pl.col("value").is_null()).then(pl.lit("N/A (weight redistributed)"))
        .otherwise(pl.format("{}% · weight {}%", (pl.col("value") * 100).round(1),
                             (pl.col("weight") * 100).round(0).cast(pl.Int64))).alias("label"),
    )
    y = alt.Y("component:N", sort=list(frame["component"]), title=None, axis=alt.Axis(labelLimit=200))
    bars = alt.Chart(data).mark_bar(color="#3b5bdb").encode(
        x=alt.X("value_pct:Q", scale=alt.Scale(domain=[0, 100]), title="score (%)"), y=y,
        tooltip=[alt.Tooltip("component:N"), alt.Tooltip("value_pct:Q", format=".1f", title="score %"),
                 alt.Tooltip("weight:Q", format=".0%"), alt.Tooltip("effective_weight:Q", format=".1%",
                                                                    title="weight after redistribution")])
    text = alt.Chart(data).mark_text(align="left", dx=4, fontSize=11).encode(
        x=alt.X("value_pct:Q", impute=alt.ImputeParams(value=0)), y=y, text=alt.Text("label:N"))
    rule = alt.Chart(pl.DataFrame({"x": [TARGET_PCT]})).mark_rule(strokeDash=[4, 4], color="#868e96").encode(x=alt.X("x:Q"))
    return alt.layer(bars, text, rule, height=alt.Step(30))


def confusion_chart(frame: pl.DataFrame, scale: list[str]) -> AnyChart:
    """GT verdict (rows) × method verdict (columns) counts as a heat map with the counts written in."""
    cols = scale + sorted(set(frame["method_verdict"]) - set(scale))
    base = alt.Chart(frame).encode(
        x=alt.X("method_verdict:N", sort=cols, title="method verdict", axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("gt_verdict:N", sort=scale, title="GT verdict"),
    )
    cells = base.mark_rect().encode(color=alt.Color("count:Q", scale=alt.Scale(scheme="blues", type="sqrt"), legend=None),
                                    tooltip=[alt.Tooltip("gt_verdict:N"), alt.Tooltip("method_verdict:N"), alt.Tooltip("count:Q")])
    text = base.mark_text(fontSize=13).encode(text=alt.Text("count:Q"), color=alt.ColorValue("#212529"))
    return alt.layer(cells, text, height=alt.Step(44), width=alt.Step(110))


def comparison_chart(frame: pl.DataFrame) -> AnyChart:
    """Each run's headline scores with 95 % intervals, one panel per metric."""
    data = frame.filter(pl.col("score_pct").is_not_null())
    base = alt.Chart(data).encode(y=alt.Y("run:N", title=None, axis=alt.Axis(labelLimit=260)))
    bars = base.mark_rule(strokeWidth=2, color="#495057").encode(
        x=alt.X("low_pct:Q", title="score (%)", scale=alt.Scale(zero=False), axis=alt.Axis(format="~r")), x2=alt.X2("high_pct:Q"))
    points = base.mark_circle(size=90, color="#3b5bdb", opacity=1).encode(
        x=alt.X("score_pct:Q"), tooltip=[alt.Tooltip("run:N"), alt.Tooltip("metric:N"), alt.Tooltip("score_pct:Q", format=".1f"),
                                  alt.Tooltip("low_pct:Q", format=".1f"), alt.Tooltip("high_pct:Q", format=".1f")])
    return alt.layer(bars, points, width=300, height=alt.Step(26)).facet(
        facet=alt.Facet("metric:N", title=None, sort=["AUPRC", "Process", "Consistency", "Accuracy"]), columns=2,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(x="independent")))


def k_chart(frame: pl.DataFrame) -> AnyChart:
    """Each score against K per method, with its 95 % interval as a band of error bars."""
    x = alt.X("k:O", title="K (reviews seen)", axis=alt.Axis(labelAngle=0))
    color = alt.Color("method:N", title="method", scale=alt.Scale(scheme="tableau10"), legend=alt.Legend(orient="top"))
    line = alt.Chart().mark_line(point=True).encode(
        x=x, y=alt.Y("score_pct:Q", title="score (%)", scale=alt.Scale(zero=False)), color=color,
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("k:O"), alt.Tooltip("score_pct:Q", format=".1f"),
                 alt.Tooltip("low_pct:Q", format=".1f"),
                 alt.Tooltip("high_pct:Q", format=".1f")])
    err = alt.Chart().mark_rule(strokeWidth=2, opacity=0.6).encode(
        x=x, y=alt.Y("low_pct:Q", title="score (%)"), y2=alt.Y2("high_pct:Q"), color=color)
    return alt.layer(err, line, data=frame, width=300, height=200).facet(
        facet=alt.Facet("metric:N", title=None, sort=["AUPRC", "Process", "Consistency", "Accuracy"]), columns=2)
