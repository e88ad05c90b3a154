"""Page glue of the Data page: the pager, the restaurant header and the review cards.

Names, cities and categories from the data go through :mod:`core.ui.text`; review texts through
:func:`core.review_text.review_html` (escaped, with search hits and keyword matches marked).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from core import browse, gt_views
from core.review_text import REVIEW_CSS, review_html
from core.tasks import task_ids
from core.ui.text import safe, show
from core.workspace import Workspace

TRACE_KS = (25, 50, 100, 200)
JUDGMENT_BADGE = {"severe": "red", "moderate": "orange", "mild": "blue", "positive": "blue", "negative": "orange"}


def pager(key: str, page: browse.Page, label: str) -> None:
    """Previous / "label a–b of n" / Next for a paged list kept in ``st.session_state[key]``."""
    left, mid, right = st.columns([1, 2, 1], vertical_alignment="center")
    left.button("← Previous", key=f"{key}.prev", disabled=page.page <= 0,
                on_click=lambda: st.session_state.__setitem__(key, page.page - 1))
    mid.caption(f"{label} {page.page * page.page_size + 1 if page.total else 0:,}–"
                f"{min(page.total, (page.page + 1) * page.page_size):,} of {page.total:,} "
                f"(page {page.page + 1} of {page.n_pages})")
    right.button("Next →", key=f"{key}.next", disabled=page.page + 1 >= page.n_pages,
                 on_click=lambda: st.session_state.__setitem__(key, page.page + 1))


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


def review_card(review: dict[str, Any], *, dataset: str, business_id: str, search: str, keywords: Sequence[str],
                judged: list[dict[str, str]], ws: Workspace | None = None) -> None:
    """One review: its facts, the GT judge's judgment badges, the text (marked, collapsed when long)
    and a link to the trace of the restaurant at the first K that counts this review."""
    with st.container(border=True):
        top, link = st.columns([5, 1], vertical_alignment="center")
        top.caption(safe("idx {i} · {d} · {s} · useful {u} · review {r}", i=review["idx"], d=str(review["date"])[:10],
                         s=stars_text(review["stars"]), u=review["useful"], r=review["review_id"]))
        for j in judged:
            badges = [f":{JUDGMENT_BADGE.get(v, 'gray')}-badge[{safe('{f}: {v}', f=f.replace('_', ' '), v=v)}]"
                      for f, v in j.items() if f != "task" and v not in ("none", "None")]
            top.markdown(safe("{task} judgment: ", task=j["task"]) + (" ".join(badges) or ":gray-badge[nothing found]"))
        task = judged[0]["task"] if judged else task_ids(ws)[0]
        link.page_link("app_pages/trace.py", label="Trace", icon=":material/account_tree:",
                       help="This restaurant's trace at the first K that counts this review",
                       query_params={"dataset": dataset, "task": task, "formula": gt_views.definitions(task, ws)[0],
                                     "k": _trace_k(int(review["idx"])), "business_id": business_id})
        st.html(REVIEW_CSS + review_html(review["text"], search=search, keywords=keywords))
