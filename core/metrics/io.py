"""What scoring reads from a dataset: the texts of the reviews a method saw, the restaurants' categories.

(A run's own files are read and written by :mod:`core.runs.records`.)
"""

from __future__ import annotations

from collections.abc import Iterable

from core.datasets.db import Database


def dataset_review_texts(db: Database, dataset: str, business_ids: Iterable[str], k: int | None) -> dict[str, str]:
    """review_id → text of the first K reviews (idx < K; all when K is None) of those restaurants."""
    ids = sorted({str(b) for b in business_ids})
    frame = db.query(
        "SELECT review_id, text FROM reviews WHERE dataset = $dataset AND list_contains($ids, business_id)"
        " AND ($k IS NULL OR idx < $k)",
        {"dataset": dataset, "ids": ids, "k": k},
    )
    return dict(zip(frame["review_id"].to_list(), frame["text"].to_list(), strict=True))


def dataset_categories(db: Database, dataset: str) -> dict[str, str | None]:
    """business_id → categories of a dataset's restaurants (for the policy's cuisine rule)."""
    frame = db.query("SELECT business_id, categories FROM restaurants WHERE dataset = $dataset", {"dataset": dataset})
    return dict(zip(frame["business_id"].to_list(), frame["categories"].to_list(), strict=True))
