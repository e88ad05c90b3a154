"""Page glue of the Ground truth page's restaurant section: the restaurant × K grid, the selected
restaurant's panel and every primitive at one K. A selection made anywhere here (a grid cell,
"Find a restaurant", a table row) picks the restaurant the panel shows and the grid outlines.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from core.ground_truth import k_label
from core.ground_truth import views as gt_views
from core.ground_truth.views import certainty, charts
from core.ground_truth.views.paging import PAGE_SIZES, Page
from core.ui import cache
from core.ui.gt_page import (
    K_AT,
    K_FLIPS,
    K_GRID,
    K_PAGE,
    K_PAGE_SIZE,
    K_PRIM_PAGE,
    K_REST,
    K_SEARCH,
    K_SORT,
    K_TABLE,
    K_TABLE_IDS,
    Choice,
)
from core.ui.text import safe
from core.workspace import Workspace


def _on_grid_select() -> None:
    picked = (st.session_state[K_GRID].selection or {}).get(charts.SELECTION) or []
    if picked:
        st.session_state[K_REST] = picked[0]["business_id"]
        st.session_state[K_AT] = picked[0]["k_label"]


def _on_table_select() -> None:
    rows = st.session_state[K_TABLE].selection.rows
    if rows:
        st.session_state[K_REST] = st.session_state[K_TABLE_IDS][rows[0]]


def _on_search(key: tuple, frame: pl.DataFrame, views: cache.FrameViews, rank_by: list[str] | None) -> None:
    """"Find a restaurant" selects the best match (the panel follows) and shows the first page of matches."""
    st.session_state[K_PAGE] = 1
    text = (st.session_state.get(K_SEARCH) or "").strip()
    if text:
        hits = cache.verdict_grid(key, frame, flips_only=False, sort=st.session_state.get(K_SORT) or gt_views.SORTS[0],
                                  search=text, rank_by=rank_by, views=views)
        if hits.height:
            st.session_state[K_REST] = hits["business_id"][0]


def _first_page() -> None:
    st.session_state[K_PAGE] = 1


def _controls(key: tuple, frame: pl.DataFrame, views: cache.FrameViews, rank_by: list[str] | None) -> None:
    g1, g2, g3, g4 = st.columns([1, 1, 2, 1], vertical_alignment="bottom")
    g1.toggle("Flips only", key=K_FLIPS, persist_state="session", on_change=_first_page,
              help="Only restaurants whose verdict changes with K.")
    g2.selectbox("Sort by", gt_views.SORTS, key=K_SORT, persist_state="session", on_change=_first_page)
    g3.text_input("Find a restaurant", key=K_SEARCH, persist_state="session", placeholder="name contains …",
                  on_change=_on_search, args=(key, frame, views, rank_by),
                  help="Selects the first match; the grid shows every match.")
    if st.session_state.get(K_PAGE_SIZE) not in PAGE_SIZES:
        st.session_state[K_PAGE_SIZE] = PAGE_SIZES[0]
    g4.selectbox("Rows per page", PAGE_SIZES, key=K_PAGE_SIZE, persist_state="session", on_change=_first_page,
                 format_func=lambda n: f"{n:,}")


def _pager(page: Page) -> None:
    """The page selector and "restaurants 1–30 of 150,000" (the page number was clamped before)."""
    p1, p2 = st.columns([1, 4], vertical_alignment="bottom")
    p1.number_input("Page", min_value=1, max_value=page.pages, step=1, key=K_PAGE)
    p2.caption(f"{page.caption()} · page {page.number:,} of {page.pages:,}")


def grid_section(ws: Workspace, dataset: str, frame: pl.DataFrame, choice: Choice,
                 key: tuple, views: cache.FrameViews, probs: pl.DataFrame | None = None,
                 probs_key: str = "") -> tuple[str, str | None]:
    """The grid (left: one page of the sorted, filtered restaurants) and the selected restaurant's panel
    (right); returns (business_id, judge link param). ``views``: ``cache.frame_views(key, frame,
    choice.scale)``; ``probs`` (key ``probs_key``): verdict probabilities that shade the cells
    (:mod:`core.ground_truth.views.certainty`)."""
    rank_by = None if choice.scored else list(choice.scale)  # a rule policy: "Highest score" ranks by verdict
    _controls(key, frame, views, rank_by)
    flips_only, sort = bool(st.session_state.get(K_FLIPS, False)), st.session_state.get(K_SORT) or gt_views.SORTS[0]
    search = st.session_state.get(K_SEARCH) or ""
    def page_of_grid(number: int, size: int) -> Page:
        return cache.grid_page(key, frame, flips_only=flips_only, sort=sort, search=search, rank_by=rank_by,
                               number=number, size=size, views=views)

    page = page_of_grid(int(st.session_state.get(K_PAGE) or 1), int(st.session_state[K_PAGE_SIZE]))
    st.session_state[K_PAGE] = page.number  # clamped before the widget is drawn
    if st.session_state.get(K_REST) not in views.names:  # the first of the sort order (the default one if none match)
        first = page if page.number == 1 else page_of_grid(1, 1)
        if not first.total:
            first = cache.grid_page(key, frame, flips_only=False, sort=gt_views.SORTS[0], search="", rank_by=None,
                                    number=1, size=1, views=views)
        st.session_state[K_REST] = first.rows["business_id"][0]
    selected = st.session_state[K_REST]
    shown = page.rows
    if selected not in shown["business_id"].to_list():  # the selection stays visible in the grid
        shown = pl.concat([shown, views.grid.filter(pl.col("business_id") == selected).select(shown.columns)])
    shown_names = dict(zip(shown["business_id"].to_list(), shown["name"].to_list(), strict=True))
    labels = [k_label(k) for k in choice.ks]
    if st.session_state.get(K_AT) not in labels:
        st.session_state[K_AT] = "50" if "50" in labels else labels[0]
    grid_col, detail_col = st.columns([5, 6], gap="large")
    with grid_col:
        _pager(page)
        if page.total == 0:
            st.info("No restaurant matches.")
        else:
            shown_ids = shown["business_id"].to_list()
            spec_key = ("grid", *key, tuple(shown_ids), choice.scored, probs_key)

            def _long() -> pl.DataFrame:
                long = gt_views.grid_long(frame, shown_ids, shown_names)
                return long if probs is None else certainty.grid_probability(long, probs)

            st.vega_lite_chart(cache.grid_chart_spec(spec_key, selected, lambda picked: charts.verdict_grid_chart(
                _long(), shown["name"].to_list(), selected=picked, verdicts=views.verdicts, scored=choice.scored)),
                key=K_GRID, width="stretch", on_select=_on_grid_select, selection_mode=charts.SELECTION)
            number = "number = score" if choice.scored else "no number (a rule policy has no score)"
            st.caption(f"{page.caption()} · colour and legend = verdict, {number}, "
                       "* = fewer reviews than K · the outlined row is the restaurant on the right. Click a cell.")
    with detail_col:
        judge_param = _detail(ws, dataset, frame, choice, list(shown_names), shown_names, views, labels, key)
    with st.expander("This page of the grid as a table (sortable)"):
        config = {"name": st.column_config.TextColumn("restaurant", pinned=True),
                  "path": st.column_config.TextColumn("verdict along K", width="large"),
                  "changes": st.column_config.NumberColumn("verdict changes"),
                  "max_score": st.column_config.NumberColumn("max score", format="%.2f")}
        config.update({c: st.column_config.NumberColumn(c.replace("K", "K=", 1), format="%.2f")
                       for c in page.rows.columns if c.startswith("K")})
        scores = [] if choice.scored else ["max_score", *(c for c in page.rows.columns if c.startswith("K"))]
        st.dataframe(shown.drop("business_id", *scores), hide_index=True, width="stretch", placeholder="—",
                     key="gt.grid_table", column_config=config)
    return selected, judge_param


def _detail(ws: Workspace, dataset: str, frame: pl.DataFrame, choice: Choice, order: list[str],
            names: dict[str, str], views: cache.FrameViews, labels: list[str], key: tuple) -> str | None:
    r1, r2 = st.columns([3, 1])
    business_id = r1.selectbox("Restaurant", order, key=K_REST, persist_state="session",
                               format_func=lambda b: names.get(b, b),
                               help="The restaurants of the grid's page (and the one selected); "
                                    "'Find a restaurant' reaches any other.")
    r2.selectbox("K for the tables", labels, key=K_AT, persist_state="session")
    series = cache.score_series(key, frame, business_id)
    st.caption(safe("Verdict along K: {p}", p=views.paths[business_id]))
    if business_id in views.short_stored:
        st.caption(f"{views.short_stored[business_id]:,} reviews stored: K above that uses them all.")
    chosen = choice.chosen
    if choice.scored:
        st.vega_lite_chart(cache.chart_spec(("score", *key, business_id), lambda: charts.score_chart(
            series, gt_views.score_thresholds(chosen.definition, choice.ks, chosen.constants), verdicts=choice.scale)),
            key="gt.score_chart", width="stretch")
        st.caption("Dashed: the score thresholds of the verdicts (≥ and ≤ rules; a line through the K points "
                   "where the threshold differs by K).")
    else:
        st.info("A rule policy has no score: the first rule whose conditions hold at K gives the verdict. The "
                "trace shows each condition's count against its threshold at that K.", icon=":material/rule:")
    judge_param = None if choice.judge == choice.status.gt_judge else choice.judge
    st.markdown("**Open the trace**: every number of this restaurant back to its reviews")
    link_cols = st.columns(min(3, series.height))
    for i, row in enumerate(series.iter_rows(named=True)):
        link_cols[i % len(link_cols)].page_link(
            "app_pages/trace.py", icon=":material/account_tree:",
            label=f"K={row['k_label']} · " + (f"{row['score']:.2f}" if choice.scored else str(row["verdict"])),
            query_params=gt_views.trace_params(dataset, choice.task, choice.definition, row["k"], business_id,
                                               judge_param))
    return judge_param


def primitives_section(frame: pl.DataFrame, choice: Choice, dataset: str, judge_param: str | None,
                       key: tuple, views: cache.FrameViews, probs: pl.DataFrame | None = None,
                       probs_key: str = "") -> None:
    """Every restaurant at the chosen K with every primitive (and P(verdict) from ``probs``);
    selecting a row selects the restaurant."""
    k_at = gt_views.parse_ks([st.session_state[K_AT]])[0]
    # the rows at one K do not depend on the other K chosen (each K is computed on its own), so the
    # table is keyed without them: adding a K leaves the table of K=50 cached
    frame_key, judge, definition, _ks = key
    table_key: tuple = (frame_key, judge, definition, k_at, choice.scored, dataset, choice.task, judge_param)
    if st.session_state.get(K_PRIM_PAGE) is None:
        st.session_state[K_PRIM_PAGE] = 1
    page = cache.primitives_page(table_key, frame, choice, dataset, k_at, judge_param,
                                 int(st.session_state[K_PRIM_PAGE]), PAGE_SIZES[2])
    st.session_state[K_PRIM_PAGE] = page.number
    ids = page.rows["business_id"].to_list()
    table = page.rows.with_columns(pl.Series("trace", gt_views.trace_urls(dataset, choice.task, choice.definition,
                                                                        k_at, ids, judge_param), dtype=pl.String))
    table_key = (*table_key, page.number)
    if probs is not None:
        table_key = (*table_key, probs_key)
        table = certainty.with_probability(table, probs, k_at)
    st.session_state[K_TABLE_IDS] = table["business_id"].to_list()
    p1, p2 = st.columns([1, 4], vertical_alignment="bottom")
    p1.number_input("Page", min_value=1, max_value=page.pages, step=1, key=K_PRIM_PAGE)
    p2.caption(f"{page.caption()}, highest score first · page {page.number:,} of {page.pages:,}")
    config: dict[str, Any] = {"trace": st.column_config.LinkColumn("trace", display_text="open trace", width="small"),
              "score": st.column_config.NumberColumn(format="%.2f"),
              "P(verdict)": st.column_config.ProgressColumn("P(verdict)", format="%.3f", min_value=0.0, max_value=1.0,
                                                            help="The verdict's probability under the judge's measured "
                                                                 "error (the source picked above the grid)."),
              "other verdicts": st.column_config.TextColumn("other verdicts", width="medium"),
              "name": st.column_config.TextColumn("restaurant", pinned=True)}
    for column, dtype in table.schema.items():
        if column not in config and column not in ("verdict", "business_id"):
            config[column] = (st.column_config.NumberColumn(gt_views.label(column), format="%.2f")
                              if dtype == pl.Float64 else gt_views.label(column))
    st.dataframe(cache.table_data(("primitives", *table_key), lambda: table.drop("business_id")), hide_index=True,
                 width="stretch", placeholder="—", height=360, key=K_TABLE, on_select=_on_table_select,
                 selection_mode="single-row", column_config=config)
    chosen = str(st.session_state.get(K_REST) or "")
    names = views.names
    st.caption(safe("Selected: {name} (shown in the panel above and outlined in the grid). Select a row to pick "
                    "another restaurant; 'open trace' opens its trace in a new tab.", name=names.get(chosen, "")))
