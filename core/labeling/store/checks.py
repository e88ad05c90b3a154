"""Consistency checks of a label store (the concurrency tests and ``labels status`` use them)."""

from __future__ import annotations

from sqlalchemy import Connection, func, select

from core.labeling.store.engine import LabelStore
from core.labeling.store.tables import items, raters, ratings


def integrity_problems(store: LabelStore) -> list[str]:
    """Consistency checks of a store (empty list = consistent).

    SQLite's own ``integrity_check`` and ``foreign_key_check``; every item's ``n_ratings`` and
    ``n_raters`` equal to what its ratings say; exactly one first-pass (non-repeat) rating per
    (item, rater) besides its corrections; every correction replacing an earlier rating of the same
    item and rater, each rating replaced at most once; every score in [-1, 1].
    """
    problems: list[str] = []
    with store.read() as conn:
        if store.dialect == "sqlite":
            result = conn.exec_driver_sql("PRAGMA integrity_check").scalars().all()
            if result != ["ok"]:
                problems.append(f"sqlite integrity_check: {result[:5]}")
            fk = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
            if fk:
                problems.append(f"{len(fk)} rows violate foreign keys, e.g. {fk[:3]}")
        n_ratings = select(func.count()).where(ratings.c.item_id == items.c.item_id).scalar_subquery()
        n_raters = (select(func.count(func.distinct(ratings.c.rater)))
                    .select_from(ratings.join(raters, raters.c.code == ratings.c.rater))
                    .where(ratings.c.item_id == items.c.item_id, raters.c.kind == "human").scalar_subquery())
        bad = conn.execute(select(items.c.item_id).where(
            (items.c.n_ratings != n_ratings) | (items.c.n_raters != n_raters))).scalars().all()
        if bad:
            problems.append(f"{len(bad)} items have wrong rating counters, e.g. {bad[:5]}")
        firsts = (select(ratings.c.item_id, ratings.c.rater)
                  .where(ratings.c.is_repeat.is_(False), ratings.c.supersedes.is_(None)).group_by(ratings.c.item_id, ratings.c.rater)
                  .having(func.count() != 1))
        dup = conn.execute(firsts).all()
        if dup:
            problems.append(f"{len(dup)} (item, rater) pairs have several first-pass ratings, e.g. {dup[:3]}")
        pairs = select(ratings.c.item_id, ratings.c.rater).group_by(ratings.c.item_id, ratings.c.rater).subquery()
        with_first = select(func.count()).select_from(pairs).where(
            ~select(ratings.c.rating_id).where(ratings.c.item_id == pairs.c.item_id, ratings.c.rater == pairs.c.rater,
                                               ratings.c.is_repeat.is_(False)).exists())
        missing = int(conn.execute(with_first).scalar() or 0)
        if missing:
            problems.append(f"{missing} (item, rater) pairs have only repeat ratings")
        problems += _correction_problems(conn)
        out_of_range = conn.execute(select(func.count()).where((ratings.c.score < -1) | (ratings.c.score > 1))).scalar()
        if out_of_range:
            problems.append(f"{out_of_range} ratings lie outside [-1, 1]")
    return problems


def _correction_problems(conn: Connection) -> list[str]:
    old = ratings.alias("old")
    wrong = conn.execute(select(func.count()).select_from(ratings.join(old, old.c.rating_id == ratings.c.supersedes))
                         .where((old.c.item_id != ratings.c.item_id) | (old.c.rater != ratings.c.rater)
                                | (old.c.rating_id >= ratings.c.rating_id))).scalar()
    dangling = conn.execute(select(func.count()).where(
        ratings.c.supersedes.is_not(None), ~select(old.c.rating_id).where(old.c.rating_id == ratings.c.supersedes)
        .exists())).scalar()
    twice = conn.execute(select(ratings.c.supersedes).where(ratings.c.supersedes.is_not(None))
                         .group_by(ratings.c.supersedes).having(func.count() > 1)).all()
    out = []
    if wrong or dangling:
        out.append(f"{int(wrong or 0) + int(dangling or 0)} corrections point to another item's, rater's or a later rating")
    if twice:
        out.append(f"{len(twice)} ratings were replaced more than once, e.g. {[r[0] for r in twice[:3]]}")
    return out
