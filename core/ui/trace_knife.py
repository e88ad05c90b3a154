"""Page glue of the Trace page's Knife edge tab (issue 28): how close one restaurant's verdict is
to each threshold, and the smallest set of judgment changes that would flip it, with the reviews."""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.ground_truth import views as gt_views
from core.ground_truth.views.certainty import flip_rows, threshold_rows
from core.ui import audit_cache
from core.ui.text import safe
from core.ui.trace_page import Trace, badge

K_DEEP = "trace.knife_deep"


def _edge(t: Trace, deep: bool) -> dict[str, Any] | None:
    try:
        return audit_cache.knife_edge(t.ws, t.dataset, t.task, t.judge, t.business_id, t.definition, t.k_value,
                                      deep=deep)
    except (WorkbenchError, ValueError) as exc:
        st.error(safe("No knife edge for this restaurant: {e}", e=str(exc)))
        return None


def _summary(t: Trace, edge: dict[str, Any]) -> None:
    if edge["smallest"] is None:
        st.success(safe("No set of up to {n} judgment change(s) flips this verdict at K={k}: it is not on a knife "
                        "edge.", n=edge["searched"], k=t.k_text), icon=":material/verified:")
        return
    n = edge["smallest"]
    reach = " or ".join(badge(v, t.scale) for v, changes in edge["flips"].items() if len(changes) == n)
    st.markdown(safe("**Knife edge:** {n} judgment change{s} would make it ", n=n, s="" if n == 1 else "s") + reach
                + safe(" ({c} single changes considered; every set of up to {m} tried).", c=edge["candidates"],
                       m=edge["searched"]))


def _review(card: gt_views.ReviewCard, changes: pl.DataFrame) -> None:
    with st.container(border=True):
        st.markdown(safe("**{h}**", h=card.header()) + (safe("  \n:gray[review {r}]", r=card.review_id)
                                                         if card.review_id else ""))
        for row in changes.iter_rows(named=True):
            st.markdown(safe("- to reach {v}: {f} {j} → **{w}**", v=row["flips to"], f=row["field"],
                             j=row["judged"] or "(none)", w=row["would be"]))
        if card.text:
            st.html(gt_views.highlight_html(card.text, card.excerpt))
        else:
            st.caption("No full text stored for this review. Judge's excerpt:")
            st.text(card.excerpt or "(no excerpt)")


def knife_tab(t: Trace, trace_root: Any) -> None:
    """The verdict's thresholds with their margins, the smallest flips and the reviews they change."""
    st.caption(safe("At K={k}: a judgment change sets one judged review's field to another allowed value (human "
                    "overrides are never changed). Margin: how far each condition is from its threshold (positive: "
                    "holds with that much to spare; negative: that much short).", k=t.k_text))
    deep = st.toggle("Every other verdict", key=K_DEEP,
                     help="Off: stop at the smallest flip. On: search on (up to 3 changes) for each other verdict.")
    edge = _edge(t, deep)
    if edge is None:
        return
    st.markdown(safe("Verdict at K={k}: ", k=t.k_text) + badge(edge["verdict"], t.scale))
    st.dataframe(threshold_rows(edge), hide_index=True, width="stretch",
                 column_config={"value": st.column_config.NumberColumn(format="%.3f"),
                                "threshold": st.column_config.NumberColumn(format="%.3f"),
                                "margin": st.column_config.NumberColumn(format="%+.3f")})
    _summary(t, edge)
    flips = flip_rows(edge)
    if flips.is_empty():
        return
    st.dataframe(flips, hide_index=True, width="stretch",
                 column_config={"idx": st.column_config.NumberColumn(format="%d", width="small")})
    st.markdown("**The reviews these changes touch**")
    cards = {c.idx: c for c in gt_views.review_cards(trace_root, include_neutral=True)}
    for idx in flips["idx"].unique(maintain_order=True).to_list():
        card = cards.get(idx)
        if card is None:
            st.caption(safe("idx {i}: not among this trace's reviews at K={k}.", i=idx, k=t.k_text))
            continue
        _review(card, flips.filter(pl.col("idx") == idx))
