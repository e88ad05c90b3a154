"""The Results page's Restaurants tab: one run's samples filtered, sorted and shown a page at a time
(a run of 150,000 samples draws 1,000 rows and offers the restaurants of that page), and the
drilldown of the restaurant picked (issue 27)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core import ui
from core.datasets import browse
from core.runs import view as rv
from core.ui import results as ur
from core.ui.data_page import pager
from core.workspace import Workspace

K_CORRECT, K_GT, K_ERR, K_REST = "results.correct", "results.gt", "results.errors", "results.business_id"
K_PAGE, K_SEEN = "results.sample_page", "results.sample_filters"
PAGE_SIZE = 1000
NUM = st.column_config.NumberColumn


@st.cache_resource(max_entries=16, show_spinner=False)
def filtered(stamp: ur.Stamp, which: str, gts: tuple[str, ...], errors_only: bool) -> pl.DataFrame:
    """The run's samples, wrong ones first (then by GT verdict and name: sorted once, kept with the
    run's view), filtered: ``which`` all, incorrect or correct; ``gts`` the GT verdicts kept (none:
    all); ``errors_only`` samples with an error (read-only: never mutate it)."""
    table = rv.samples_shown(ur.run_view(stamp))
    if which != "all":
        table = table.filter(pl.col("correct") == (which == "correct"))
    if gts:
        table = table.filter(pl.col("gt_verdict").is_in(gts))
    if errors_only:
        table = table.filter(pl.col("error") != "")
    return table


def _page(table: pl.DataFrame, filters: tuple) -> browse.Page:
    """The page of ``table`` kept in the session (back to the first when the filters change)."""
    if st.session_state.get(K_SEEN) != filters:
        st.session_state[K_SEEN], st.session_state[K_PAGE] = filters, 0
    n_pages = max(1, -(-table.height // PAGE_SIZE))
    page = min(max(int(st.session_state.get(K_PAGE) or 0), 0), n_pages - 1)
    st.session_state[K_PAGE] = page
    return browse.Page(table.slice(page * PAGE_SIZE, PAGE_SIZE), table.height, page, PAGE_SIZE)


def restaurants_tab(ws: Workspace, stamp: ur.Stamp, scale: list[str]) -> None:
    """Filters, the page of samples, a pager, the restaurant picker (this page's) and its drilldown."""
    f1, f2, f3 = st.columns([1, 2, 1])
    which = f1.selectbox("Show", ["all", "incorrect", "correct"], key=K_CORRECT)
    gts = tuple(f2.multiselect("GT verdict", scale, key=K_GT))
    errors_only = f3.checkbox("errors only", key=K_ERR)
    table = filtered(stamp, which, gts, errors_only)
    page = _page(table, (stamp, which, gts, errors_only))
    st.dataframe(page.rows, hide_index=True, placeholder="—", width="stretch", height=240, column_config={
        "business_id": None, "gt_verdict": "GT verdict", "verdict": "method verdict",
        "risk_score": NUM("risk score", format="%.2f"), "cost_usd": NUM("cost", format="$%.4f")})
    if page.n_pages > 1:
        pager(K_PAGE, page, "restaurants")
    ids = page.rows["business_id"].to_list()
    if not ids:
        st.info("No restaurant matches these filters.")
        return
    names = dict(zip(ids, page.rows["name"].to_list(), strict=True))
    if st.session_state.get(K_REST) not in ids:
        st.session_state[K_REST] = ids[0]
    bid = st.selectbox("Restaurant" + (" (of this page)" if page.n_pages > 1 else ""), ids, key=K_REST,
                       format_func=lambda b: f"{names[b]} ({b})")
    ur.show_drilldown(stamp, bid, ui.database(ws), str(ws.root))
