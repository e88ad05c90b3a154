"""Consensus of a judgment audit's answers: per item and field, the majority of the raters, ties
to an adjudicator.

Each human rater's latest answer in force counts once. An item has a consensus once it has
``min(2, target raters)`` raters; per field the value most raters gave is its consensus
(``majority``, ``unanimous`` when all agree); when two or more values share the most votes the
field "needs adjudication" until an adjudicator records a value and a note (``adjudicated``). As for
scores (:mod:`core.labeling.consensus`), an adjudication applies while no answer newer than it
exists; a later answer puts the field back in the queue with the old adjudication shown (``stale``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import polars as pl

from core.base.errors import WorkbenchError
from core.labeling.identity import REVIEW_ROLES, get_role
from core.labeling.items import Project
from core.labeling.store import LabelStore, rating_sql
from core.labeling.store import answer_sql as sql

NEEDS_ADJUDICATION = "needs_adjudication"
ANSWER_SCHEMA: dict[str, Any] = {
    "rating_id": pl.Int64, "item_id": pl.Int64, "rater": pl.String, "answers": pl.String, "notes": pl.String,
    "created_at": pl.Datetime("us"), "is_repeat": pl.Boolean,
}
CONSENSUS_SCHEMA: dict[str, Any] = {
    "item_id": pl.Int64, "field": pl.String, "n_raters": pl.Int64, "raters": pl.List(pl.String),
    "values": pl.List(pl.String), "majority": pl.String, "consensus": pl.String, "source": pl.String,
    "note": pl.String, "adjudicator": pl.String, "adjudicated_value": pl.String, "stale": pl.Boolean,
}


def majority(values: list[str]) -> str | None:
    """The value most raters gave, or None when two or more share the most votes.

    >>> majority(["a", "b", "a"]), majority(["a", "b"]), majority(["a"])
    ('a', None, 'a')
    """
    if not values:
        raise ValueError("majority needs at least one value")
    (top, n), *rest = Counter(values).most_common()
    return None if rest and rest[0][1] == n else top


def answers_frame(store: LabelStore, project: Project, *, include_models: bool = False) -> pl.DataFrame:
    """Every answer in force of the audit ``project`` (JSON in ``answers``), oldest first."""
    return pl.DataFrame(rating_sql.answer_rows(store, project.project_id, include_models=include_models),
                        schema=ANSWER_SCHEMA, orient="row")


def _latest(frame: pl.DataFrame) -> dict[int, dict[str, dict[str, str]]]:
    """item → rater → their latest answers."""
    out: dict[int, dict[str, dict[str, str]]] = {}
    for row in frame.sort("created_at", "rating_id").iter_rows(named=True):
        out.setdefault(row["item_id"], {})[row["rater"]] = json.loads(row["answers"])
    return out


def compute_answer_consensus(store: LabelStore, project: Project, *, include_models: bool = False) -> pl.DataFrame:
    """One row per item with enough raters and per answer field: the raters' values, the majority
    (None on a tie), the consensus in force and its source (``unanimous``, ``majority``,
    ``adjudicated`` or ``needs_adjudication`` with a null consensus)."""
    if not project.is_audit:
        raise WorkbenchError(f"project {project.name!r} is not a judgment audit (its items have scores)")
    frame = answers_frame(store, project, include_models=include_models)
    last_answer = dict(frame.group_by("item_id").agg(pl.col("created_at").max()).iter_rows()) if frame.height else {}
    adjudications = {(r[0], r[1]): r for r in sql.field_adjudication_rows(store, project.project_id)}
    needed = min(2, project.target_raters)
    rows = []
    for item_id, by_rater in sorted(_latest(frame).items()):
        if len(by_rater) < needed:
            continue
        raters = sorted(by_rater)
        for f in project.answer_fields:
            values = [by_rater[r][f.name] for r in raters if f.name in by_rater[r]]
            top = majority(values) if values else None
            adj = adjudications.get((item_id, f.name))
            stale = adj is not None and adj[5] < last_answer[item_id]
            current = adj is not None and not stale
            source = ("adjudicated" if current else NEEDS_ADJUDICATION if top is None
                      else "unanimous" if len(set(values)) == 1 else "majority")
            rows.append({"item_id": item_id, "field": f.name, "n_raters": len(values), "raters": raters,
                         "values": values, "majority": top, "consensus": adj[2] if adj is not None and current else top, "source": source,
                         "note": adj[3] if adj else None, "adjudicator": adj[4] if adj else None,
                         "adjudicated_value": adj[2] if adj else None, "stale": bool(stale)})
    return pl.DataFrame(rows, schema=CONSENSUS_SCHEMA)


def consensus_answers(frame: pl.DataFrame) -> dict[int, dict[str, str]]:
    """item → field → consensus value, for the fields that have one (a :func:`compute_answer_consensus` frame)."""
    out: dict[int, dict[str, str]] = {}
    for item_id, name, value in frame.filter(pl.col("consensus").is_not_null()).select(
            "item_id", "field", "consensus").iter_rows():
        out.setdefault(item_id, {})[name] = value
    return out


def adjudicate_field(store: LabelStore, project: Project, item_id: int, field: str, value: str, *,
                     adjudicator: str, note: str) -> int:
    """Record the adjudicated value of one field of one item, with the raters' answers behind it.

    Raises:
        WorkbenchError: not an adjudicator or admin, or the item has too few raters.
        ValueError: a value outside the field, or a blank note.
    """
    if get_role(store, adjudicator) not in REVIEW_ROLES:
        raise WorkbenchError(f"{adjudicator!r} may not adjudicate: needs the adjudicator or admin role")
    spec = {f.name: f for f in project.answer_fields}
    if field not in spec:
        raise ValueError(f"unknown answer field {field!r}; valid: {', '.join(spec)}")
    if value not in spec[field].names:
        raise ValueError(f"{value!r} is not a value of {field}; valid: {', '.join(spec[field].names)}")
    if not (note or "").strip():
        raise ValueError("an adjudication needs a note saying why")
    rows = compute_answer_consensus(store, project).filter((pl.col("item_id") == item_id) & (pl.col("field") == field))
    if rows.is_empty():
        raise WorkbenchError(f"item {item_id} has too few raters in project {project.name!r} to adjudicate")
    row = rows.row(0, named=True)
    return sql.insert_field_consensus(store, {
        "item_id": item_id, "field": field, "value": value, "raw_answers": json.dumps(row["values"]),
        "raters": json.dumps(row["raters"]), "note": note.strip(), "adjudicator": adjudicator,
        "created_at": store.clock()})


def answer_summary(frame: pl.DataFrame) -> dict[str, Any]:
    """Items with a consensus, fields by source, and the items with a field awaiting adjudication."""
    counts = dict(frame.group_by("source").len().iter_rows()) if frame.height else {}
    waiting = frame.filter(pl.col("source") == NEEDS_ADJUDICATION)
    return {"items": frame["item_id"].n_unique() if frame.height else 0,
            **{s: int(counts.get(s, 0)) for s in ("unanimous", "majority", "adjudicated", NEEDS_ADJUDICATION)},
            "items_needing_adjudication": waiting["item_id"].n_unique() if waiting.height else 0,
            "stale_adjudications": int(frame["stale"].sum()) if frame.height else 0}
