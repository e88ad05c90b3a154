"""Raters where they count: an item whose raters disagree gets one more rater, up to a cap.

A project may set a ``target_spread``. Once an item has all the raters it needs (the target plus
any extra ones already routed to it), its human raters' latest scores are measured — the
``range`` (max − min, the slider spread) or the ``ci_width`` (the width of the 95 % t-interval of
their mean, 2·t(0.975, n−1)·sd/√n) — and when the measure exceeds the target spread and the item
has fewer raters than the cap (``max_raters``, default target + 2), it needs one more: the next
rater who asks gets it first (it sits at the highest level of "raters so far"). Every decision is
stored with its figures (``item_routing``), so coverage and Label review say why an item got an
extra rater. The check runs inside the transaction that stored the rating, under the project lock.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.labeling.store import assign_sql, rating_sql

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from core.labeling.store import LabelStore

# t(0.975, df) for df = 1 … 30; beyond, the normal quantile is close enough (t(0.975, 30) = 2.042).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (three decimals).

    >>> t975(1), t975(2), t975(1000)
    (12.706, 4.303, 1.96)
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be ≥ 1, got {df}")
    return _T975[df - 1] if df <= len(_T975) else 1.96


def disagreement(scores: list[float], measure: str) -> float:
    """How much an item's raters disagree: ``range`` (max − min) or ``ci_width`` (95 % t-interval
    width of the mean).

    >>> disagreement([0.2, -0.4, 0.6], "range")
    1.0
    >>> round(disagreement([0.0, 1.0], "ci_width"), 3)  # sd 0.7071, n 2: 2 · 12.706 · 0.7071 / √2
    12.706
    """
    if len(scores) < 2:
        raise ValueError(f"disagreement needs at least 2 scores, got {len(scores)}")
    if measure == "range":
        return round(max(scores) - min(scores), 6)
    if measure == "ci_width":
        n = len(scores)
        mean = sum(scores) / n
        sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / (n - 1))
        return 2 * t975(n - 1) * sd / math.sqrt(n)
    raise ValueError(f"unknown spread measure {measure!r}; valid: range, ci_width")


def raters_cap(target_raters: int, target_spread: float | None, max_raters: int | None) -> int:
    """The most raters an item may get: the target, or with routing on the cap (default target + 2).

    >>> raters_cap(3, None, 6), raters_cap(3, 0.5, None), raters_cap(3, 0.5, 4)
    (3, 5, 4)
    """
    if target_spread is None:
        return target_raters
    return max(target_raters, max_raters or target_raters + 2)


def route_if_needed(conn: Connection, settings: Any, item_id: int, now: datetime) -> bool:
    """Give ``item_id`` one more rater when it is full and its raters disagree beyond the target
    spread. ``settings`` is the project as read under the lock (a ``projects`` row or a
    :class:`~core.labeling.items.Project`). Returns whether it routed a rater."""
    if settings.target_spread is None:
        return False
    ctx = assign_sql.item_need(conn, item_id)
    needed = settings.target_raters + ctx.extra_raters
    if ctx.n_raters < needed or needed >= raters_cap(settings.target_raters, settings.target_spread,
                                                     settings.max_raters):
        return False
    scores = [s for _, s in rating_sql.item_scores_in_force(conn, item_id)]
    if len(scores) < 2:
        return False
    value = disagreement(scores, settings.spread_measure)
    if value <= settings.target_spread:
        return False
    assign_sql.route_extra_rater(conn, item_id, {
        "created_at": now, "n_raters": ctx.n_raters, "measure": settings.spread_measure, "value": round(value, 6),
        "threshold": settings.target_spread, "new_target": needed + 1})
    return True


def reevaluate(store: LabelStore, project_id: int) -> int:
    """Check every full item of the project against its current routing settings (after they
    changed); returns how many items got an extra rater."""
    routed = 0
    with store.write() as conn:
        settings = store.lock_project(conn, project_id)
        if settings.target_spread is None:
            return 0
        now = store.clock()
        for item_id in assign_sql.full_item_ids(conn, project_id, settings.target_raters):
            routed += route_if_needed(conn, settings, item_id, now)
    return routed


def explain(measure: str, value: float, threshold: float, n_raters: int, new_target: int) -> str:
    """Why an item got an extra rater, in one line.

    >>> explain("range", 0.8, 0.5, 3, 4)
    'spread 0.80 > target 0.50 after 3 raters: rater 4 added'
    """
    name = "spread" if measure == "range" else "95% interval width"
    return f"{name} {value:.2f} > target {threshold:.2f} after {n_raters} raters: rater {new_target} added"
