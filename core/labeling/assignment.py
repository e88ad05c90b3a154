"""Which item a rater gets next, and recording their rating (SPEC §6.2).

First pass: among the project's items the rater has not rated, those below the target (counting
the other raters' active first-pass reservations toward it, so two raters never fill the same
last slot); the one with the most ratings first (2→3, then 1→2, then 0→1), oldest first. Items
the rater skipped come after all others. The chosen item is reserved for the rater for the
project's reservation time; asking again while it is reserved returns the same item.

Repeat audits: when no first-pass item is left for the rater (they rated everything, or every
item they have not rated has its raters), items they rated least, then with the fewest ratings,
then oldest; the item they rated last goes to the back so an audit is never an immediate
re-rating. A repeat is a new rating row and never counts toward the target.

Every decision runs in one write transaction that first serialises the project (SQLite
``BEGIN IMMEDIATE``; PostgreSQL ``SELECT … FOR UPDATE`` on the project row), so concurrent
raters cannot both take the last slot. The view a rater gets is blinded: no other rater's score,
no model score, and only the metadata fields the project marks visible.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from core.errors import WorkbenchError
from core.labeling import store as sql
from core.labeling.identity import ensure_rater, kind_of
from core.labeling.items import BLINDED_FIELDS, ITEM_FIELDS, Project
from core.labeling.store import LabelStore


@dataclass(frozen=True)
class ItemView:
    """What a rater sees of one item (blinded), plus the reservation that handed it out."""

    item_id: int
    token: str  # reservation token; also the idempotency key of the submission
    prompt_title: str
    prompt_body: str
    response_text: str
    fields: dict[str, Any]  # only the project's visible fields
    is_repeat: bool
    reserved_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class RaterProgress:
    """Progress of one rater and of the whole project."""

    items: int
    my_items: int  # distinct items I rated
    my_ratings: int  # rows, repeats included
    my_repeats: int
    complete_items: int  # items with at least the target number of raters
    filled_slots: int  # sum over items of min(raters, target)
    total_slots: int  # items × target


def check_score(score: Any) -> float:
    """Validate a rating: a finite number in [-1, 1] (rounded to 6 decimals against float noise).

    >>> check_score(0.35000000000000003)
    0.35
    """
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise ValueError(f"score must be a finite number, got {score!r}")
    if not -1.0 <= score <= 1.0:
        raise ValueError(f"score must lie in [-1, 1], got {score!r}")
    return round(float(score), 6)


def _view(row: Any, project: Project, token: str, is_repeat: bool, reserved_at: datetime,
          expires_at: datetime) -> ItemView:
    meta = json.loads(row.metadata or "{}")
    fields: dict[str, Any] = {}
    for name in project.visible_fields:
        if name in BLINDED_FIELDS:
            continue
        if name in ITEM_FIELDS:
            fields[name] = getattr(row, name)
        elif name in meta:
            fields[name] = meta[name]
    return ItemView(row.item_id, token, row.prompt_title, row.prompt_body, row.response_text, fields,
                    is_repeat, reserved_at, expires_at)


def _assign(conn: Connection, store: LabelStore, project: Project, rater: str, now: datetime, *,
            holds_nothing: bool = False) -> ItemView | None:
    """Pick and reserve the next item inside a write transaction that holds the project lock.

    ``holds_nothing``: the caller just removed the rater's reservation (saves two statements).
    """
    pid = project.project_id
    if not holds_nothing:
        held = sql.active_reservation(conn, pid, rater, now)
        if held is not None:
            row = sql.item_row(conn, held.item_id)
            return _view(row, project, held.token, not held.first_pass, held.reserved_at, held.expires_at)
    item_id = sql.first_pass_item(conn, pid, rater, now, target=project.target_raters)
    first_pass = item_id is not None
    if item_id is None and project.repeat_audits:
        item_id = sql.repeat_item(conn, pid, rater)
    if not holds_nothing:
        sql.release_reservation(conn, pid, rater)  # an expired reservation
    if item_id is None:
        return None
    token = uuid.uuid4().hex
    expires = now + timedelta(seconds=project.reservation_seconds)
    sql.insert_reservation(conn, {"project_id": pid, "rater": rater, "item_id": item_id, "token": token,
                                  "first_pass": first_pass, "reserved_at": now, "expires_at": expires})
    row = sql.item_row(conn, item_id)
    return _view(row, project, token, not first_pass, now, expires)


def next_item(store: LabelStore, project: Project, rater: str) -> ItemView | None:
    """Reserve and return the rater's next item (their current one if still reserved), or None."""
    with store.write() as conn:
        store.lock_project(conn, project.project_id)
        ensure_rater(conn, store, rater)
        return _assign(conn, store, project, rater, store.clock())


