"""Small judged datasets written from code: restaurants and reviews tables, judgment records."""

from __future__ import annotations

import json

import polars as pl

from core.datasets import write_dataset


def write_tables(ws, dataset: str, restaurants: list[dict], reviews: list[dict]) -> None:
    """A dataset in the shared contract layout, written (and locked) by core.datasets."""
    write_dataset(
        ws, dataset,
        pl.DataFrame([{"categories": "", **r} for r in restaurants],
                     schema_overrides={"business_id": pl.String, "name": pl.String, "categories": pl.String}),
        pl.DataFrame([{"stars": 3.0, "useful": 0, "date": "2020-01-01 00:00:00", "text": "", **r} for r in reviews],
                     schema_overrides={"idx": pl.Int32, "stars": pl.Float64, "useful": pl.Int64, "text": pl.String}),
        sources=[], layout="test",
    )


def small_dataset(ws, dataset: str = "d") -> None:
    write_tables(
        ws, dataset,
        [{"business_id": "B1", "name": "Thai One", "categories": "Thai, Restaurants"},
         {"business_id": "B2", "name": "Pizza Two", "categories": "Pizza"}],
        [{"business_id": "B1", "review_id": f"r1-{i}", "idx": i, "stars": float(1 + i % 5), "useful": i,
          "date": f"20{10 + i}-05-01 12:00:00", "text": f"review {i} peanut"} for i in range(5)]
        + [{"business_id": "B2", "review_id": f"r2-{i}", "idx": i, "text": "nuts"} for i in range(3)],
    )


def rec(bid: str, idx: int, **fields) -> dict:
    return {"business_id": bid, "idx": idx, "review_id": None, "prompt_version": "v1",
            "fields": {**NONE3, **fields}, "excerpt": "", "raw": json.dumps({**NONE3, **fields})}




NONE3 = {"incident_severity": "none", "account_type": "none", "safety_interaction": "none"}
