"""Data: browse a dataset's restaurants and their reviews (idx order, text shown escaped)."""

from __future__ import annotations

from datetime import date

import streamlit as st

from core import ui
from core.base.errors import WorkbenchError
from core.datasets import browse
from core.tasks import get_task, task_ids
from core.ui import cache, data_page
from core.ui.text import show

K_NAME, K_CAT, K_STARS, K_RPAGE = "data.name", "data.category", "data.stars", "data.restaurant_page"
K_TEXT, K_RSTARS, K_DATES, K_FIND = "data.text", "data.review_stars", "data.dates", "data.find"
K_SELECTED, K_VPAGE = data_page.K_SELECTED, data_page.K_VPAGE
RESTAURANT_PAGE_SIZE, REVIEW_PAGE_SIZE = 50, 20

ws = ui.current_workspace()
db = ui.database(ws)
dataset = ui.current_dataset(ws)

ui.page_header("Data", "Restaurants and their reviews as stored, newest review first (idx 0). Search hits are "
                       "marked yellow, task keywords blue; each review links to its trace.")
if not dataset:
    st.info("No dataset in this workspace. Import one with `python -m core datasets import PATH --name NAME`.")
    st.stop()
try:
    db.require_dataset(dataset)  # its tables must still match its lock (SPEC §1.4)
except WorkbenchError as exc:
    st.error(str(exc), icon=":material/lock:")
    st.stop()

if st.query_params.get("business_id") not in (None, st.session_state.get(K_SELECTED)):  # a link picks its restaurant
    data_page.select_restaurant(st.query_params["business_id"])
    st.session_state[data_page.K_SHOW_PAGE] = True
for key, default in ((K_RPAGE, 0), (K_VPAGE, 0)):
    st.session_state.setdefault(key, default)


def _reset_restaurant_page() -> None:
    st.session_state[K_RPAGE] = 0


def _find() -> None:
    _reset_restaurant_page()
    st.session_state[K_FIND] = bool(st.session_state[K_NAME])


def _reset_review_page() -> None:
    st.session_state[K_VPAGE] = 0


list_col, detail_col = st.columns([1, 1], gap="medium")

with list_col:
    show(st.subheader, "Restaurants of {d}", d=dataset)
    c1, c2 = st.columns(2)
    c1.text_input("Search by name", key=K_NAME, on_change=_find, placeholder="e.g. pho")
    c2.selectbox("Category", [""] + browse.categories(db, dataset), key=K_CAT, on_change=_reset_restaurant_page,
                 format_func=lambda c: c or "All categories")
    st.slider("Restaurant stars", 0.0, 5.0, (0.0, 5.0), step=0.5, key=K_STARS, on_change=_reset_restaurant_page,
              help="The full range also lists restaurants without stars.")
    lo, hi = st.session_state[K_STARS]
    rfilter = browse.RestaurantFilter(st.session_state[K_NAME], st.session_state[K_CAT], lo, hi)
    if st.session_state.pop(data_page.K_SHOW_PAGE, False):  # chosen by a link: open the list at its page
        data_page.open_page_of(db, dataset, rfilter, K_RPAGE, RESTAURANT_PAGE_SIZE)
    rpage = browse.list_restaurants(db, dataset, rfilter, page=st.session_state[K_RPAGE],
                                    page_size=RESTAURANT_PAGE_SIZE)
    selected = st.session_state.get(K_SELECTED)
    info = browse.restaurant(db, dataset, selected) if selected else None
    # "Search by name" selects its best match; with no (valid) selection the first row is selected
    if (st.session_state.pop(K_FIND, False) or info is None) and rpage.rows.height:
        data_page.select_restaurant(rpage.rows["business_id"][0])
        info = browse.restaurant(db, dataset, rpage.rows["business_id"][0])
    data_page.restaurant_table(rpage.rows, st.session_state.get(K_SELECTED), info["name"] if info else "")
    data_page.pager(K_RPAGE, rpage, "Restaurants")

with detail_col:
    if info is None:
        st.info("No restaurant matches these filters.")
        st.stop()
    data_page.restaurant_header(info)
    f1, f2, f3 = st.columns([2, 2, 2])
    f1.text_input("Search review text", key=K_TEXT, on_change=_reset_review_page)
    f2.multiselect("Review stars", [1.0, 2.0, 3.0, 4.0, 5.0], key=K_RSTARS, on_change=_reset_review_page)
    f3.date_input("Review dates", value=(), key=K_DATES, on_change=_reset_review_page,
                  min_value=date(2000, 1, 1), max_value=date(2100, 1, 1), format="YYYY-MM-DD")
    chosen_dates = tuple(st.session_state[K_DATES] or ())
    date_from = chosen_dates[0].isoformat() if chosen_dates else ""
    date_to = chosen_dates[-1].isoformat() if chosen_dates else ""
    vfilter = browse.ReviewFilter(st.session_state[K_TEXT], tuple(st.session_state[K_RSTARS]), date_from, date_to)
    vpage = browse.restaurant_reviews(db, dataset, info["business_id"], vfilter,
                                      page=st.session_state[K_VPAGE], page_size=REVIEW_PAGE_SIZE)
    data_page.pager(K_VPAGE, vpage, "Reviews")
    try:
        judged = cache.restaurant_judgments(ws, dataset, info["business_id"])
    except WorkbenchError as exc:
        show(st.warning, "Judgments not shown: {why}", why=str(exc))
        judged = {}
    keywords = [kw for task in task_ids(ws) for kw in get_task(task, ws).keywords]
    formulas = data_page.trace_formulas(ws)
    for review in vpage.rows.iter_rows(named=True):
        data_page.review_card(review, dataset=dataset, business_id=info["business_id"],
                              search=st.session_state[K_TEXT] or "", keywords=keywords,
                              judged=judged.get(int(review["idx"]), []), formulas=formulas)
