"""Statements of assignment: the next first-pass or repeat item, reservations, skips, what a
submission needs to know, and the routing of an extra rater to an item.

Statements are built once (bind parameters), which keeps a submit at a few milliseconds. The first
pass walks one level of "raters so far" at a time (highest first), each level in the
(project_id, n_raters, created_at, item_id) index order, so the first fitting item ends the scan
instead of every open item being ranked. An item needs ``target + extra_raters`` raters (extra ones
are routed to it when its raters disagree). Items the rater skipped come last.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, case, delete, exists, func, select, update
from sqlalchemy.engine import Row

from core.labeling.store.catalog import P
from core.labeling.store.tables import item_routing, items, ratings, reservations, skips

_NEEDED: Any = P("target") + items.c.extra_raters  # raters the item needs
_RATED_BY_ME = exists().where(ratings.c.item_id == items.c.item_id, ratings.c.rater == P("rater"))
_SKIPPED_BY_ME = case((exists().where(skips.c.item_id == items.c.item_id, skips.c.rater == P("rater")), 1), else_=0)
_OTHERS_CLAIMS = (
    select(func.count()).select_from(reservations)
    .where(reservations.c.item_id == items.c.item_id, reservations.c.rater != P("rater"),
           reservations.c.expires_at > P("now"), reservations.c.first_pass.is_(True))
    .scalar_subquery()
)
_SKIPPED_IDS = select(skips.c.item_id).where(skips.c.rater == P("rater"))
_FIRST_PASS_LEVEL = (
    select(items.c.item_id)
    .where(items.c.project_id == P("project_id"), items.c.n_raters == P("level"), ~_RATED_BY_ME,
           _OTHERS_CLAIMS < _NEEDED - P("level"), items.c.item_id.not_in(_SKIPPED_IDS))
    .order_by(items.c.created_at, items.c.item_id)
    .limit(1)
)
_FIRST_PASS_SKIPPED = (
    select(items.c.item_id)
    .where(items.c.project_id == P("project_id"), items.c.n_raters < _NEEDED, ~_RATED_BY_ME,
           items.c.n_raters + _OTHERS_CLAIMS < _NEEDED, items.c.item_id.in_(_SKIPPED_IDS))
    .order_by(items.c.n_raters.desc(), items.c.created_at, items.c.item_id)
    .limit(1)
)
_MINE = (
    select(ratings.c.item_id, func.count().label("n_mine"), func.max(ratings.c.created_at).label("last"))
    .where(ratings.c.rater == P("rater")).group_by(ratings.c.item_id).subquery()
)
_MY_LAST_ITEM = (select(ratings.c.item_id).where(ratings.c.rater == P("rater"))
                 .order_by(ratings.c.rating_id.desc()).limit(1).scalar_subquery())
MAX_REPEATS = 1  # repeat audits of one item by one rater: a retest, not a loop (issue 26)
_REPEAT = (
    select(items.c.item_id)
    .join(_MINE, _MINE.c.item_id == items.c.item_id)
    .where(items.c.project_id == P("project_id"), _MINE.c.n_mine <= MAX_REPEATS, items.c.item_id != _MY_LAST_ITEM)
    .order_by(_SKIPPED_BY_ME, _MINE.c.n_mine,
              items.c.n_ratings, items.c.created_at, items.c.item_id)
    .limit(1)
)
_MY_RESERVATION = (reservations.c.project_id == P("project_id")) & (reservations.c.rater == P("rater"))
_HELD_ACTIVE = select(reservations).where(_MY_RESERVATION, reservations.c.expires_at > P("now"))
_RELEASE = delete(reservations).where(_MY_RESERVATION)
_ITEM_PROJECT = select(items.c.project_id).where(items.c.item_id == P("iid"))
_RATED_BEFORE = select(exists().where(ratings.c.item_id == P("iid"), ratings.c.rater == P("rater")))
_HELD_FIELD = select(reservations.c.item_id).where(_MY_RESERVATION).scalar_subquery()
_HELD_SINCE = select(reservations.c.reserved_at).where(_MY_RESERVATION).scalar_subquery()
_HELD_UNTIL = select(reservations.c.expires_at).where(_MY_RESERVATION).scalar_subquery()
_ITEM_RATERS = select(items.c.n_raters).where(items.c.item_id == P("iid")).scalar_subquery()
_ITEM_EXTRA = select(items.c.extra_raters).where(items.c.item_id == P("iid")).scalar_subquery()
_CLAIMS_ON_ITEM = (
    select(func.count()).select_from(reservations)
    .where(reservations.c.item_id == P("iid"), reservations.c.rater != P("rater"),
           reservations.c.expires_at > P("now"), reservations.c.first_pass.is_(True))
    .scalar_subquery()
)
# Everything a submission needs to know, in one round trip.
_SUBMIT_CONTEXT = select(
    _ITEM_PROJECT.scalar_subquery().label("project_id"), _RATED_BEFORE.scalar_subquery().label("rated_before"),
    _HELD_FIELD.label("held_item"), _HELD_SINCE.label("held_since"), _HELD_UNTIL.label("held_until"),
    _ITEM_RATERS.label("n_raters"), _ITEM_EXTRA.label("extra_raters"), _CLAIMS_ON_ITEM.label("claims"),
)


def first_pass_item(conn: Connection, project_id: int, rater: str, now: datetime, *, target: int,
                    top: int) -> int | None:
    """The rater's next first-pass item: most raters so far first (2 → 3, then 1 → 2, then 0 → 1),
    oldest first, counting other raters' active first-pass reservations; skipped items last.

    Args:
        target: the project's raters per item (its target, read inside the transaction).
        top: the most raters any item may need (the target, or the cap of extra raters).
    """
    who = {"project_id": project_id, "rater": rater, "now": now, "target": target}
    for level in range(top - 1, -1, -1):
        found = conn.execute(_FIRST_PASS_LEVEL, {**who, "level": level}).scalar()
        if found is not None:
            return int(found)
    found = conn.execute(_FIRST_PASS_SKIPPED, who).scalar()
    return None if found is None else int(found)


def repeat_item(conn: Connection, project_id: int, rater: str) -> int | None:
    """The item for a repeat audit: rated least by the rater, then fewest ratings, then oldest; never
    the item they rated last (a retest right away measures memory) and none they rated
    :data:`MAX_REPEATS` times again already, so a small project runs out of repeats instead of looping."""
    found = conn.execute(_REPEAT, {"project_id": project_id, "rater": rater}).scalar()
    return None if found is None else int(found)


def active_reservation(conn: Connection, project_id: int, rater: str, now: datetime) -> Row | None:
    """The rater's reservation in the project if it has not expired."""
    return conn.execute(_HELD_ACTIVE, {"project_id": project_id, "rater": rater, "now": now}).first()


