"""Page glue of the Data page: the pager, the restaurant header and the review cards.

Names, cities and categories from the data go through :mod:`core.ui.text`; review texts through
:func:`core.datasets.review_text.review_html` (escaped, with search hits and keyword matches marked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import polars as pl
import streamlit as st

from core.datasets import browse
from core.datasets.db import Database
from core.datasets.review_text import REVIEW_CSS, review_html
from core.ground_truth import views as gt_views
from core.tasks import task_ids
from core.ui.text import safe, show
from core.workspace import Workspace

TRACE_KS = (25, 50, 100, 200)
K_SELECTED, K_TABLE, K_VPAGE = "data.business_id", "data.restaurant_table", "data.review_page"
K_SHOW_PAGE = "data.show_selected_page"  # set when a link picks the restaurant: the list opens at its page
JUDGMENT_BADGE = {"severe": "red", "moderate": "orange", "mild": "blue", "positive": "blue", "negative": "orange"}


def pager(key: str, page: browse.Page, label: str) -> None:
    """Previous / "label a–b of n" / Next for a paged list kept in ``st.session_state[key]``."""
    left, mid, right = st.columns([1, 2, 1], vertical_alignment="center")
    left.button("← Previous", key=f"{key}.prev", disabled=page.page <= 0,
                on_click=lambda: st.session_state.__setitem__(key, page.page - 1))
    mid.caption(f"{label} {page.page * page.page_size + 1 if page.total else 0:,}–"
                f"{min(page.total, (page.page + 1) * page.page_size):,} of {page.total:,} "
                f"(page {page.page + 1:,} of {page.n_pages:,})")
    right.button("Next →", key=f"{key}.next", disabled=page.page + 1 >= page.n_pages,
                 on_click=lambda: st.session_state.__setitem__(key, page.page + 1))


def select_restaurant(business_id: str) -> None:
    """Make ``business_id`` the selected restaurant: the detail panel shows it, the list ticks its row
    and the URL (``?business_id=``) links to it."""
    if st.session_state.get(K_SELECTED) != business_id:
        st.session_state[K_VPAGE] = 0
    st.session_state[K_SELECTED] = business_id
    st.query_params["business_id"] = business_id


def open_page_of(db: Database, dataset: str, rfilter: browse.RestaurantFilter, page_key: str, page_size: int) -> None:
    """Turn the restaurant list to the page holding the selected restaurant (if the filter lists it)."""
    selected = st.session_state.get(K_SELECTED)
    position = browse.restaurant_position(db, dataset, rfilter, selected) if selected else None
    if position is not None:
        st.session_state[page_key] = position // page_size


def _clicked(ids: list[str]) -> None:
    """A click on a row of the listed page (``ids`` in the order shown) selects that restaurant; a click
    that clears the tick keeps the selection (the tick comes back on the rerun)."""
    rows = st.session_state[K_TABLE].selection.rows
    if rows and rows[0] < len(ids):
        select_restaurant(ids[rows[0]])


def restaurant_table(rows: pl.DataFrame, selected: str | None, selected_name: str = "") -> None:
    """The page of restaurants with the selected one's row ticked, however it was chosen (a click,
    "Search by name", a ``?business_id=`` link).

    Streamlit ≥ 1.50 sets a dataframe's selection from Session State (``{"selection": {"rows": [i]}}``
    under its key, before the table is drawn); the tick is rewritten whenever it differs from the
    selected restaurant's position on this page, so a filter that moves the rows never leaves a stale
    tick on another restaurant.
    """
    ids = rows["business_id"].to_list()
    want = [ids.index(selected)] if selected in ids else []
    state = st.session_state.get(K_TABLE)
    if state is None or list(state["selection"]["rows"]) != want:
        st.session_state[K_TABLE] = {"selection": {"rows": want}}
    st.dataframe(
        rows.select("name", "stars", "n_reviews", "city"),  # categories: in the header and the filter
        key=K_TABLE, on_select=partial(_clicked, ids), selection_mode="single-row", hide_index=True,
        width="stretch", height=min(420, 38 + 35 * max(rows.height, 1)), placeholder="—",
        column_config={"name": st.column_config.TextColumn("restaurant", pinned=True, width=175),
                       "stars": st.column_config.NumberColumn(format="%.1f ★", width="small"),
                       "n_reviews": st.column_config.NumberColumn("reviews", width="small"),
                       "city": st.column_config.TextColumn(width="medium")},
    )
    if selected and selected not in ids:
        show(st.caption, "Shown on the right: {name}, which is not on this page of the list.", name=selected_name)
    elif want and want[0] >= 10:  # below the table's first screen: say where the tick is
        show(st.caption, "Selected: {name}, row {row} of this page (scroll the table to see its tick).",
             name=selected_name, row=want[0] + 1)


def stars_text(stars: Any) -> str:
    """Stars as 4.5 (one decimal), or "no stars".

    >>> stars_text(4), stars_text(None)
    ('★ 4.0', 'no stars')
    """
    return "no stars" if stars is None else f"★ {float(stars):.1f}"


def restaurant_header(info: dict[str, Any]) -> None:
    """Name, categories, city, stars, review count and id: every value shown as text."""
    show(st.subheader, "{name}", name=info["name"])
    where = ", ".join(str(p) for p in (info.get("city"), info.get("state")) if p)
    show(st.caption, "{cats} · {where} · {stars} · {n} reviews stored · id {bid}",
         cats=info.get("categories") or "no categories", where=where or "no city", stars=stars_text(info.get("stars")),
         n=f"{info.get('n_reviews') or 0:,}", bid=info["business_id"])


def _trace_k(idx: int) -> str:
    return next((str(k) for k in TRACE_KS if idx < k), "all")


def trace_formulas(ws: Workspace | None) -> dict[str, str]:
    """Each task's first formula or policy, in task order: what a review card's trace link opens
    (read once per page run, not once per card)."""
    return {task: gt_views.definitions(task, ws)[0] for task in task_ids(ws)}


def review_card(review: dict[str, Any], *, dataset: str, business_id: str, search: str, keywords: Sequence[str],
                judged: list[dict[str, str]], formulas: Mapping[str, str]) -> None:
    """One review: its facts, the GT judge's judgment badges, the text (marked, collapsed when long)
    and a link to the trace of the restaurant at the first K that counts this review (``formulas``:
    :func:`trace_formulas`)."""
    with st.container(border=True):
        top, link = st.columns([3, 1], vertical_alignment="center")
        top.caption(safe("idx {i} · {d} · {s} · useful {u} · review {r}", i=review["idx"], d=str(review["date"])[:10],
                         s=stars_text(review["stars"]), u=review["useful"], r=review["review_id"]))
        for j in judged:
            badges = [f":{JUDGMENT_BADGE.get(v, 'gray')}-badge[{safe('{f}: {v}', f=f.replace('_', ' '), v=v)}]"
                      for f, v in j.items() if f != "task" and v not in ("none", "None")]
            top.markdown(safe("{task} judgment: ", task=j["task"]) + (" ".join(badges) or ":gray-badge[nothing found]"))
        task = judged[0]["task"] if judged else next(iter(formulas))
        link.page_link("app_pages/trace.py", label="Trace", icon=":material/account_tree:",
                       help="This restaurant's trace at the first K that counts this review",
                       query_params={"dataset": dataset, "task": task, "formula": formulas[task],
                                     "k": _trace_k(int(review["idx"])), "business_id": business_id})
        st.html(REVIEW_CSS + review_html(review["text"], search=search, keywords=keywords))
