"""Which item a rater gets next, and recording their rating (SPEC §6.2).

First pass: among the project's items the rater has not rated, those below the raters they need
(the target, plus any extra rater routed to an item whose raters disagree: :mod:`~core.labeling.routing`),
counting the other raters' active first-pass reservations toward it, so two raters never fill the
same last slot; the one with the most ratings first (2→3, then 1→2, then 0→1), oldest first. Items
the rater skipped come after all others. The chosen item is reserved for the rater for the
project's reservation time; asking again while it is reserved returns the same item.

Repeat audits: when no first-pass item is left for the rater, items they rated least, then with
the fewest ratings, then oldest; never the item they rated last, and each item at most once more
(then there is nothing left to do). A repeat is a new rating row and never counts toward the target.

Nothing lost, nothing claimed falsely. A submission answers a reservation (its token, the
"round"). The same rater submitting the same round again — the same rater code open in two tabs —
is stored as a *correction*: a new row that ``supersedes`` the earlier one, which stays in the
history out of force, and :class:`SubmitResult` says what it replaced. Two submissions of one
(rater, item, round) within :data:`DUPLICATE_WINDOW` store one row (a double click, a retry). A
rater may also change any rating of theirs later (:func:`correct`), again as a new row. A rating
that would give an item more raters than it needs (its reservation expired, or the owner lowered
the target meanwhile) is refused with an error, never stored and never reported as saved.

Every decision runs in one write transaction that first serialises the project and reads its
settings as they are now (:meth:`~core.labeling.store.LabelStore.lock_project`). The view a rater
gets is blinded: no other rater's score, no model score, and only the fields the project shows
(the title included).
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from core.base.errors import WorkbenchError
from core.labeling import routing
from core.labeling.answers import check_answers
from core.labeling.identity import ensure_rater, kind_of
from core.labeling.items import BLINDED_FIELDS, ITEM_FIELDS, Project, project_from_row
from core.labeling.store import LabelStore, assign_sql, catalog, rating_sql

DUPLICATE_WINDOW = timedelta(milliseconds=50)  # two submissions of one round this close store one row


@dataclass(frozen=True)
class ItemView:
    """What a rater sees of one item (blinded), plus the reservation that handed it out."""

    item_id: int
    token: str  # reservation token: the round a submission answers
    prompt_title: str  # "" unless the project shows the title
    prompt_body: str
    response_text: str
    fields: dict[str, Any]  # only the project's visible fields (title aside)
    is_repeat: bool
    reserved_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class SubmitResult:
    """What a submission did; the page words its message from it (never "Saved" without a row).

    ``status``: ``saved`` (a new row), ``correction`` (a new row replacing ``replaced``, the
    rater's earlier score of the same round, e.g. from another tab) or ``duplicate`` (nothing
    stored: the same round was stored ``ms_apart`` milliseconds before, with ``stored``).
    """

    rating_id: int
    status: str
    score: float | None  # None for a judgment audit's answers
    replaced: float | None = None
    stored: float | None = None
    ms_apart: float | None = None
    routed: bool = False  # the item now needs one more rater (its raters disagree)
    next: ItemView | None = None
    answers: dict[str, str] | None = None  # a judgment audit's answers
    replaced_answers: dict[str, str] | None = None


@dataclass(frozen=True)
class RaterProgress:
    """Progress of one rater and of the whole project."""

    items: int
    my_items: int  # distinct items I rated
    my_ratings: int  # rows in force, repeats included
    my_repeats: int
    complete_items: int  # items with all the raters they need
    filled_slots: int  # sum over items of min(raters, needed)
    total_slots: int  # sum over items of the raters they need


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


MAX_NOTES = 10_000  # characters of a rating's notes


def check_notes(notes: Any) -> str | None:
    """A rating's notes: text (stripped; empty is None) of at most :data:`MAX_NOTES` characters.

    >>> check_notes("  hedges  "), check_notes("")
    ('hedges', None)
    """
    if notes is None:
        return None
    if not isinstance(notes, str):
        raise ValueError(f"notes must be text, got {type(notes).__name__}")
    if len(notes) > MAX_NOTES:
        raise ValueError(f"notes must be at most {MAX_NOTES:,} characters, got {len(notes):,}")
    return notes.strip() or None




def _view(row: Any, settings: Project, token: str, is_repeat: bool, reserved_at: datetime,
          expires_at: datetime) -> ItemView:
    """The blinded view of an item row under the project's current field settings."""
    meta = json.loads(row.metadata or "{}")
    fields: dict[str, Any] = {}
    for name in settings.visible_fields:
        if name in BLINDED_FIELDS or name == "prompt_title":
            continue
        if name in ITEM_FIELDS:
            fields[name] = getattr(row, name)
        elif name in meta:
            fields[name] = meta[name]
    title = row.prompt_title if "prompt_title" in settings.visible_fields else ""
    return ItemView(row.item_id, token, title, row.prompt_body, row.response_text, fields, is_repeat, reserved_at,
                    expires_at)


