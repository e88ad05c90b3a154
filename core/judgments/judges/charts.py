"""Altair charts of the judge comparison. Functions return ``alt.Chart``; nothing here calls ``st``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import polars as pl


def confusion_heatmap(matrix: Sequence[Sequence[int]], labels: Sequence[str], *, a: str, b: str,
                      title: str = "") -> alt.LayerChart:
    """A confusion matrix as a heatmap: rows judge ``a``, columns judge ``b``, each cell's count written in it.

    The diagonal (agreement) is outlined so disagreements stand out whatever the counts.
    """
    rows = [{"a": la, "b": lb, "n": int(matrix[i][j]), "agree": i == j}
            for i, la in enumerate(labels) for j, lb in enumerate(labels)]
    data = pl.DataFrame(rows)
    order = list(labels)
    base = alt.Chart(data).encode(
        x=alt.X("b:N", sort=order, title=b, axis=alt.Axis(labelAngle=-30, labelOverlap=False)),
        y=alt.Y("a:N", sort=order, title=a, axis=alt.Axis(labelOverlap=False)),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("n:Q", scale=alt.Scale(scheme="blues", type="symlog"), legend=None),
        stroke=alt.StrokeValue(**alt.condition("datum.agree", alt.value("#495057"), alt.value(None))),
        tooltip=[alt.Tooltip("a:N", title=a), alt.Tooltip("b:N", title=b), alt.Tooltip("n:Q", title="reviews")],
    )
    text = base.mark_text(fontSize=12).encode(
        text=alt.Text("n:Q"),
        color=alt.ColorValue(**alt.condition("datum.n > 50", alt.value("white"), alt.value("#212529"))),
    )
    return alt.LayerChart(layer=[cells, text], title=title, height=34 * len(labels))


def verdict_agreement_chart(verdicts: Sequence[dict[str, Any]]) -> alt.Chart:
    """Verdict agreement (%) against K, one line per formula or policy (``compare_judges()['verdicts']``)."""
    rows = [{"definition": v["definition"], "K": "all" if v["k"] is None else str(v["k"]),
             "order": 10**9 if v["k"] is None else v["k"],
             "agreement": None if v["verdict_agreement"] is None else 100 * v["verdict_agreement"],
             "differ": len(v["differing"])} for v in verdicts]
    data = pl.DataFrame(rows)
    k_order = [r["K"] for r in sorted(rows, key=lambda r: r["order"])]
    seen = [r["agreement"] for r in rows if r["agreement"] is not None]
    floor = max(0, 5 * int(min(seen, default=100) // 5) - 5)  # a flat 100 % still gets a readable axis
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("K:O", sort=list(dict.fromkeys(k_order)), title="K (reviews seen)", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("agreement:Q", title="agreement %", scale=alt.Scale(domain=[floor, 100]),
                    axis=alt.Axis(format=".0f")),
            color=alt.Color("definition:N", title="formula / policy",
                            legend=alt.Legend(orient="top") if len({r["definition"] for r in rows}) > 1 else None),
            tooltip=[alt.Tooltip("definition:N", title="formula / policy"), alt.Tooltip("K:O"),
                     alt.Tooltip("agreement:Q", format=".1f", title="agreement (%)"),
                     alt.Tooltip("differ:Q", title="restaurants that differ")],
        )
        .properties(height=220)
    )
