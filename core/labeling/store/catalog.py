"""Statements of the project catalogue: projects, items, raters, retired codes and rater links.

Every SQL statement of the labeling package lives in this package, behind a named function; the
other modules (assignment, consensus, export, identity, items, reports) decide, these read and
write. A function taking ``conn`` runs inside the caller's transaction; one taking ``store`` opens
its own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, bindparam, func, select, tuple_, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Row

from core.labeling.store.engine import LabelStore
from core.labeling.store.tables import (
    consensus,
    items,
    projects,
    rater_links,
    rater_retirements,
    raters,
    ratings,
)

P = bindparam
IN_CHUNK = 500  # keys per IN (...) list
_ITEM = select(items).where(items.c.item_id == P("iid"))


def insert_ignore(store: LabelStore, table: Table) -> Any:
    """An INSERT that the caller turns into ON CONFLICT DO NOTHING (both dialects have it)."""
    if store.dialect == "postgresql":
        # deferred: the PostgreSQL dialect (~25 ms of imports) only for a PostgreSQL store; Home opens
        # the default SQLite one in the first page's run
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    return sqlite.insert(table)


# projects
def project_row(conn: Connection, name: str) -> Row | None:
    """The ``projects`` row called ``name``, or None."""
    return conn.execute(select(projects).where(projects.c.name == name)).first()


def project_names(conn: Connection) -> list[str]:
    """Every project name."""
    return list(conn.execute(select(projects.c.name)).scalars().all())


def project_rows(store: LabelStore) -> list[Row]:
    """Every ``projects`` row, oldest first."""
    with store.read() as conn:
        return list(conn.execute(select(projects).order_by(projects.c.created_at, projects.c.project_id)).all())


def insert_project(conn: Connection, values: dict[str, Any]) -> None:
    """Insert one project."""
    conn.execute(projects.insert().values(**values))


def update_project_row(store: LabelStore, project_id: int, values: dict[str, Any]) -> None:
    """Change settings of one project."""
    with store.write() as conn:
        conn.execute(update(projects).where(projects.c.project_id == project_id).values(**values))


# items
def count_items(conn: Connection, project_id: int | None = None) -> int:
    """Items in the store (or in one project)."""
    stmt = select(func.count()).select_from(items)
    if project_id is not None:
        stmt = stmt.where(items.c.project_id == project_id)
    return int(conn.execute(stmt).scalar() or 0)


def insert_items_ignoring_existing(conn: Connection, store: LabelStore, rows: list[dict[str, Any]]) -> None:
    """Insert item rows; a row whose (dataset, identifier, run_id) exists already is skipped."""
    stmt = insert_ignore(store, items).on_conflict_do_nothing(index_elements=["dataset", "identifier", "run_id"])
    conn.execute(stmt, rows)


def insert_item(conn: Connection, values: dict[str, Any]) -> int:
    """Insert one item; returns its id."""
    result = conn.execute(items.insert().values(**values))
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def item_row(conn: Connection, item_id: int) -> Row | None:
    """The ``items`` row of ``item_id``, or None."""
    return conn.execute(_ITEM, {"iid": item_id}).first()


def item_ids_by_key(conn: Connection, keys: set[tuple[str, str, str]]) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(dataset, identifier, run_id) → (item id, project id) of the keys that exist."""
    found: dict[tuple[str, str, str], tuple[int, int]] = {}
    key_list = sorted(keys)
    for start in range(0, len(key_list), IN_CHUNK):
        chunk = key_list[start:start + IN_CHUNK]
        stmt = select(items.c.dataset, items.c.identifier, items.c.run_id, items.c.item_id, items.c.project_id).where(
            tuple_(items.c.dataset, items.c.identifier, items.c.run_id).in_(chunk))
        found.update({(d, i, r): (item_id, pid) for d, i, r, item_id, pid in conn.execute(stmt)})
    return found


def recount_items(conn: Connection, item_ids: list[int]) -> None:
    """Recompute ``n_raters`` (distinct human raters) and ``n_ratings`` of items from their ratings."""
    for start in range(0, len(item_ids), IN_CHUNK):
        chunk = item_ids[start:start + IN_CHUNK]
        n_ratings = select(func.count()).where(ratings.c.item_id == items.c.item_id).scalar_subquery()
        n_raters = (select(func.count(func.distinct(ratings.c.rater)))
                    .select_from(ratings.join(raters, raters.c.code == ratings.c.rater))
                    .where(ratings.c.item_id == items.c.item_id, raters.c.kind == "human").scalar_subquery())
        conn.execute(update(items).where(items.c.item_id.in_(chunk)).values(n_ratings=n_ratings, n_raters=n_raters))


def item_rows(store: LabelStore, project_id: int, columns: list[str], item_ids: list[int] | None = None) -> list[tuple]:
    """``columns`` of the project's items (all, or those in ``item_ids``), oldest first."""
    stmt = select(*(items.c[name] for name in columns)).where(items.c.project_id == project_id)
    if item_ids is not None:
        stmt = stmt.where(items.c.item_id.in_(item_ids))
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt.order_by(items.c.created_at, items.c.item_id)).all()]