def _locked(conn: Connection, store: LabelStore, project: Project) -> Project:
    """Lock the project and return its settings as stored now (another process may have changed them)."""
    return project_from_row(store.lock_project(conn, project.project_id))


def _assign(conn: Connection, settings: Project, rater: str, now: datetime, *,
            holds_nothing: bool = False) -> ItemView | None:
    """Pick and reserve the next item inside a write transaction that holds the project lock.

    ``holds_nothing``: the caller just removed the rater's reservation (saves two statements).
    """
    pid = settings.project_id
    if not holds_nothing:
        held = assign_sql.active_reservation(conn, pid, rater, now)
        if held is not None:
            row = catalog.item_row(conn, held.item_id)
            return _view(row, settings, held.token, not held.first_pass, held.reserved_at, held.expires_at)
    item_id = assign_sql.first_pass_item(conn, pid, rater, now, target=settings.target_raters,
                                         top=settings.raters_cap)
    first_pass = item_id is not None
    if item_id is None and settings.repeat_audits:
        item_id = assign_sql.repeat_item(conn, pid, rater)
    if not holds_nothing:
        assign_sql.release_reservation(conn, pid, rater)  # an expired reservation
    if item_id is None:
        return None
    token = uuid.uuid4().hex
    expires = now + timedelta(seconds=settings.reservation_seconds)
    assign_sql.insert_reservation(conn, {"project_id": pid, "rater": rater, "item_id": item_id, "token": token,
                                         "first_pass": first_pass, "reserved_at": now, "expires_at": expires})
    return _view(catalog.item_row(conn, item_id), settings, token, not first_pass, now, expires)


def next_item(store: LabelStore, project: Project, rater: str) -> ItemView | None:
    """Reserve and return the rater's next item (their current one if still reserved), or None."""
    with store.write() as conn:
        settings = _locked(conn, store, project)
        ensure_rater(conn, store, rater)
        return _assign(conn, settings, rater, store.clock())


def _check_room(settings: Project, ctx: Any, item_id: int, now: datetime) -> None:
    """Refuse a first-pass rating that would give the item more raters than it needs now."""
    needed = settings.target_raters + (ctx.extra_raters or 0)
    n_raters = ctx.n_raters or 0
    holds_active = ctx.held_item == item_id and ctx.held_until is not None and ctx.held_until > now
    if n_raters >= needed or (not holds_active and n_raters + (ctx.claims or 0) >= needed):
        why = "your reservation expired" if not holds_active else "the project now needs fewer raters per item"
        raise WorkbenchError(f"item {item_id} has its {needed} raters already ({why}); "
                             "the rating was not stored: take the next item")


def _seconds(seconds_spent: float | None, ctx: Any, item_id: int, now: datetime) -> float | None:
    if seconds_spent is None and ctx.held_item == item_id:
        seconds_spent = max(0.0, (now - ctx.held_since).total_seconds())
    if seconds_spent is not None and (not math.isfinite(seconds_spent) or seconds_spent < 0):
        raise ValueError(f"seconds_spent must be a non-negative number, got {seconds_spent!r}")
    return seconds_spent


def _answer(settings: Project, score: float | None, answers: dict[str, str] | None) -> tuple[float | None, str | None]:
    """(score, answers JSON) of a submission, checked against the project's kind."""
    if settings.is_audit:
        if answers is None:
            raise WorkbenchError(f"project {settings.name!r} is a judgment audit: submit answers, not a score")
        return None, json.dumps(check_answers(answers, settings.answer_fields), ensure_ascii=False)
    if score is None:
        raise WorkbenchError(f"project {settings.name!r} takes a score, not answers")
    return score, None


