"""Consensus of an item's ratings (SPEC §6.3).

Items with ratings from at least two raters (each rater's latest rating counts once; model raters
only when asked): when no two scores have opposite signs (all ≥ 0 or all ≤ 0, so all-zero too),
the consensus is their mean (``calculated``); with mixed signs the item "needs discussion" until an
adjudicator records a value and a note (``adjudicated``). Zero is treated as sign-neutral: a 0
next to positive scores is not a disagreement of direction.

Every consensus record keeps its source, the raw scores and the raters. An adjudication applies
while no rating newer than it exists; a later rating puts the item back in the queue with the
old adjudication shown (``stale``).
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from core.base.errors import WorkbenchError
from core.labeling.assignment import check_score
from core.labeling.identity import REVIEW_ROLES, get_role
from core.labeling.items import Project
from core.labeling.reports import latest_ratings, ratings_frame
from core.labeling.store import LabelStore
from core.labeling.store import review_sql as sql

NEEDS_DISCUSSION = "needs_discussion"
CONSENSUS_SCHEMA: dict[str, Any] = {
    "item_id": pl.Int64, "n_ratings": pl.Int64, "raters": pl.List(pl.String), "scores": pl.List(pl.Float64),
    "spread": pl.Float64, "mixed_signs": pl.Boolean, "calculated": pl.Float64, "consensus": pl.Float64,
    "consensus_source": pl.String, "note": pl.String, "adjudicator": pl.String,
    "adjudicated_at": pl.Datetime("us"), "stale": pl.Boolean,
}


def consensus_rule(scores: list[float]) -> float | None:
    """The calculated consensus of one item's scores: the mean, or None for mixed signs.

    >>> consensus_rule([0.5, 0.25, 0.0])
    0.25
    >>> consensus_rule([0.5, -0.25]) is None
    True
    """
    if len(scores) < 2:
        raise ValueError(f"consensus needs at least 2 scores, got {len(scores)}")
    if min(scores) < 0 < max(scores):
        return None
    return round(sum(scores) / len(scores), 6)


def _adjudications(store: LabelStore, project: Project) -> pl.DataFrame:
    rows = sql.adjudication_rows(store, project.project_id)
    frame = pl.DataFrame(rows, orient="row", schema={
        "item_id": pl.Int64, "adj_value": pl.Float64, "note": pl.String, "adjudicator": pl.String,
        "adjudicated_at": pl.Datetime("us"), "consensus_id": pl.Int64})
    return frame.sort("adjudicated_at", "consensus_id").unique("item_id", keep="last").drop("consensus_id")


def compute_consensus(store: LabelStore, project: Project, *, include_models: bool = False) -> pl.DataFrame:
    """One row per item with ≥ 2 raters: raters, scores, spread, the consensus and its source.

    ``consensus_source`` is ``calculated``, ``adjudicated`` or ``needs_discussion`` (consensus null).
    """
    latest = latest_ratings(ratings_frame(store, project, include_models=include_models))
    grouped = (
        latest.sort("item_id", "rater")
        .group_by("item_id", maintain_order=True)
        .agg(pl.len().alias("n_ratings"), pl.col("rater").alias("raters"), pl.col("score").alias("scores"),
             (pl.col("score").max() - pl.col("score").min()).alias("spread"),
             ((pl.col("score").min() < 0) & (pl.col("score").max() > 0)).alias("mixed_signs"),
             pl.col("score").mean().round(6).alias("mean"), pl.col("created_at").max().alias("last_rating_at"))
        .filter(pl.col("n_ratings") >= 2)
    )
    if grouped.is_empty():
        return pl.DataFrame(schema=CONSENSUS_SCHEMA)
    adj = _adjudications(store, project)
    frame = grouped.join(adj, on="item_id", how="left").with_columns(
        pl.when(pl.col("mixed_signs")).then(None).otherwise(pl.col("mean")).alias("calculated"),
        (pl.col("adjudicated_at").is_not_null() & (pl.col("adjudicated_at") < pl.col("last_rating_at"))).alias("stale"),
    )
    current = pl.col("adj_value").is_not_null() & ~pl.col("stale")
    frame = frame.with_columns(
        pl.when(current).then(pl.col("adj_value")).otherwise(pl.col("calculated")).alias("consensus"),
        pl.when(current).then(pl.lit("adjudicated"))
        .when(pl.col("mixed_signs")).then(pl.lit(NEEDS_DISCUSSION))
        .otherwise(pl.lit("calculated")).alias("consensus_source"),
    )
    return frame.select([pl.col(name).cast(dtype) for name, dtype in CONSENSUS_SCHEMA.items()]).sort("item_id")


def disagreement_queue(frame: pl.DataFrame) -> pl.DataFrame:
    """Items that need an adjudicator first (mixed signs, not adjudicated or stale), then the
    rest; each group sorted by spread, widest first."""
    return frame.with_columns(
        (pl.col("consensus_source") == NEEDS_DISCUSSION).alias("open")
    ).sort(["open", "spread", "item_id"], descending=[True, True, False])


def adjudicate(store: LabelStore, project: Project, item_id: int, value: float, *, adjudicator: str,
               note: str, include_models: bool = False) -> int:
    """Record an adjudicated consensus for ``item_id`` with the raw scores and raters behind it.

    Raises:
        WorkbenchError: ``adjudicator`` is not an adjudicator or admin, or the item has < 2 ratings.
        ValueError: bad value or blank note.
    """
    value = check_score(value)
    if get_role(store, adjudicator) not in REVIEW_ROLES:
        raise WorkbenchError(f"{adjudicator!r} may not adjudicate: needs the adjudicator or admin role")
    if not (note or "").strip():
        raise ValueError("an adjudication needs a note saying why")
    frame = compute_consensus(store, project, include_models=include_models).filter(pl.col("item_id") == item_id)
    if frame.is_empty():
        raise WorkbenchError(f"item {item_id} has fewer than 2 ratings in project {project.name!r}")
    row = frame.row(0, named=True)
    return _insert(store, item_id, value, "adjudicated", row["scores"], row["raters"], note.strip(), adjudicator)


def _insert(store: LabelStore, item_id: int, value: float, source: str, scores: list[float], raters: list[str],
            note: str | None, adjudicator: str | None) -> int:
    return sql.insert_consensus(store, {
        "item_id": item_id, "value": value, "source": source, "raw_scores": json.dumps(scores),
        "raters": json.dumps(raters), "note": note, "adjudicator": adjudicator, "created_at": store.clock()})


def record_calculated(store: LabelStore, project: Project, *, include_models: bool = False) -> int:
    """Store a ``calculated`` consensus record for every item whose calculated value, raters or
    scores changed since its last calculated record (a provenance snapshot). Returns how many."""
    frame = compute_consensus(store, project, include_models=include_models).filter(
        pl.col("calculated").is_not_null())
    last = {r.item_id: (r.value, json.loads(r.raw_scores), json.loads(r.raters))
            for r in sql.calculated_consensus_rows(store, project.project_id)}
    new = [r for r in frame.iter_rows(named=True)
           if last.get(r["item_id"]) != (r["calculated"], list(r["scores"]), list(r["raters"]))]
    if not new:
        return 0
    now = store.clock()
    sql.insert_consensus_rows(store, [
        {"item_id": r["item_id"], "value": r["calculated"], "source": "calculated",
         "raw_scores": json.dumps(list(r["scores"])), "raters": json.dumps(list(r["raters"])), "note": None,
         "adjudicator": None, "created_at": now} for r in new])
    return len(new)


def consensus_summary(frame: pl.DataFrame) -> dict[str, Any]:
    """Counts by source and the mean consensus, for the CLI and the review page."""
    counts = dict(frame.group_by("consensus_source").len().iter_rows()) if frame.height else {}
    return {
        "items": frame.height, "calculated": int(counts.get("calculated", 0)),
        "adjudicated": int(counts.get("adjudicated", 0)), NEEDS_DISCUSSION: int(counts.get(NEEDS_DISCUSSION, 0)),
        "stale_adjudications": int(frame["stale"].sum()) if frame.height else 0,
        "mean_consensus": frame["consensus"].mean() if frame.height else None,
    }
