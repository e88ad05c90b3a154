"""Altair charts of the ground-truth pages. Functions return ``alt.Chart``; nothing here calls ``st``.

Verdicts have one colour everywhere (:data:`VERDICT_HEX`); K is an ordinal axis in ascending
order with "all" last, so K = 25, 50, 100, 200 read left to right.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import polars as pl

from core.ground_truth import VERDICTS

VERDICT_HEX = {"Low Risk": "#2f9e44", "High Risk": "#f08c00", "Critical Risk": "#e03131"}
VERSION_HEX = {"committed": "#868e96", "what-if": "#3b5bdb"}
VERDICT_SCALE = alt.Scale(domain=list(VERDICTS), range=[VERDICT_HEX[v] for v in VERDICTS])
# Any other ordered scale: evenly spaced steps of one ordinal ramp, lowest verdict first (dark
# enough everywhere for the white score text of the grid cells; no good/bad meaning implied).
ORDINAL_RAMP = ("#862e9c", "#5f3dc4", "#364fc7", "#1971c2", "#0c8599", "#099268", "#2b8a3e")
SELECTION = "cell"  # name of the heat map's point selection (business_id, k_label)


def verdict_colors(verdicts: Sequence[str] | None = None) -> dict[str, str]:
    """Verdict → colour: the risk colours for Low/High/Critical Risk, else ordinal steps of
    :data:`ORDINAL_RAMP` in the scale's order.

    >>> verdict_colors(["Not Recommended", "Acceptable", "Recommended"])
    {'Not Recommended': '#862e9c', 'Acceptable': '#1971c2', 'Recommended': '#2b8a3e'}
    """
    scale = tuple(verdicts or VERDICTS)
    if set(scale) <= set(VERDICT_HEX):
        return {v: VERDICT_HEX[v] for v in scale}
    n, last = len(scale), len(ORDINAL_RAMP) - 1
    return {v: ORDINAL_RAMP[round(i * last / (n - 1)) if n > 1 else 0] for i, v in enumerate(scale)}


def _color_scale(verdicts: Sequence[str] | None) -> alt.Scale:
    if verdicts is None or tuple(verdicts) == VERDICTS:
        return VERDICT_SCALE
    colors = verdict_colors(verdicts)
    return alt.Scale(domain=list(colors), range=list(colors.values()))


def _k_sort(labels: Sequence[str]) -> list[str]:
    """K labels ascending, "all" last."""
    return sorted(set(labels), key=lambda s: (s == "all", int(s) if s.isdigit() else 0))


def _long_distribution(dist: pl.DataFrame) -> pl.DataFrame:
    """distribution_by_k columns (k, Low, High, Critical, total, or one per verdict) → k_label, verdict, count."""
    short = {v.split()[0]: v for v in VERDICTS}
    if not set(short) <= set(dist.columns):
        short = {c: c for c in dist.columns if c not in ("k", "total")}
    return dist.select(pl.col("k").cast(pl.Utf8).fill_null("all").alias("k_label"), *short).unpivot(
        index="k_label", variable_name="verdict", value_name="count"
    ).with_columns(pl.col("verdict").replace_strict(short))


def distribution_chart(dist: pl.DataFrame, verdicts: Sequence[str] | None = None) -> alt.Chart:
    """Verdict counts per K as grouped bars (√ scale so 2 of 100 stays visible), each bar labelled
    with its count; ``verdicts`` is the ordered scale (default Low/High/Critical Risk)."""
    data = _long_distribution(dist)
    order = _k_sort(data["k_label"].to_list())
    base = alt.Chart(data).encode(
        x=alt.X("k_label:N", sort=order, title="K (reviews seen)", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("verdict:N", sort=list(verdicts or VERDICTS)),
        y=alt.Y("count:Q", scale=alt.Scale(type="sqrt"), title="restaurants (√ scale)"),
        color=alt.Color("verdict:N", scale=_color_scale(verdicts), title=None, legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("k_label:N", title="K"), "verdict:N", alt.Tooltip("count:Q", title="restaurants")],
    )
    bars = base.mark_bar()
    labels = base.mark_text(dy=-7, fontSize=11).encode(text="count:Q", color=alt.value("#343a40"))
    return alt.layer(bars, labels).properties(height=260)


def verdict_grid_chart(long: pl.DataFrame, names: Sequence[str], verdicts: Sequence[str] | None = None) -> alt.Chart:
    """Restaurant × K heat map coloured by verdict with the score written in each cell and shown
    on hover. ``names`` gives the row order; clicking a cell selects it (selection ``cell``)."""
    order = _k_sort(long["k_label"].to_list())
    pick = alt.selection_point(name=SELECTION, fields=["business_id", "k_label"], on="click", clear="dblclick")
    base = alt.Chart(long).encode(
        x=alt.X("k_label:N", sort=order, title="K", axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("name:N", sort=list(names), title=None,
                axis=alt.Axis(labelLimit=240, labelOverlap=False, values=list(names), labelFontSize=11)),
    )
    cells = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color("verdict:N", scale=_color_scale(verdicts), title=None, legend=alt.Legend(orient="bottom")),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.45)),
        tooltip=["name:N", alt.Tooltip("k_label:N", title="K"), "verdict:N",
                 alt.Tooltip("score:Q", format=".2f", title="score")],
    ).add_params(pick)
    text = base.mark_text(fontSize=10, color="white").encode(text=alt.Text("score:Q", format=".1f"))
    return alt.layer(cells, text).properties(height=alt.Step(21), width=alt.Step(58))


def _threshold_layers(thresholds: Sequence[tuple[str, float]], *, dash: Sequence[int] = (4, 4),
                      verdicts: Sequence[str] | None = None) -> list[alt.Chart]:
    if not thresholds:
        return []
    scale = _color_scale(verdicts)
    rules = pl.DataFrame({"verdict": [v for v, _ in thresholds], "y": [float(s) for _, s in thresholds]})
    rules = rules.with_columns((pl.col("verdict") + " ≥ " + pl.col("y").round(2).cast(pl.Utf8)).alias("text"))
    base = alt.Chart(rules).encode(y="y:Q")
    line = base.mark_rule(strokeDash=list(dash), strokeWidth=1.5).encode(
        color=alt.Color("verdict:N", scale=scale, legend=None))
    text = base.mark_text(align="right", dx=-2, dy=-6, fontSize=10).encode(
        x=alt.value({"expr": "width"}), text="text:N", color=alt.Color("verdict:N", scale=scale, legend=None))
    return [line, text]


def score_chart(series: pl.DataFrame, thresholds: Sequence[tuple[str, float]], *, title: str = "",
                verdicts: Sequence[str] | None = None) -> alt.Chart:
    """One restaurant's score against K (points coloured by verdict) with the verdict thresholds."""
    order = _k_sort(series["k_label"].to_list())
    top = max([*series["score"].drop_nulls().to_list(), *(s for _, s in thresholds), 1.0]) * 1.15
    bottom = min([*series["score"].drop_nulls().to_list(), *(s for _, s in thresholds), 0.0]) * 1.15
    x = alt.X("k_label:N", sort=order, title="K (reviews seen)", axis=alt.Axis(labelAngle=0))
    y = alt.Y("score:Q", title="final score", scale=alt.Scale(domain=[bottom, top], nice=False))
    line = alt.Chart(series).mark_line(color="#495057").encode(x=x, y=y)
    points = alt.Chart(series).mark_circle(size=140, opacity=1).encode(
        x=x, y=y, color=alt.Color("verdict:N", scale=_color_scale(verdicts), title=None, legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("k_label:N", title="K"), alt.Tooltip("score:Q", format=".2f"), "verdict:N"])
    labels = alt.Chart(series).mark_text(dy=-12, fontSize=11).encode(
        x=x, y=y, text=alt.Text("score:Q", format=".2f"))
    layers = [*_threshold_layers(thresholds, verdicts=verdicts), line, points, labels]
    return alt.layer(*layers).properties(height=260, title=title).resolve_scale(color="shared")