def _record(conn: Connection, store: LabelStore, settings: Project, rater: str, item_id: int, score: float | None,
            notes: str | None, seconds_spent: float | None, token: str | None, now: datetime,
            answers: dict[str, str] | None = None) -> tuple[SubmitResult, bool]:
    """Store one submission; returns what it did and whether the rater's reservation was released."""
    ctx = assign_sql.submit_context(conn, settings.project_id, rater, item_id, now)
    if ctx.project_id != settings.project_id:
        raise WorkbenchError(f"item {item_id} is not in project {settings.name!r}")
    score, answers_json = _answer(settings, score, answers)
    answers = json.loads(answers_json) if answers_json else None
    ensure_rater(conn, store, rater)
    earlier = rating_sql.round_rating(conn, item_id, rater, token) if token else None
    if earlier is not None and now - earlier.created_at <= DUPLICATE_WINDOW:
        apart = (now - earlier.created_at).total_seconds() * 1000
        return SubmitResult(int(earlier.rating_id), "duplicate", score, stored=earlier.score, ms_apart=apart,
                            answers=answers), False
    row = {"item_id": item_id, "rater": rater, "score": score, "notes": notes or None, "created_at": now,
           "seconds_spent": _seconds(seconds_spent, ctx, item_id, now), "round_key": token, "answers": answers_json}
    if earlier is not None:  # the same round again (another tab): a correction, the earlier row stays
        row.update(is_repeat=bool(earlier.is_repeat), supersedes=int(earlier.rating_id))
        counts = False
    else:
        row["is_repeat"] = bool(ctx.rated_before)
        counts = not row["is_repeat"] and kind_of(rater) == "human"
        if counts:
            _check_room(settings, ctx, item_id, now)
    rating_id = rating_sql.insert_rating(conn, row, counts_toward_target=counts)
    holds_it = ctx.held_item == item_id
    if holds_it:
        assign_sql.release_reservation(conn, settings.project_id, rater)
    routed = kind_of(rater) == "human" and routing.route_if_needed(conn, settings, item_id, now)
    status, replaced = ("correction", earlier.score) if earlier is not None else ("saved", None)
    before = rating_sql.rating_answers(conn, int(earlier.rating_id)) if earlier is not None and answers else None
    return SubmitResult(rating_id, status, score, replaced=replaced, routed=routed, answers=answers,
                        replaced_answers=before), holds_it


def submit_answers(store: LabelStore, project: Project, rater: str, item_id: int, answers: dict[str, str], *,
                   notes: str | None = None, seconds_spent: float | None = None, token: str | None = None,
                   take_next: bool = True) -> SubmitResult:
    """:func:`submit_rating` for a judgment audit: one value for every answer field of the project
    (checked against its fields; corrections, duplicates and the raters an item needs as for scores)."""
    with store.write() as conn:
        settings = _locked(conn, store, project)
        now = store.clock()
        result, released = _record(conn, store, settings, rater, item_id, None, notes, seconds_spent, token, now,
                                    answers=answers)
        if not take_next:
            return result
        nxt = _assign(conn, settings, rater, now, holds_nothing=released)
    return replace(result, next=nxt)


def submit_rating(store: LabelStore, project: Project, rater: str, item_id: int, score: float, *,
                  notes: str | None = None, seconds_spent: float | None = None, token: str | None = None,
                  take_next: bool = True) -> SubmitResult:
    """Record one rating and (with ``take_next``) reserve the rater's next item, in one transaction.

    Args:
        token: the :class:`ItemView` token (the round). The same round submitted again is a
            correction, or within :data:`DUPLICATE_WINDOW` a duplicate that stores nothing.
        seconds_spent: time on the item; by default the time since it was reserved.

    Raises:
        WorkbenchError: the item is in another project, or it has the raters it needs.
    """
    score, notes = check_score(score), check_notes(notes)
    with store.write() as conn:
        settings = _locked(conn, store, project)
        now = store.clock()
        result, released = _record(conn, store, settings, rater, item_id, score, notes, seconds_spent, token, now)
        if not take_next:
            return result
        nxt = _assign(conn, settings, rater, now, holds_nothing=released)
    return replace(result, next=nxt)


def submit(store: LabelStore, project: Project, rater: str, item_id: int, score: float, *,
           notes: str | None = None, seconds_spent: float | None = None, token: str | None = None) -> int:
    """Record one rating (a new row, never an update) and release the rater's reservation of it.

    Returns:
        The rating id (of the earlier row for a duplicate submission).
    """
    return submit_rating(store, project, rater, item_id, score, notes=notes, seconds_spent=seconds_spent,
                         token=token, take_next=False).rating_id


def submit_and_next(store: LabelStore, project: Project, rater: str, item_id: int, score: float, *,
                    notes: str | None = None, seconds_spent: float | None = None,
                    token: str | None = None) -> tuple[int, ItemView | None]:
    """:func:`submit` and :func:`next_item` in one transaction (one lock, one commit)."""
    result = submit_rating(store, project, rater, item_id, score, notes=notes, seconds_spent=seconds_spent,
                           token=token)
    return result.rating_id, result.next


