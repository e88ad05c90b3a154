"""Statements of ratings: reading them, inserting them with their item's counters, corrections.

A rating is *in force* while no later rating ``supersedes`` it (a correction keeps the row it
corrects, out of force). The assignment statements (which item a rater gets) are in
:mod:`core.labeling.store.assign_sql`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, case, exists, func, select, update
from sqlalchemy.engine import Row

from core.labeling.store.catalog import IN_CHUNK, P
from core.labeling.store.engine import LabelStore
from core.labeling.store.tables import items, raters, ratings


def _in_force() -> Any:
    """``ratings`` rows that no other rating supersedes."""
    later = ratings.alias("later")
    return ~exists().where(later.c.supersedes == ratings.c.rating_id)


def rating_rows(store: LabelStore, project_id: int, *, include_models: bool, include_superseded: bool = False,
                ) -> list[tuple]:
    """The project's ratings (rating_id, item_id, rater, kind, score, notes, created_at, seconds_spent,
    is_repeat, supersedes, in_force), oldest first; model raters only with ``include_models``, rows a
    correction replaced only with ``include_superseded``."""
    in_force = _in_force()
    stmt = (
        select(ratings.c.rating_id, ratings.c.item_id, ratings.c.rater, raters.c.kind, ratings.c.score,
               ratings.c.notes, ratings.c.created_at, ratings.c.seconds_spent, ratings.c.is_repeat,
               ratings.c.supersedes, case((in_force, True), else_=False).label("in_force"))
        .select_from(ratings.join(items, items.c.item_id == ratings.c.item_id)
                     .join(raters, raters.c.code == ratings.c.rater))
        .where(items.c.project_id == project_id)
        .order_by(ratings.c.created_at, ratings.c.rating_id)
    )
    if not include_models:
        stmt = stmt.where(raters.c.kind == "human")
    if not include_superseded:
        stmt = stmt.where(in_force)
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def rater_progress_rows(store: LabelStore, project_id: int) -> list[tuple]:
    """Per rater of the project: rater, role, kind, n_ratings, n_items, n_repeats, mean_seconds, last_rating_at."""
    stmt = (
        select(ratings.c.rater, raters.c.role, raters.c.kind, func.count().label("n_ratings"),
               func.count(func.distinct(ratings.c.item_id)).label("n_items"),
               func.sum(case((ratings.c.is_repeat.is_(True), 1), else_=0)).label("n_repeats"),
               func.avg(ratings.c.seconds_spent).label("mean_seconds"),
               func.max(ratings.c.created_at).label("last_rating_at"))
        .select_from(ratings.join(items, items.c.item_id == ratings.c.item_id)
                     .join(raters, raters.c.code == ratings.c.rater))
        .where(items.c.project_id == project_id, _in_force())
        .group_by(ratings.c.rater, raters.c.role, raters.c.kind)
        .order_by(func.count().desc(), ratings.c.rater)
    )
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def rating_keys(conn: Connection, item_ids: list[int]) -> set[tuple[int, str, datetime]]:
    """(item_id, rater, created_at) of every rating of ``item_ids``."""
    out: set[tuple[int, str, datetime]] = set()
    for start in range(0, len(item_ids), IN_CHUNK):
        stmt = select(ratings.c.item_id, ratings.c.rater, ratings.c.created_at).where(
            ratings.c.item_id.in_(item_ids[start:start + IN_CHUNK]))
        out.update((i, r, c) for i, r, c in conn.execute(stmt))
    return out


def insert_ratings(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert rating rows (the caller recounts the items: :func:`core.labeling.store.catalog.recount_items`)."""
    conn.execute(ratings.insert(), rows)


_COUNT_RATING = update(items).where(items.c.item_id == P("iid")).values(
    n_ratings=items.c.n_ratings + 1, n_raters=items.c.n_raters + P("inc"))


def insert_rating(conn: Connection, row: dict[str, Any], *, counts_toward_target: bool) -> int:
    """Insert one rating and bump its item's counters in the same transaction; returns the rating id."""
    result = conn.execute(ratings.insert(), row)
    conn.execute(_COUNT_RATING, {"iid": row["item_id"], "inc": 1 if counts_toward_target else 0})
    return int(result.inserted_primary_key[0])  # type: ignore[index]


_ROUND_RATING = (
    select(ratings.c.rating_id, ratings.c.score, ratings.c.created_at, ratings.c.is_repeat)
    .where(ratings.c.item_id == P("iid"), ratings.c.rater == P("rater"), ratings.c.round_key == P("round"), _in_force())
    .order_by(ratings.c.created_at.desc(), ratings.c.rating_id.desc()).limit(1)
)
_LATEST_MINE = (
    select(ratings.c.rating_id, ratings.c.score, ratings.c.created_at, ratings.c.is_repeat)
    .where(ratings.c.item_id == P("iid"), ratings.c.rater == P("rater"), _in_force())
    .order_by(ratings.c.created_at.desc(), ratings.c.rating_id.desc()).limit(1)
)


def round_rating(conn: Connection, item_id: int, rater: str, round_key: str | None) -> Row | None:
    """The rater's rating in force of ``item_id`` given in round ``round_key`` (a reservation token);
    without a round, their latest rating in force of the item (rating_id, score, created_at, is_repeat)."""
    if round_key is None:
        return conn.execute(_LATEST_MINE, {"iid": item_id, "rater": rater}).first()
    return conn.execute(_ROUND_RATING, {"iid": item_id, "rater": rater, "round": round_key}).first()


