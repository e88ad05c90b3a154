"""Read-only frames over the label store: ratings, items, coverage and rater progress."""

from __future__ import annotations

from typing import Any

import polars as pl

from core.labeling.items import Project
from core.labeling.store import LabelStore, catalog, rating_sql

RATING_SCHEMA: dict[str, Any] = {
    "rating_id": pl.Int64, "item_id": pl.Int64, "rater": pl.String, "kind": pl.String, "score": pl.Float64,
    "notes": pl.String, "created_at": pl.Datetime("us"), "seconds_spent": pl.Float64, "is_repeat": pl.Boolean,
    "supersedes": pl.Int64, "in_force": pl.Boolean,
}
ITEM_SCHEMA: dict[str, Any] = {
    "item_id": pl.Int64, "dataset": pl.String, "identifier": pl.String, "run_id": pl.String,
    "prompt_title": pl.String, "prompt_body": pl.String, "response_text": pl.String, "model_id": pl.String,
    "metadata": pl.String, "created_at": pl.Datetime("us"), "n_raters": pl.Int64, "n_ratings": pl.Int64,
}


def ratings_frame(store: LabelStore, project: Project, *, include_models: bool = False,
                  include_superseded: bool = False) -> pl.DataFrame:
    """Every rating in force of ``project`` (repeats included), oldest first.

    Args:
        include_models: also return ratings of model raters (``llm:…`` codes from imports).
        include_superseded: also return the ratings a correction replaced (``in_force`` false):
            the history; every statistic uses the ratings in force only.
    """
    rows = rating_sql.rating_rows(store, project.project_id, include_models=include_models,
                                  include_superseded=include_superseded)
    return pl.DataFrame(rows, schema=RATING_SCHEMA, orient="row")


def first_ratings(frame: pl.DataFrame) -> pl.DataFrame:
    """Each rater's first-pass rating of each item (the independent first pass, as corrected;
    repeats dropped)."""
    order = ["is_repeat", "created_at", "rating_id"] if "is_repeat" in frame.columns else ["created_at", "rating_id"]
    return frame.sort(order).unique(["item_id", "rater"], keep="first", maintain_order=True)


def latest_ratings(frame: pl.DataFrame) -> pl.DataFrame:
    """Each rater's latest rating of each item (their current opinion, after any repeat audit)."""
    return frame.sort("created_at", "rating_id").unique(["item_id", "rater"], keep="last", maintain_order=True)


def items_frame(store: LabelStore, project: Project, item_ids: list[int] | None = None) -> pl.DataFrame:
    """Items of ``project`` (all, or those in ``item_ids``), oldest first."""
    rows = catalog.item_rows(store, project.project_id, list(ITEM_SCHEMA), item_ids)
    return pl.DataFrame(rows, schema=ITEM_SCHEMA, orient="row")


def coverage(store: LabelStore, project: Project) -> pl.DataFrame:
    """Items by number of (human) raters: ``n_raters, n_items, n_complete`` for 0 … max, gaps
    filled with 0; ``n_complete`` counts those with all the raters they need (the target plus any
    extra rater routed to them because their raters disagreed)."""
    levels, _ = rating_sql.rater_counts(store, project.project_id, "")
    target = project.target_raters
    items_at: dict[int, int] = {}
    complete_at: dict[int, int] = {}
    for n_raters, extra, n in levels:
        items_at[n_raters] = items_at.get(n_raters, 0) + n
        complete_at[n_raters] = complete_at.get(n_raters, 0) + (n if n_raters >= target + extra else 0)
    top = max([target, *items_at])
    return pl.DataFrame({"n_raters": list(range(top + 1)), "n_items": [items_at.get(k, 0) for k in range(top + 1)],
                         "n_complete": [complete_at.get(k, 0) for k in range(top + 1)]},
                        schema={"n_raters": pl.Int64, "n_items": pl.Int64, "n_complete": pl.Int64})


def rater_progress_table(store: LabelStore, project: Project) -> pl.DataFrame:
    """Per rater: role, kind, ratings, distinct items, repeats, median seconds, last rating."""
    schema: dict[str, Any] = {"rater": pl.String, "role": pl.String, "kind": pl.String, "n_ratings": pl.Int64, "n_items": pl.Int64,
              "n_repeats": pl.Int64, "mean_seconds": pl.Float64, "last_rating_at": pl.Datetime("us")}
    return pl.DataFrame(rating_sql.rater_progress_rows(store, project.project_id), schema=schema, orient="row")


def routing_table(store: LabelStore, project: Project) -> pl.DataFrame:
    """Every extra rater routed to an item, oldest first, with why (``reason``) and the item's raters now."""
    # deferred: routing is only needed when a project routes extra raters
    from core.labeling.routing import explain
    from core.labeling.store import assign_sql

    with store.read() as conn:
        rows = assign_sql.routing_rows(conn, project.project_id)
    schema: dict[str, Any] = {"item_id": pl.Int64, "routed_at": pl.Datetime("us"), "reason": pl.String,
              "raters_now": pl.Int64,
              "needs": pl.Int64, "prompt_title": pl.String}
    return pl.DataFrame([(r.item_id, r.created_at, explain(r.measure, r.value, r.threshold, r.n_raters, r.new_target),
                          r.raters_now, r.new_target, r.prompt_title) for r in rows], schema=schema, orient="row")


def project_summary(store: LabelStore, project: Project) -> dict[str, Any]:
    """Counts for ``labels status``: items, ratings, raters, complete items and coverage."""
    cov = coverage(store, project)
    table = rater_progress_table(store, project)
    n_items = int(cov["n_items"].sum())
    complete = int(cov["n_complete"].sum())
    return {
        "project": project.name, "items": n_items, "target_raters": project.target_raters,
        "complete_items": complete, "ratings": int(table["n_ratings"].sum()) if table.height else 0,
        "raters": table.height, "extra_raters_routed": routing_table(store, project).height,
        "coverage": dict(zip(cov["n_raters"].to_list(), cov["n_items"].to_list(), strict=True)),
        "rater_progress": table.with_columns(pl.col("last_rating_at").cast(pl.String)).to_dicts(),
    }