def correct(store: LabelStore, project: Project, rater: str, rating_id: int, score: float | None, *,
            notes: str | None = None, answers: dict[str, str] | None = None) -> SubmitResult:
    """Change one of the rater's ratings (a judgment audit's: its ``answers``): a new row that
    supersedes it (the old row stays, out of force).

    Raises:
        WorkbenchError: not the rater's rating in this project, or changed meanwhile (the message
            gives the value now in force).
    """
    score = check_score(score) if score is not None else None
    notes = check_notes(notes)
    with store.write() as conn:
        settings = _locked(conn, store, project)
        score, answers_json = _answer(settings, score, answers)
        old = rating_sql.rating_row(conn, rating_id)
        if old is None or old.rater != rater or old.project_id != settings.project_id:
            raise WorkbenchError(f"rating {rating_id} is not one of {rater}'s ratings in project {settings.name!r}")
        if not old.in_force:
            now_in_force = rating_sql.superseding_rating(conn, rating_id)
            shown = (f"{now_in_force.score:+.2f}" if now_in_force is not None and now_in_force.score is not None
                     else "another value")
            raise WorkbenchError(f"that rating was changed meanwhile (now {shown}); nothing was stored")
        now = store.clock()
        new_id = rating_sql.insert_rating(conn, {
            "item_id": old.item_id, "rater": rater, "score": score, "notes": (notes or "").strip() or None,
            "created_at": now, "seconds_spent": None, "is_repeat": bool(old.is_repeat), "round_key": old.round_key,
            "supersedes": rating_id, "answers": answers_json}, counts_toward_target=False)
        routed = kind_of(rater) == "human" and routing.route_if_needed(conn, settings, old.item_id, now)
    return SubmitResult(new_id, "correction", score, replaced=None if old.score is None else float(old.score),
                        routed=routed, answers=json.loads(answers_json) if answers_json else None,
                        replaced_answers=json.loads(old.answers) if old.answers else None)


def item_view(store: LabelStore, project: Project, item_id: int) -> ItemView:
    """The blinded view of one item of the project (for changing a rating of it); no reservation."""
    with store.read() as conn:
        row = catalog.item_row(conn, item_id)
        if row is None or row.project_id != project.project_id:
            raise WorkbenchError(f"item {item_id} is not in project {project.name!r}")
        settings = project_from_row(catalog.project_row(conn, project.name))
    return _view(row, settings, "", False, row.created_at, row.created_at)


def recent_ratings(store: LabelStore, project: Project, rater: str, limit: int = 5) -> list[dict[str, Any]]:
    """The rater's latest ratings in force, newest first: rating_id, item_id, score, notes, created_at,
    is_repeat and the title (blank when the project hides it)."""
    rows = rating_sql.recent_ratings(store, project.project_id, rater, limit)
    show_title = "prompt_title" in project.visible_fields  # blinded: the title only where raters see it
    return [{"rating_id": r.rating_id, "item_id": r.item_id, "score": r.score, "notes": r.notes,
             "created_at": r.created_at, "is_repeat": bool(r.is_repeat),
             "answers": json.loads(r.answers) if r.answers else None,
             "title": r.prompt_title if show_title else ""} for r in rows]


def skip_and_next(store: LabelStore, project: Project, rater: str, item_id: int) -> ItemView | None:
    """Put ``item_id`` at the back of the rater's queue, release it and return the next item."""
    with store.write() as conn:
        settings = _locked(conn, store, project)
        ensure_rater(conn, store, rater)
        now = store.clock()
        assign_sql.insert_skip(conn, item_id, rater, now)
        assign_sql.release_reservation(conn, settings.project_id, rater)
        return _assign(conn, settings, rater, now, holds_nothing=True)


def release(store: LabelStore, project: Project, rater: str) -> None:
    """Give back the rater's reservation (e.g. when they switch project or sign out)."""
    with store.write() as conn:
        assign_sql.release_reservation(conn, project.project_id, rater)


def rater_progress(store: LabelStore, project: Project, rater: str) -> RaterProgress:
    """Counts for the progress bars of the labeling page (two index-only queries)."""
    target = project.target_raters
    levels, mine = rating_sql.rater_counts(store, project.project_id, rater)
    n_items = sum(n for _, _, n in levels)
    return RaterProgress(
        items=n_items, my_items=mine[0], my_ratings=mine[1], my_repeats=mine[2],
        complete_items=sum(n for k, e, n in levels if k >= target + e),
        filled_slots=sum(min(k, target + e) * n for k, e, n in levels),
        total_slots=sum((target + e) * n for _, e, n in levels),
    )