def rating_row(conn: Connection, rating_id: int) -> Row | None:
    """One rating with its project and whether it is in force."""
    stmt = (select(ratings, items.c.project_id, case((_in_force(), True), else_=False).label("in_force"))
            .join(items, items.c.item_id == ratings.c.item_id).where(ratings.c.rating_id == rating_id))
    return conn.execute(stmt).first()


def superseding_rating(conn: Connection, rating_id: int) -> Row | None:
    """The rating in force that (directly or through a chain) replaced ``rating_id``."""
    seen = {rating_id}
    current = rating_id
    while True:
        row = conn.execute(select(ratings.c.rating_id, ratings.c.score).where(ratings.c.supersedes == current)).first()
        if row is None:
            return None if current == rating_id else conn.execute(
                select(ratings.c.rating_id, ratings.c.score).where(ratings.c.rating_id == current)).first()
        if row.rating_id in seen:  # never happens: supersedes points backwards in time
            return row
        seen.add(row.rating_id)
        current = row.rating_id


def recent_ratings(store: LabelStore, project_id: int, rater: str, limit: int) -> list[Row]:
    """The rater's latest ratings in force in the project, newest first (rating_id, item_id, score,
    notes, created_at, is_repeat, prompt_title, answers)."""
    stmt = (select(ratings.c.rating_id, ratings.c.item_id, ratings.c.score, ratings.c.notes, ratings.c.created_at,
                   ratings.c.is_repeat, items.c.prompt_title, ratings.c.answers)
            .join(items, items.c.item_id == ratings.c.item_id)
            .where(items.c.project_id == project_id, ratings.c.rater == rater, _in_force())
            .order_by(ratings.c.created_at.desc(), ratings.c.rating_id.desc()).limit(limit))
    with store.read() as conn:
        return list(conn.execute(stmt).all())


def rating_answers(conn: Connection, rating_id: int) -> dict[str, str] | None:
    """The answers of one rating (a judgment audit's), or None."""
    text = conn.execute(select(ratings.c.answers).where(ratings.c.rating_id == rating_id)).scalar()
    return json.loads(text) if text else None


def answer_rows(store: LabelStore, project_id: int, *, include_models: bool = False) -> list[tuple]:
    """The project's answers in force (rating_id, item_id, rater, answers JSON, notes, created_at,
    is_repeat), oldest first; human raters only unless ``include_models``."""
    stmt = (
        select(ratings.c.rating_id, ratings.c.item_id, ratings.c.rater, ratings.c.answers, ratings.c.notes,
               ratings.c.created_at, ratings.c.is_repeat)
        .select_from(ratings.join(items, items.c.item_id == ratings.c.item_id)
                     .join(raters, raters.c.code == ratings.c.rater))
        .where(items.c.project_id == project_id, _in_force(), ratings.c.answers.is_not(None))
        .order_by(ratings.c.created_at, ratings.c.rating_id)
    )
    if not include_models:
        stmt = stmt.where(raters.c.kind == "human")
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def item_scores_in_force(conn: Connection, item_id: int) -> list[tuple[str, float]]:
    """(rater, score) of each human rater's latest rating in force of the item."""
    stmt = (select(ratings.c.rater, ratings.c.score)
            .join(raters, raters.c.code == ratings.c.rater)
            .where(ratings.c.item_id == item_id, raters.c.kind == "human", _in_force())
            .order_by(ratings.c.created_at, ratings.c.rating_id))
    latest: dict[str, float] = {}
    for rater, score in conn.execute(stmt):
        latest[rater] = float(score)
    return list(latest.items())


def rater_counts(store: LabelStore, project_id: int, rater: str) -> tuple[list[tuple[int, int, int]], tuple[int, int, int]]:
    """(n_raters, extra_raters → items) of the project, and the rater's (distinct items, ratings in
    force, repeats) in it."""
    in_project = items.c.project_id == project_id
    with store.read() as conn:
        # grouped by n_raters alone in index order (no temporary B-tree), the few routed items apart
        per_level: dict[int, int] = {int(k): int(n) for k, n in conn.execute(
            select(items.c.n_raters, func.count()).where(in_project).group_by(items.c.n_raters)).all()}
        routed = conn.execute(select(items.c.n_raters, items.c.extra_raters, func.count())
                              .where(in_project, items.c.extra_raters > 0)
                              .group_by(items.c.n_raters, items.c.extra_raters)).all()
        mine = conn.execute(
            select(func.count(func.distinct(ratings.c.item_id)), func.count(),
                   func.coalesce(func.sum(case((ratings.c.is_repeat.is_(True), 1), else_=0)), 0))
            .select_from(ratings.join(items, items.c.item_id == ratings.c.item_id))
            .where(in_project, ratings.c.rater == rater, _in_force())
        ).one()
    for k, _, n in routed:
        per_level[k] -= n
    levels = [(int(k), 0, int(n)) for k, n in per_level.items() if n] + [(int(k), int(e), int(n)) for k, e, n in routed]
    return levels, (int(mine[0]), int(mine[1]), int(mine[2]))
