"""The release's charts: Altair charts built from its figures (the same chart functions as the
app's pages where there is one), kept as Vega-Lite specs that the page draws with the Vega
JavaScript bundled beside it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import polars as pl

from core.ground_truth.compute import distribution_by_k
from core.ground_truth.views.charts import distribution_chart
from core.metrics import charts as rc
from core.metrics.views import HEADLINE_ROWS

SCALE = {name: factor for _label, name, _key, factor in HEADLINE_ROWS}
LABEL = {name: label for label, name, _key, _factor in HEADLINE_ROWS}
_ROWS = {"run": pl.String, "method": pl.String, "k": pl.Int64, "metric": pl.String, "score_pct": pl.Float64,
         "low_pct": pl.Float64, "high_pct": pl.Float64}


def spec(chart: Any) -> dict[str, Any]:
    """The chart's Vega-Lite spec (data inline), as the page embeds it."""
    out: dict[str, Any] = chart.to_dict(validate=False)
    return out


def gt_distribution(frame: pl.DataFrame, scale: Sequence[str]) -> dict[str, Any]:
    """Verdict counts per K of one definition (the Ground truth page's chart)."""
    return spec(distribution_chart(distribution_by_k(frame, tuple(scale)), tuple(scale)))


def _pct(x: Any, factor: float) -> float | None:
    return None if x is None else float(x) * factor


def score_rows(runs: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """run, method, K, metric and score with its interval (in %) of every run's headline scores."""
    rows = []
    for r in runs:
        for name, s in r["scores"].items():
            if s["value"] is None:
                continue
            rows.append({"run": f"{r['run_id']} ({r['method']}, K={r['k']})", "method": str(r["method"]), "k": r["k"],
                         "metric": LABEL[name], "score_pct": _pct(s["value"], SCALE[name]),
                         "low_pct": _pct(s["low"], SCALE[name]), "high_pct": _pct(s["high"], SCALE[name])})
    return pl.DataFrame(rows, schema=_ROWS)


def scores_chart(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each run's headline scores with their 95 % intervals (Results' comparison chart)."""
    return spec(rc.comparison_chart(score_rows(runs)))


def k_chart(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Each score against K per method (Results' score-against-K chart); None with a single K."""
    rows = score_rows([r for r in runs if isinstance(r.get("k"), int)])
    if rows["k"].n_unique() < 2:
        return None
    return spec(rc.k_chart(rows.drop("run")))


def paired_chart(comparisons: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each run's paired difference to its baseline with the 95 % interval, per metric (0 marked)."""
    rows = []
    for c in comparisons:
        for name, d in c["differences"].items():
            if d["difference"] is None:
                continue
            rows.append({"pair": f"{c['run']} − {c['baseline']}", "metric": LABEL[name],
                         "difference": _pct(d["difference"], SCALE[name]), "low": _pct(d["low"], SCALE[name]),
                         "high": _pct(d["high"], SCALE[name])})
    data = pl.DataFrame(rows, schema={"pair": pl.String, "metric": pl.String, "difference": pl.Float64,
                                      "low": pl.Float64, "high": pl.Float64})
    base = alt.Chart().encode(y=alt.Y("pair:N", title=None, axis=alt.Axis(labelLimit=320)))
    zero = alt.Chart().mark_rule(color="#adb5bd", strokeDash=[4, 4]).encode(x=alt.datum(0))
    bars = base.mark_rule(strokeWidth=2, color="#495057").encode(
        x=alt.X("low:Q", title="difference (points)"), x2=alt.X2("high:Q"))
    points = base.mark_circle(size=80, color="#c2255c", opacity=1).encode(
        x=alt.X("difference:Q"), tooltip=[alt.Tooltip("pair:N"), alt.Tooltip("difference:Q", format="+.1f"),
                                          alt.Tooltip("low:Q", format="+.1f"), alt.Tooltip("high:Q", format="+.1f")])
    chart = alt.layer(zero, bars, points, data=data, width=300, height=alt.Step(24)).facet(
        facet=alt.Facet("metric:N", title=None, sort=[r[0] for r in HEADLINE_ROWS]), columns=2,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(x="independent")))
    return spec(chart)
