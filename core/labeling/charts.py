"""Altair charts of the labeling pages. Functions return ``alt.Chart``; nothing here calls ``st``."""

from __future__ import annotations

import json

import altair as alt
import polars as pl

_SCALE = alt.Scale(domain=[-1, 1], nice=False)
AnyChart = alt.Chart | alt.LayerChart | alt.FacetChart


def coverage_chart(coverage: pl.DataFrame, *, target: int) -> alt.Chart:
    """Items by number of raters (``n_raters, n_items`` and optionally ``n_complete``): complete
    items (all the raters they need) and items that still need raters, stacked."""
    if "n_complete" not in coverage.columns:
        coverage = coverage.with_columns(
            pl.when(pl.col("n_raters") >= target).then(pl.col("n_items")).otherwise(0).alias("n_complete"))
    data = pl.concat([
        coverage.select("n_raters", pl.col("n_complete").alias("n"), pl.lit("complete").alias("status")),
        coverage.select("n_raters", (pl.col("n_items") - pl.col("n_complete")).alias("n"),
                        pl.lit("needs raters").alias("status")),
    ]).filter(pl.col("n") > 0)
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("n_raters:O", title="raters per item", scale=alt.Scale(domain=coverage["n_raters"].to_list())),
            y=alt.Y("n:Q", title="items", stack=True),
            color=alt.Color("status:N", scale=alt.Scale(domain=["needs raters", "complete"],
                                                        range=["#adb5bd", "#3b5bdb"]), title=None),
            tooltip=[alt.Tooltip("n_raters:O", title="raters"), alt.Tooltip("status:N"),
                     alt.Tooltip("n:Q", title="items")],
        )
        .properties(height=220)
    )


def rater_values_chart(raters: list[str], scores: list[float], *, labels: tuple[str, str, str]) -> AnyChart:
    """Each rater's value of one item on the -1 … +1 scale (one row per rater); the axis names the
    scale labels at -1, 0 and +1."""
    points = pl.DataFrame({"rater": raters, "score": scores})
    neg, zero, pos = (json.dumps(f"{mark} {label}") for mark, label in zip(("−1", "0", "+1"), labels, strict=True))
    expr = (f"datum.value == -1 ? {neg} : datum.value == 0 ? {zero} : "
            f"datum.value == 1 ? {pos} : format(datum.value, '+.1f')")
    x = alt.X("score:Q", scale=_SCALE, title=None,
              axis=alt.Axis(values=[-1, -0.5, 0, 0.5, 1], labelExpr=expr, labelFlush=True, labelLimit=400, grid=True))
    base = alt.Chart(points).encode(x=x, y=alt.Y("rater:N", title=None, sort=None))
    dots = base.mark_circle(size=170, opacity=0.9, color="#3b5bdb").encode(
        tooltip=[alt.Tooltip("rater:N"), alt.Tooltip("score:Q", format="+.2f")])
    values = base.mark_text(dx=16, fontSize=11, align="left", color="#495057").encode(
        text=alt.Text("score:Q", format="+.2f"))
    return alt.layer(dots, values, height=36 * max(1, len(raters)) + 50)


def pair_scatter_chart(first: pl.DataFrame, rater_a: str, rater_b: str) -> AnyChart:
    """Scores of two raters on the items both rated, with the line of perfect agreement."""
    a = first.filter(pl.col("rater") == rater_a).select("item_id", pl.col("score").alias("a"))
    b = first.filter(pl.col("rater") == rater_b).select("item_id", pl.col("score").alias("b"))
    pairs = a.join(b, on="item_id")
    diagonal = alt.Chart(pl.DataFrame({"a": [-1.0, 1.0], "b": [-1.0, 1.0]})).mark_line(
        color="#adb5bd", strokeDash=[4, 4]).encode(x=alt.X("a:Q", scale=_SCALE), y=alt.Y("b:Q", scale=_SCALE))
    dots = alt.Chart(pairs).mark_circle(size=70, opacity=0.6, color="#3b5bdb").encode(
        x=alt.X("a:Q", scale=_SCALE, title=rater_a), y=alt.Y("b:Q", scale=_SCALE, title=rater_b),
        tooltip=[alt.Tooltip("item_id:Q"), alt.Tooltip("a:Q", title=rater_a, format="+.2f"),
                 alt.Tooltip("b:Q", title=rater_b, format="+.2f")])
    return alt.layer(diagonal, dots, height=320, width=320)


def rater_bias_chart(bias: pl.DataFrame) -> AnyChart:
    """Mean signed deviation from co-raters per rater with its CI, on an axis centred at 0
    (0 = rates like the others; right of 0 = rates higher)."""
    data = bias.fill_nan(None)
    reach = max([abs(v) for c in ("ci_lo", "ci_hi", "mean_signed_deviation") for v in bias[c].drop_nans().drop_nulls()]
                or [0.1])
    x_scale = alt.Scale(domain=[-1.1 * reach, 1.1 * reach], nice=False)
    y = alt.Y("rater:N", title=None, sort=None, scale=alt.Scale(paddingOuter=0.4),
              axis=alt.Axis(labelLimit=240))  # whole codes, "(retired)" included
    zero = alt.Chart(pl.DataFrame({"x": [0.0]})).mark_rule(color="#adb5bd").encode(
        x=alt.X("x:Q", scale=x_scale))
    bars = alt.Chart(data).mark_rule(strokeWidth=2, color="#3b5bdb").encode(
        y=y, x=alt.X("ci_lo:Q", scale=x_scale, title="mean signed deviation from co-raters (95% CI)"), x2=alt.X2("ci_hi:Q"))
    dots = alt.Chart(data).mark_circle(size=90, color="#3b5bdb").encode(
        y=y, x=alt.X("mean_signed_deviation:Q", scale=x_scale),
        tooltip=[alt.Tooltip("rater:N"), alt.Tooltip("n:Q"), alt.Tooltip("mean_signed_deviation:Q", format="+.3f"),
                 alt.Tooltip("ci_lo:Q", format="+.3f"), alt.Tooltip("ci_hi:Q", format="+.3f")])
    return alt.layer(zero, bars, dots, height=40 * max(1, len(data)) + 70)


def interval_dots_chart(frame: pl.DataFrame, *, value: str, lo: str, hi: str, title: str,
                        centre: float | None = 0.0) -> AnyChart:
    """One row per rater: ``value`` as a dot with its interval [``lo``, ``hi``] as a line, and a
    reference rule at ``centre`` (0 for leniency; None for none)."""
    data = frame.fill_nan(None)
    y = alt.Y("rater:N", title=None, sort=None, scale=alt.Scale(paddingOuter=0.4), axis=alt.Axis(labelLimit=240))
    layers: list[alt.Chart] = []
    if centre is not None:
        layers.append(alt.Chart(pl.DataFrame({"x": [centre]})).mark_rule(color="#adb5bd").encode(x="x:Q"))
    layers.append(alt.Chart(data).mark_rule(strokeWidth=2, color="#3b5bdb").encode(
        y=y, x=alt.X(f"{lo}:Q", title=title), x2=alt.X2(f"{hi}:Q")))
    layers.append(alt.Chart(data).mark_circle(size=90, color="#3b5bdb").encode(
        y=y, x=alt.X(f"{value}:Q"),
        tooltip=[alt.Tooltip("rater:N"), alt.Tooltip("n:Q"), alt.Tooltip(f"{value}:Q", format="+.3f"),
                 alt.Tooltip(f"{lo}:Q", format="+.3f"), alt.Tooltip(f"{hi}:Q", format="+.3f")]))
    return alt.layer(*layers, height=40 * max(1, len(data)) + 70)