def _record(conn: Connection, store: LabelStore, project: Project, rater: str, item_id: int, score: float,
            notes: str | None, seconds_spent: float | None, token: str | None, now: datetime) -> tuple[int, bool]:
    """Insert one rating; returns (rating id, whether the rater's reservation was released)."""
    ctx = sql.submit_context(conn, project.project_id, rater, item_id, token, now)
    if token and ctx.done is not None:
        return int(ctx.done), False  # the same submission again (double click, retry): nothing new
    if ctx.project_id != project.project_id:
        raise WorkbenchError(f"item {item_id} is not in project {project.name!r}")
    ensure_rater(conn, store, rater)
    holds_it = ctx.held_item == item_id
    if seconds_spent is None and holds_it:
        seconds_spent = max(0.0, (now - ctx.held_since).total_seconds())
    if seconds_spent is not None and (not math.isfinite(seconds_spent) or seconds_spent < 0):
        raise ValueError(f"seconds_spent must be a non-negative number, got {seconds_spent!r}")
    is_repeat = bool(ctx.rated_before)
    counts_toward_target = not is_repeat and kind_of(rater) == "human"
    holds_active = holds_it and ctx.held_until is not None and ctx.held_until > now
    if counts_toward_target and not holds_active and (ctx.n_raters or 0) + (ctx.claims or 0) >= project.target_raters:
        # the rater's reservation expired and the item went to others: it has its raters now
        raise WorkbenchError(
            f"item {item_id} has its {project.target_raters} raters already (your reservation expired); "
            "the rating was not stored: take the next item")
    rating_id = sql.insert_rating(conn, {
        "item_id": item_id, "rater": rater, "score": score, "notes": notes or None, "created_at": now,
        "seconds_spent": seconds_spent, "is_repeat": is_repeat, "client_key": token or None},
        counts_toward_target=counts_toward_target)
    if holds_it:
        sql.release_reservation(conn, project.project_id, rater)
    return rating_id, holds_it


def submit(store: LabelStore, project: Project, rater: str, item_id: int, score: float, *,
           notes: str | None = None, seconds_spent: float | None = None, token: str | None = None) -> int:
    """Record one rating (a new row, never an update) and release the rater's reservation of it.

    Args:
        token: the :class:`ItemView` token; submitting the same token twice stores one row.
        seconds_spent: time on the item; by default the time since it was reserved.

    Returns:
        The rating id.
    """
    score = check_score(score)
    with store.write() as conn:
        store.lock_project(conn, project.project_id)
        return _record(conn, store, project, rater, item_id, score, notes, seconds_spent, token, store.clock())[0]


def submit_and_next(store: LabelStore, project: Project, rater: str, item_id: int, score: float, *,
                    notes: str | None = None, seconds_spent: float | None = None,
                    token: str | None = None) -> tuple[int, ItemView | None]:
    """:func:`submit` and :func:`next_item` in one transaction (one lock, one commit)."""
    score = check_score(score)
    with store.write() as conn:
        store.lock_project(conn, project.project_id)
        now = store.clock()
        rating_id, released = _record(conn, store, project, rater, item_id, score, notes, seconds_spent, token, now)
        return rating_id, _assign(conn, store, project, rater, now, holds_nothing=released)


def skip_and_next(store: LabelStore, project: Project, rater: str, item_id: int) -> ItemView | None:
    """Put ``item_id`` at the back of the rater's queue, release it and return the next item."""
    with store.write() as conn:
        store.lock_project(conn, project.project_id)
        ensure_rater(conn, store, rater)
        now = store.clock()
        sql.insert_skip(conn, item_id, rater, now)
        sql.release_reservation(conn, project.project_id, rater)
        return _assign(conn, store, project, rater, now, holds_nothing=True)


def release(store: LabelStore, project: Project, rater: str) -> None:
    """Give back the rater's reservation (e.g. when they switch project or sign out)."""
    with store.write() as conn:
        sql.release_reservation(conn, project.project_id, rater)


def rater_progress(store: LabelStore, project: Project, rater: str) -> RaterProgress:
    """Counts for the progress bars of the labeling page (two index-only queries)."""
    target = project.target_raters
    levels, mine = sql.rater_counts(store, project.project_id, rater)
    n_items = sum(n for _, n in levels)
    return RaterProgress(
        items=n_items, my_items=mine[0], my_ratings=mine[1], my_repeats=mine[2],
        complete_items=sum(n for k, n in levels if k >= target),
        filled_slots=sum(min(k, target) * n for k, n in levels), total_slots=n_items * target,
    )
