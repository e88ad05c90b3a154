"""Altair charts of the ground-truth pages. Functions return ``alt.Chart``; nothing here calls ``st``.

Verdicts have one colour everywhere (:data:`VERDICT_HEX`); K is an ordinal axis in ascending
order with "all" last, so K = 25, 50, 100, 200 read left to right.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import polars as pl

from core.ground_truth import VERDICTS

# Colour-blind-safe ordinal ramp (no red/green pair): blue -> amber -> wine, differing in lightness
# too, so the order reads in greyscale. Every verdict colour of every page comes from verdict_palette.
_RAMP = ("#3a6fb0", "#e3a13b", "#8c1d5a")
# Streamlit's named badge colours (markdown badges take names, not hex); green is left out on purpose.
_BADGE_RGB = {"blue": (28, 131, 225), "violet": (128, 61, 245), "orange": (255, 140, 0), "red": (255, 43, 43)}
VERSION_HEX = {"committed": "#868e96", "what-if": "#3b5bdb"}
SELECTION = "cell"  # name of the heat map's point selection (business_id, k_label)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _mix(a: str, b: str, t: float) -> str:
    ra, rb = _rgb(a), _rgb(b)
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ra, rb, strict=True))


def verdict_palette(verdicts: Sequence[str]) -> dict[str, str]:
    """Ordinal, colour-blind-safe colours for an ordered verdict scale (mildest first).

    Any number of verdicts: the colours are spread evenly along a blue → amber → wine ramp, so
    the order shows in hue and in lightness and no red/green pair appears. Pages label every
    colour with its verdict as well.

    >>> verdict_palette(["Low Risk", "High Risk", "Critical Risk"])
    {'Low Risk': '#3a6fb0', 'High Risk': '#e3a13b', 'Critical Risk': '#8c1d5a'}
    >>> verdict_palette(["No", "Yes"])
    {'No': '#3a6fb0', 'Yes': '#8c1d5a'}
    >>> len(set(verdict_palette([str(i) for i in range(7)]).values()))
    7
    """
    names = list(dict.fromkeys(verdicts))
    if not names:
        return {}
    if len(names) == 1:
        return {names[0]: _RAMP[0]}
    out = {}
    for i, name in enumerate(names):
        pos = i / (len(names) - 1) * (len(_RAMP) - 1)
        j = min(int(pos), len(_RAMP) - 2)
        out[name] = _mix(_RAMP[j], _RAMP[j + 1], pos - j)
    return out


def text_colour(background: str) -> str:
    """Black or white, whichever reads better on ``background`` (a ``#rrggbb`` colour).

    >>> text_colour("#e3a13b"), text_colour("#8c1d5a")
    ('#1f1f1f', '#ffffff')
    """
    r, g, b = _rgb(background)
    return "#1f1f1f" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#ffffff"


def verdict_badges(verdicts: Sequence[str]) -> dict[str, str]:
    """Streamlit badge colour names (``:blue-badge[…]``) nearest to :func:`verdict_palette`, never green.

    >>> verdict_badges(["Low Risk", "High Risk", "Critical Risk"])
    {'Low Risk': 'blue', 'High Risk': 'orange', 'Critical Risk': 'red'}
    """
    def nearest(hex_colour: str) -> str:
        r, g, b = _rgb(hex_colour)
        return min(_BADGE_RGB, key=lambda n: sum((x - y) ** 2 for x, y in zip(_BADGE_RGB[n], (r, g, b), strict=True)))

    return {v: nearest(c) for v, c in verdict_palette(verdicts).items()}


def verdict_scale(verdicts: Sequence[str] = VERDICTS) -> alt.Scale:
    """The Altair colour scale of an ordered verdict list (from :func:`verdict_palette`)."""
    palette = verdict_palette(verdicts)
    return alt.Scale(domain=list(palette), range=list(palette.values()))


VERDICT_HEX = verdict_palette(VERDICTS)
VERDICT_SCALE = verdict_scale(VERDICTS)


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


def distribution_chart(dist: pl.DataFrame, verdicts: Sequence[str] | None = None) -> alt.TopLevelMixin:
    """Verdict counts per K as grouped bars (√ scale so 2 of 100 stays visible), each bar labelled
    with its count; ``verdicts`` is the ordered scale (default Low/High/Critical Risk)."""
    data = _long_distribution(dist)
    order = _k_sort(data["k_label"].to_list())
    base = alt.Chart(data).encode(
        x=alt.X("k_label:N", sort=order, title="K (reviews seen)", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("verdict:N", sort=list(verdicts or VERDICTS)),
        y=alt.Y("count:Q", scale=alt.Scale(type="sqrt"), title="restaurants (√ scale)"),
        color=alt.Color("verdict:N", scale=verdict_scale(verdicts or VERDICTS), title=None, legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("k_label:N", title="K"), alt.Tooltip("verdict:N"), alt.Tooltip("count:Q", title="restaurants")],
    )
    bars = base.mark_bar()
    labels = base.mark_text(dy=-7, fontSize=11).encode(text=alt.Text("count:Q"), color=alt.ColorValue("#343a40"))
    return alt.layer(bars, labels, height=260)


def verdict_grid_chart(long: pl.DataFrame, names: Sequence[str], *, selected: str | None = None,
                       verdicts: Sequence[str] = VERDICTS, scored: bool = True) -> alt.TopLevelMixin:
    """Restaurant × K heat map coloured by verdict with the score written in each cell and shown
    on hover. ``names`` gives the row order; clicking a cell selects it (selection ``cell``).

    The chart takes the width of its container whatever the number of K. A ``short`` column
    (True where the restaurant has fewer than K reviews) marks the cell with "*"; the row of
    ``selected`` (a business_id) is outlined. ``scored=False`` (a rule policy, whose score is
    always 0) writes no number in the cells. A ``p_verdict`` column (the probability of the cell's
    verdict under a judge's measured error) shades each cell: the less sure, the paler.
    """
    order = _k_sort(long["k_label"].to_list())
    palette = verdict_palette(verdicts)
    short = pl.col("short") if "short" in long.columns else pl.lit(False)
    data = long.with_columns(
        ((pl.col("score").round(1).cast(pl.Utf8) if scored else pl.lit("")) + pl.when(short).then(pl.lit("*")).otherwise(pl.lit(""))).alias("cell"),
        pl.col("verdict").replace_strict({v: text_colour(c) for v, c in palette.items()}, default="#1f1f1f").alias("ink"),
        (pl.col("business_id") == (selected or "")).alias("picked"),
        pl.when(short).then(pl.lit("fewer reviews than K")).otherwise(pl.lit("")).alias("note"),
    )
    pick = alt.selection_point(name=SELECTION, fields=["business_id", "k_label"], on="click", clear="dblclick")
    base = alt.Chart(data).encode(
        x=alt.X("k_label:N", sort=order, title="K", axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("name:N", sort=list(names), title=None,
                axis=alt.Axis(labelLimit=180, labelOverlap=False, values=list(names), labelFontSize=11)),
    )
    sure = "p_verdict" in long.columns  # P(verdict) under a judge's measured error: paler = less sure
    tooltip = [alt.Tooltip("name:N"), alt.Tooltip("k_label:N", title="K"), alt.Tooltip("verdict:N"),
               alt.Tooltip("score:Q", format=".2f", title="score"), alt.Tooltip("note:N", title=" ")]
    cells = base.mark_rect().encode(
        color=alt.Color("verdict:N", scale=verdict_scale(verdicts), title=None, legend=alt.Legend(orient="bottom", direction="vertical")),  # in a row, 3 labels overran a 4-K grid
        opacity=alt.OpacityValue(**alt.condition(pick, alt.value(1.0), alt.value(0.45))),
        fillOpacity=(alt.FillOpacity("p_verdict:Q", scale=alt.Scale(domain=[0, 1], range=[0.15, 1]), legend=None)
                     if sure else alt.FillOpacityValue(1)),
        stroke=alt.StrokeValue(**alt.condition("datum.picked", alt.value("#111111"), alt.value("white"))),
        strokeWidth=alt.StrokeWidthValue(**alt.condition("datum.picked", alt.value(2.5), alt.value(1))),
        tooltip=tooltip + ([alt.Tooltip("p_verdict:Q", format=".3f", title="P(verdict)")] if sure else []),
    ).add_params(pick)
    text = base.mark_text(fontSize=10).encode(text=alt.Text("cell:N"), color=alt.Color("ink:N", scale=None))
    return alt.layer(cells, text, height=alt.Step(21), width="container")


Thresholds = Sequence[tuple[str, float]] | pl.DataFrame


def _threshold_frame(thresholds: Thresholds) -> pl.DataFrame:
    """verdict, op, k_label, y, constant: a ``score_thresholds`` frame as is, or "score ≥" pairs."""
    if isinstance(thresholds, pl.DataFrame):
        return thresholds
    return pl.DataFrame({"verdict": [v for v, _ in thresholds], "op": ["≥"] * len(thresholds),
                         "k_label": [None] * len(thresholds), "y": [float(s) for _, s in thresholds],
                         "constant": [True] * len(thresholds)},
                        schema={"verdict": pl.String, "op": pl.String, "k_label": pl.String, "y": pl.Float64,
                                "constant": pl.Boolean})


def _threshold_layers(thresholds: Thresholds, *, dash: Sequence[int] = (4, 4),
                      verdicts: Sequence[str] | None = None, order: Sequence[str] = ()) -> list[alt.Chart]:
    """Dashed lines of the score thresholds: one rule across the chart for a threshold that is the
    same at every K ("verdict ≥ 8"), a line through each K for a per-K threshold ("verdict ≤ per K")."""
    frame = _threshold_frame(thresholds)
    if frame.height == 0:
        return []
    scale = verdict_scale(verdicts or VERDICTS)
    color = alt.Color("verdict:N", scale=scale, legend=None)
    layers: list[alt.Chart] = []
    const = frame.filter(pl.col("constant")).unique(["verdict", "op", "y"], maintain_order=True)
    if const.height:
        rules = const.with_columns((pl.col("verdict") + " " + pl.col("op") + " "
                                    + pl.col("y").round(2).cast(pl.Utf8)).alias("text"))
        base = alt.Chart(rules).encode(y=alt.Y("y:Q"))
        layers += [base.mark_rule(strokeDash=list(dash), strokeWidth=1.5).encode(color=color),
                   base.mark_text(align="right", dx=-2, dy=-6, fontSize=10).encode(
                       x=alt.XValue({"expr": "width"}), text=alt.Text("text:N"), color=color)]
    by_k = frame.filter(~pl.col("constant")).with_columns(
        (pl.col("verdict") + " " + pl.col("op") + " per K").alias("text"))
    if by_k.height:
        x = alt.X("k_label:N", sort=list(order) or None)
        base = alt.Chart(by_k).encode(x=x, y=alt.Y("y:Q"), detail=alt.Detail("text:N"))
        last = by_k.group_by("text", maintain_order=True).last()
        layers += [base.mark_line(strokeDash=list(dash), strokeWidth=1.5, point=alt.OverlayMarkDef(size=25)).encode(
                       color=color, tooltip=[alt.Tooltip("text:N"), alt.Tooltip("k_label:N", title="K"),
                                             alt.Tooltip("y:Q", format=".2f", title="threshold")]),
                   alt.Chart(last).mark_text(align="left", dx=6, dy=-6, fontSize=10).encode(
                       x=x, y=alt.Y("y:Q"), text=alt.Text("text:N"), color=color)]
    return layers


def score_chart(series: pl.DataFrame, thresholds: Thresholds, *, title: str = "",
                verdicts: Sequence[str] | None = None) -> alt.LayerChart:
    """One restaurant's score against K (points coloured by verdict) with the verdict thresholds:
    "score ≥" and "score ≤" pairs, or a ``gt_views.score_thresholds`` frame (per-K thresholds too)."""
    order = _k_sort(series["k_label"].to_list())
    ys = _threshold_frame(thresholds)["y"].to_list()
    top = max([*series["score"].drop_nulls().to_list(), *ys, 1.0]) * 1.15
    bottom = min([*series["score"].drop_nulls().to_list(), *ys, 0.0]) * 1.15
    x = alt.X("k_label:N", sort=order, title="K (reviews seen)", axis=alt.Axis(labelAngle=0))
    y = alt.Y("score:Q", title="final score", scale=alt.Scale(domain=[bottom, top], nice=False))
    line = alt.Chart(series).mark_line(color="#495057").encode(x=x, y=y)
    points = alt.Chart(series).mark_circle(size=140, opacity=1).encode(
        x=x, y=y, color=alt.Color("verdict:N", scale=verdict_scale(verdicts or VERDICTS), title=None, legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("k_label:N", title="K"), alt.Tooltip("score:Q", format=".2f"), alt.Tooltip("verdict:N")])
    labels = alt.Chart(series).mark_text(dy=-12, fontSize=11).encode(
        x=x, y=y, text=alt.Text("score:Q", format=".2f"))
    layers = [*_threshold_layers(thresholds, verdicts=verdicts, order=order), line, points, labels]
    return alt.LayerChart(layer=layers, height=260, title=title,
                          resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="shared")))


def whatif_distribution_chart(compare: pl.DataFrame, verdicts: Sequence[str] | None = None) -> alt.FacetChart:
    """Verdict counts per K, committed vs what-if side by side, one panel per verdict
    (independent y scales, so a move of one restaurant shows)."""
    order = _k_sort(compare["k_label"].to_list())
    base = alt.Chart(compare).encode(
        x=alt.X("k_label:N", sort=order, title="K", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("version:N", sort=list(VERSION_HEX)),
        y=alt.Y("count:Q", title="restaurants"),
        color=alt.Color("version:N", scale=alt.Scale(domain=list(VERSION_HEX), range=list(VERSION_HEX.values())),
                        title=None, legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("version:N"), alt.Tooltip("k_label:N", title="K"), alt.Tooltip("verdict:N"), alt.Tooltip("count:Q")],
    )
    layered = alt.LayerChart(layer=[base.mark_bar(), base.mark_text(dy=-6, fontSize=10, color="#343a40").encode(
        text=alt.Text("count:Q"))], height=190, width=125)
    return layered.facet(column=alt.Column("verdict:N", sort=list(verdicts or VERDICTS), title=None),
                         resolve=alt.Resolve(scale=alt.ScaleResolveMap(y="independent")))


def whatif_score_chart(committed: pl.DataFrame, whatif: pl.DataFrame, thresholds: Thresholds,
                       whatif_thresholds: Thresholds | None = None, verdicts: Sequence[str] | None = None) -> alt.LayerChart:
    """One restaurant's score against K, committed vs what-if, with both sets of thresholds
    (the what-if ones dotted when they differ)."""
    data = pl.concat([committed.with_columns(pl.lit("committed").alias("version")),
                      whatif.with_columns(pl.lit("what-if").alias("version"))], how="diagonal_relaxed")
    order = _k_sort(data["k_label"].to_list())
    a = _threshold_frame(thresholds)
    b = _threshold_frame(whatif_thresholds if whatif_thresholds is not None else [])
    ys = [*data["score"].drop_nulls().to_list(), *a["y"].to_list(), *b["y"].to_list()]
    top, bottom = max([*ys, 1.0]) * 1.15, min([*ys, 0.0]) * 1.15
    x = alt.X("k_label:N", sort=order, title="K", axis=alt.Axis(labelAngle=0))
    y = alt.Y("score:Q", title="final score", scale=alt.Scale(domain=[bottom, top], nice=False))
    color = alt.Color("version:N", scale=alt.Scale(domain=list(VERSION_HEX), range=list(VERSION_HEX.values())),
                      title=None, legend=alt.Legend(orient="top"))
    lines = alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=80)).encode(
        x=x, y=y, color=color, tooltip=[alt.Tooltip("version:N"), alt.Tooltip("k_label:N", title="K"),
                                        alt.Tooltip("score:Q", format=".2f"), alt.Tooltip("verdict:N")])
    layers = [*_threshold_layers(a, verdicts=verdicts, order=order)]
    if b.height and not b.equals(a):
        layers += _threshold_layers(b, dash=(1, 3), verdicts=verdicts, order=order)
    return alt.LayerChart(layer=[*layers, lines], height=240,
                          resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="independent")))
