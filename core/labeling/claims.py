"""Claims on the disagreement queue: two adjudicators never work on the same item at once.

Opening the queue claims its first item that no other adjudicator holds (for
:data:`CLAIM_SECONDS`); asking again returns the same item while it is claimed and still in the
queue. Recording a consensus or opening another item moves the claim. Each decision runs in one
write transaction under the project lock (SQLite ``BEGIN IMMEDIATE``, PostgreSQL ``SELECT … FOR
UPDATE`` on the project row), so two adjudicators opening the queue at the same moment get
different items.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from core.labeling.identity import ensure_rater
from core.labeling.items import Project
from core.labeling.store import LabelStore, review_sql

CLAIM_SECONDS = 600


def claim(store: LabelStore, project: Project, adjudicator: str, queue: Sequence[int], *,
          wanted: int | None = None, seconds: int = CLAIM_SECONDS) -> int | None:
    """Claim an item of ``queue`` (item ids in queue order) for ``adjudicator`` and return it.

    Args:
        wanted: the item the adjudicator opened; claimed when nobody else holds it.

    Returns:
        ``wanted`` if free, else the adjudicator's current claim if still in the queue, else the
        first item nobody else holds; None when every item is held by others.
    """
    with store.write() as conn:
        store.lock_project(conn, project.project_id)
        ensure_rater(conn, store, adjudicator)
        now = store.clock()
        held = review_sql.active_claims(conn, project.project_id, now)
        others = {item for item, who in held.items() if who != adjudicator}
        mine = next((item for item, who in held.items() if who == adjudicator), None)
        if wanted is not None and wanted in queue and wanted not in others:
            choice: int | None = wanted
        elif mine is not None and mine in queue:
            choice = mine
        else:
            choice = next((item for item in queue if item not in others), None)
        review_sql.release_claim(conn, project.project_id, adjudicator)
        if choice is not None:
            review_sql.insert_claim(conn, {"project_id": project.project_id, "adjudicator": adjudicator,
                                           "item_id": choice, "claimed_at": now,
                                           "expires_at": now + timedelta(seconds=seconds)})
        return choice


def release(store: LabelStore, project: Project, adjudicator: str) -> None:
    """Drop the adjudicator's claim (after recording a consensus with nothing left, or on leaving)."""
    with store.write() as conn:
        review_sql.release_claim(conn, project.project_id, adjudicator)


def claimed_by(store: LabelStore, project: Project) -> dict[int, str]:
    """item_id → adjudicator of every active claim in the project."""
    with store.read() as conn:
        return review_sql.active_claims(conn, project.project_id, store.clock())