def whatif_distribution_chart(compare: pl.DataFrame) -> alt.Chart:
    """Verdict counts per K, committed vs what-if side by side, one panel per verdict
    (independent y scales, so a move of one restaurant shows)."""
    order = _k_sort(compare["k_label"].to_list())
    base = alt.Chart(compare).encode(
        x=alt.X("k_label:N", sort=order, title="K", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("version:N", sort=list(VERSION_HEX)),
        y=alt.Y("count:Q", title="restaurants"),
        color=alt.Color("version:N", scale=alt.Scale(domain=list(VERSION_HEX), range=list(VERSION_HEX.values())),
                        title=None, legend=alt.Legend(orient="top")),
        tooltip=["version:N", alt.Tooltip("k_label:N", title="K"), "verdict:N", "count:Q"],
    )
    layered = alt.layer(base.mark_bar(), base.mark_text(dy=-6, fontSize=10, color="#343a40").encode(text="count:Q"))
    return layered.properties(height=190, width=125).facet(
        column=alt.Column("verdict:N", sort=list(VERDICTS), title=None)
    ).resolve_scale(y="independent")


def whatif_score_chart(committed: pl.DataFrame, whatif: pl.DataFrame,
                       thresholds: Sequence[tuple[str, float]],
                       whatif_thresholds: Sequence[tuple[str, float]] | None = None) -> alt.Chart:
    """One restaurant's score against K, committed vs what-if, with both sets of thresholds
    (the what-if ones dotted when they differ)."""
    data = pl.concat([committed.with_columns(pl.lit("committed").alias("version")),
                      whatif.with_columns(pl.lit("what-if").alias("version"))], how="diagonal_relaxed")
    order = _k_sort(data["k_label"].to_list())
    extra = list(whatif_thresholds or [])
    top = max([*data["score"].drop_nulls().to_list(), *(s for _, s in [*thresholds, *extra]), 1.0]) * 1.15
    x = alt.X("k_label:N", sort=order, title="K", axis=alt.Axis(labelAngle=0))
    y = alt.Y("score:Q", title="final score", scale=alt.Scale(domain=[0, top], nice=False))
    color = alt.Color("version:N", scale=alt.Scale(domain=list(VERSION_HEX), range=list(VERSION_HEX.values())),
                      title=None, legend=alt.Legend(orient="top"))
    lines = alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=80)).encode(
        x=x, y=y, color=color, tooltip=["version:N", alt.Tooltip("k_label:N", title="K"),
                                        alt.Tooltip("score:Q", format=".2f"), "verdict:N"])
    layers = [*_threshold_layers(thresholds)]
    if extra and list(extra) != list(thresholds):
        layers += _threshold_layers(extra, dash=(1, 3))
    return alt.layer(*layers, lines).properties(height=240).resolve_scale(color="independent")
