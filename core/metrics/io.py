"""Reading runs from disk for scoring: results.json files, review texts of a dataset, run folders."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.db import Database
from core.errors import DataError
from core.files import read_json

RESULTS_NAME = "results.json"


def load_results(path: str | Path) -> dict[str, Any]:
    """A results.json (SPEC §4.2), or the results.json inside a run folder; a bad file is a DataError."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_NAME
    payload = read_json(path)
    if not isinstance(payload, dict):
        raise DataError("expected a JSON object (SPEC §4.2 results.json)", path=path)
    samples = payload.get("results")
    if not isinstance(samples, list):
        raise DataError("expected a 'results' list of samples", path=path, field="results")
    for i, s in enumerate(samples):
        if not isinstance(s, dict) or "business_id" not in s:
            raise DataError("a sample must be an object with business_id", path=path, field=f"results[{i}]")
    return payload


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


def run_dirs(runs_root: Path) -> list[Path]:
    """Every run folder under ``runs_root`` holding a results.json, oldest first (by file time)."""
    if not runs_root.is_dir():
        return []
    found = [p.parent for p in runs_root.glob(f"*/{RESULTS_NAME}")]
    return sorted(found, key=lambda p: ((p / RESULTS_NAME).stat().st_mtime, p.name))
