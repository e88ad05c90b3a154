"""Statements of review: consensus records and the adjudication queue's claims.

An adjudicator opening the disagreement queue claims one item for a few minutes (one claim per
adjudicator and project); the decision runs under the project lock, so two adjudicators opening
the queue at once never hold the same item.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, select
from sqlalchemy.engine import Row

from core.labeling.store.engine import LabelStore
from core.labeling.store.tables import adjudication_claims, consensus, items


# consensus
def adjudication_rows(store: LabelStore, project_id: int) -> list[tuple]:
    """Adjudicated consensus records of the project: item_id, value, note, adjudicator, created_at, consensus_id."""
    stmt = (
        select(consensus.c.item_id, consensus.c.value, consensus.c.note, consensus.c.adjudicator,
               consensus.c.created_at, consensus.c.consensus_id)
        .join(items, items.c.item_id == consensus.c.item_id)
        .where(items.c.project_id == project_id, consensus.c.source == "adjudicated")
    )
    with store.read() as conn:
        return [tuple(r) for r in conn.execute(stmt).all()]


def calculated_consensus_rows(store: LabelStore, project_id: int) -> list[Row]:
    """Calculated consensus records of the project (item_id, value, raw_scores, raters, …), oldest first."""
    stmt = (select(consensus.c.item_id, consensus.c.value, consensus.c.raw_scores, consensus.c.raters,
                   consensus.c.created_at, consensus.c.consensus_id)
            .join(items, items.c.item_id == consensus.c.item_id)
            .where(items.c.project_id == project_id, consensus.c.source == "calculated")
            .order_by(consensus.c.created_at, consensus.c.consensus_id))
    with store.read() as conn:
        return list(conn.execute(stmt).all())


def insert_consensus(store: LabelStore, row: dict[str, Any]) -> int:
    """Insert one consensus record; returns its id."""
    with store.write() as conn:
        result = conn.execute(consensus.insert().values(**row))
        return int(result.inserted_primary_key[0])  # type: ignore[index]


def insert_consensus_rows(store: LabelStore, rows: list[dict[str, Any]]) -> None:
    """Insert consensus records in one transaction."""
    with store.write() as conn:
        conn.execute(consensus.insert(), rows)


# adjudication claims
def active_claims(conn: Connection, project_id: int, now: datetime) -> dict[int, str]:
    """item_id → adjudicator of every unexpired claim in the project."""
    stmt = select(adjudication_claims.c.item_id, adjudication_claims.c.adjudicator).where(
        adjudication_claims.c.project_id == project_id, adjudication_claims.c.expires_at > now)
    return {int(i): str(a) for i, a in conn.execute(stmt)}


def release_claim(conn: Connection, project_id: int, adjudicator: str) -> None:
    """Drop the adjudicator's claim in the project."""
    conn.execute(delete(adjudication_claims).where(adjudication_claims.c.project_id == project_id,
                                                   adjudication_claims.c.adjudicator == adjudicator))


def insert_claim(conn: Connection, values: dict[str, Any]) -> None:
    """Claim an item (``project_id, adjudicator, item_id, claimed_at, expires_at``)."""
    conn.execute(adjudication_claims.insert().values(**values))