def items_by_rater_count(store: LabelStore, project_id: int) -> dict[int, int]:
    """Number of (human) raters → number of the project's items with that many."""
    stmt = select(items.c.n_raters, func.count()).where(items.c.project_id == project_id).group_by(items.c.n_raters)
    with store.read() as conn:
        return {int(k): int(v) for k, v in conn.execute(stmt).all()}


# raters
def rater_exists(conn: Connection, code: str) -> bool:
    """Whether ``code`` is a stored rater."""
    return conn.execute(select(raters.c.code).where(raters.c.code == code)).first() is not None


def insert_rater_if_new(conn: Connection, store: LabelStore, code: str, *, role: str, kind: str) -> None:
    """Insert a rater unless the code exists (a concurrent insert of the same code is not an error)."""
    stmt = insert_ignore(store, raters).values(code=code, role=role, kind=kind, created_at=store.clock())
    conn.execute(stmt.on_conflict_do_nothing(index_elements=["code"]))


def rater_role(store: LabelStore, code: str) -> str | None:
    """The stored role of ``code`` (None for an unknown code)."""
    with store.read() as conn:
        return conn.execute(select(raters.c.role).where(raters.c.code == code)).scalar()


def update_rater_role(conn: Connection, code: str, role: str) -> None:
    """Set the role of an existing rater."""
    conn.execute(update(raters).where(raters.c.code == code).values(role=role))


def retire_code(store: LabelStore, code: str, *, by: str, reason: str) -> bool:
    """Record the retirement of ``code`` (once; a second call changes nothing). False: no such rater."""
    with store.write() as conn:
        if not rater_exists(conn, code):
            return False
        if conn.execute(select(rater_retirements.c.code).where(rater_retirements.c.code == code)).scalar() is None:
            conn.execute(rater_retirements.insert().values(code=code, retired_at=store.clock(), retired_by=by,
                                                           reason=reason))
        return True


def retired_rater_codes(store: LabelStore) -> set[str]:
    """Codes an admin retired."""
    with store.read() as conn:
        return {r for (r,) in conn.execute(select(rater_retirements.c.code))}


def rater_rows(store: LabelStore) -> list[tuple]:
    """Every rater: code, role, kind, created_at, n_ratings (all projects), retired_at, retired_by."""
    n = func.count(ratings.c.rating_id)
    stmt = (
        select(raters.c.code, raters.c.role, raters.c.kind, raters.c.created_at, n.label("n_ratings"),
               rater_retirements.c.retired_at, rater_retirements.c.retired_by)
        .select_from(raters.outerjoin(ratings, ratings.c.rater == raters.c.code)
                     .outerjoin(rater_retirements, rater_retirements.c.code == raters.c.code))
        .group_by(raters.c.code, raters.c.role, raters.c.kind, raters.c.created_at,
                  rater_retirements.c.retired_at, rater_retirements.c.retired_by)
        .order_by(raters.c.code)
    )
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


# rater links (team mode): only the SHA-256 of a token is stored
def insert_rater_link(store: LabelStore, token_hash: str, code: str, *, by: str) -> None:
    """Store a new link of ``code`` (the rater must exist)."""
    with store.write() as conn:
        conn.execute(rater_links.insert().values(token_hash=token_hash, code=code, created_at=store.clock(),
                                                 created_by=by))


def rater_of_link(store: LabelStore, token_hash: str) -> str | None:
    """The rater code of an unrevoked link whose code is not retired, else None."""
    retired = select(rater_retirements.c.code).where(rater_retirements.c.code == rater_links.c.code).exists()
    stmt = select(rater_links.c.code).where(rater_links.c.token_hash == token_hash,
                                            rater_links.c.revoked_at.is_(None), ~retired)
    with store.read() as conn:
        return conn.execute(stmt).scalar()


def revoke_rater_links(store: LabelStore, code: str, now: datetime) -> int:
    """Revoke every active link of ``code``; returns how many."""
    with store.write() as conn:
        result = conn.execute(update(rater_links).where(rater_links.c.code == code, rater_links.c.revoked_at.is_(None))
                              .values(revoked_at=now))
        return int(result.rowcount or 0)


def rater_link_rows(store: LabelStore) -> list[tuple]:
    """Every link: code, created_at, created_by, revoked_at (never the hash), newest first."""
    stmt = select(rater_links.c.code, rater_links.c.created_at, rater_links.c.created_by, rater_links.c.revoked_at
                  ).order_by(rater_links.c.created_at.desc())
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def run_item_metadata(store: LabelStore, project_id: int, run_id: str) -> str | None:
    """The metadata (JSON text) of one item of ``project_id`` that came from study run ``run_id``."""
    stmt = select(items.c.metadata).where(items.c.project_id == project_id).where(items.c.run_id == run_id).limit(1)
    with store.read() as conn:
        return conn.execute(stmt).scalar()


def change_stamp(store: LabelStore) -> tuple[int, int]:
    """A stamp that changes with every new rating or consensus record (for caches of derived views)."""
    with store.read() as conn:
        n = conn.execute(select(func.count(), func.max(ratings.c.rating_id))).one()
        c = conn.execute(select(func.max(consensus.c.consensus_id))).scalar()
    return (int(n[0] or 0) * 1_000_003 + int(n[1] or 0), int(c or 0))