def release_reservation(conn: Connection, project_id: int, rater: str) -> None:
    """Drop the rater's reservation in the project (expired or not)."""
    conn.execute(_RELEASE, {"project_id": project_id, "rater": rater})


def insert_reservation(conn: Connection, values: dict[str, Any]) -> None:
    """Reserve an item for a rater (``project_id, rater, item_id, token, first_pass, reserved_at, expires_at``)."""
    conn.execute(reservations.insert(), values)


def submit_context(conn: Connection, project_id: int, rater: str, item_id: int, now: datetime) -> Row:
    """What a submission needs, in one round trip: ``project_id`` of the item, ``rated_before``, the
    rater's ``held_item``/``held_since``/``held_until``, the item's ``n_raters`` and ``extra_raters``
    and other raters' active first-pass ``claims`` on it."""
    return conn.execute(_SUBMIT_CONTEXT, {"project_id": project_id, "rater": rater, "iid": item_id, "now": now}).one()


def insert_skip(conn: Connection, item_id: int, rater: str, now: datetime) -> None:
    """Record that the rater skipped the item."""
    conn.execute(skips.insert().values(item_id=item_id, rater=rater, created_at=now))


def route_extra_rater(conn: Connection, item_id: int, values: dict[str, Any]) -> None:
    """Give the item one more rater and record why (``created_at, n_raters, measure, value, threshold,
    new_target``)."""
    conn.execute(update(items).where(items.c.item_id == item_id).values(extra_raters=items.c.extra_raters + 1))
    conn.execute(item_routing.insert().values(item_id=item_id, **values))


def routing_rows(conn: Connection, project_id: int) -> list[Row]:
    """Every extra-rater decision of the project (item_id, created_at, n_raters, measure, value,
    threshold, new_target, prompt_title, current n_raters), oldest first."""
    stmt = (select(item_routing.c.item_id, item_routing.c.created_at, item_routing.c.n_raters, item_routing.c.measure,
                   item_routing.c.value, item_routing.c.threshold, item_routing.c.new_target, items.c.prompt_title,
                   items.c.n_raters.label("raters_now"))
            .join(items, items.c.item_id == item_routing.c.item_id)
            .where(items.c.project_id == project_id)
            .order_by(item_routing.c.created_at, item_routing.c.routing_id))
    return list(conn.execute(stmt).all())


def full_item_ids(conn: Connection, project_id: int, target: int) -> list[int]:
    """Items of the project that have all the raters they need now."""
    stmt = select(items.c.item_id).where(items.c.project_id == project_id,
                                         items.c.n_raters >= target + items.c.extra_raters)
    return list(conn.execute(stmt).scalars())



_ITEM_NEED = select(items.c.n_raters, items.c.extra_raters).where(items.c.item_id == P("iid"))


def item_need(conn: Connection, item_id: int) -> Row:
    """The item's ``n_raters`` and ``extra_raters``."""
    return conn.execute(_ITEM_NEED, {"iid": item_id}).one()
