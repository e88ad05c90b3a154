"""Statements of a judgment audit's adjudicated field values (``field_consensus``, version 4)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from core.labeling.store.engine import LabelStore
from core.labeling.store.tables import field_consensus, items, ratings


def field_adjudication_rows(store: LabelStore, project_id: int) -> list[tuple]:
    """The latest adjudication of each (item, field) of the project: item_id, field, value, note,
    adjudicator, created_at."""
    stmt = (select(field_consensus.c.item_id, field_consensus.c.field, field_consensus.c.value, field_consensus.c.note,
                   field_consensus.c.adjudicator, field_consensus.c.created_at)
            .join(items, items.c.item_id == field_consensus.c.item_id)
            .where(items.c.project_id == project_id)
            .order_by(field_consensus.c.created_at, field_consensus.c.field_consensus_id))
    latest: dict[tuple[int, str], tuple] = {}
    with store.read() as conn:
        for row in conn.execute(stmt):
            latest[(int(row[0]), str(row[1]))] = tuple(row)
    return list(latest.values())


def insert_field_consensus(store: LabelStore, row: dict[str, Any]) -> int:
    """Insert one adjudicated field value; returns its id."""
    with store.write() as conn:
        result = conn.execute(field_consensus.insert().values(**row))
        return int(result.inserted_primary_key[0])  # type: ignore[index]


def audit_stamp(store: LabelStore, project_id: int) -> tuple:
    """What changes when an audit's answers or adjudications change: (answers, newest answer,
    adjudications, newest adjudication) of the project (a cache key)."""


    with store.read() as conn:
        answers = conn.execute(select(func.count(), func.max(ratings.c.created_at)).select_from(
            ratings.join(items, items.c.item_id == ratings.c.item_id)).where(items.c.project_id == project_id)).one()
        adjudicated = conn.execute(select(func.count(), func.max(field_consensus.c.created_at)).select_from(
            field_consensus.join(items, items.c.item_id == field_consensus.c.item_id))
            .where(items.c.project_id == project_id)).one()
    return (int(answers[0]), str(answers[1]), int(adjudicated[0]), str(adjudicated[1]))
