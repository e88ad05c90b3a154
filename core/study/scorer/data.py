"""Training examples of a scorer: a labeling project's items with a consensus (SPEC §6.3).

One example per item whose consensus is ``calculated`` or ``adjudicated`` (items that still need
discussion have no target). The text is the item's response; the group is its prompt (items that
answer the same prompt share a group, so a grouped split never puts one prompt on both sides).
The hash of the examples (keys, texts and targets, sorted) identifies the training data.
"""

from __future__ import annotations

import hashlib
import json

import polars as pl

from core.base.errors import WorkbenchError
from core.labeling.consensus import compute_consensus
from core.labeling.items import Project
from core.labeling.reports import items_frame, latest_ratings, ratings_frame
from core.labeling.store import LabelStore

MIN_TRAINING_ITEMS = 20
EXAMPLE_SCHEMA = {"item_id": pl.Int64, "key": pl.String, "group": pl.String, "text": pl.String,
                  "target": pl.Float64, "consensus_source": pl.String, "n_ratings": pl.Int64}


def item_key(dataset: str, identifier: str, run_id: str | None) -> str:
    """The store-wide key of an item (SPEC §6.1: unique on dataset, identifier, run_id).

    >>> item_key("aita", "aita_001", "v1")
    'aita|aita_001|v1'
    """
    return f"{dataset}|{identifier}|{run_id or ''}"


def prompt_group(prompt_title: str, prompt_body: str) -> str:
    """A short hash of a prompt: items answering the same prompt share it."""
    return hashlib.sha256(f"{prompt_title}\n{prompt_body}".encode()).hexdigest()[:16]


def consensus_examples(store: LabelStore, project: Project, *, include_models: bool = False) -> pl.DataFrame:
    """Items of ``project`` with a consensus value, as training examples (schema EXAMPLE_SCHEMA)."""
    cons = compute_consensus(store, project, include_models=include_models).filter(pl.col("consensus").is_not_null())
    if cons.is_empty():
        return pl.DataFrame(schema=EXAMPLE_SCHEMA)
    its = items_frame(store, project, cons["item_id"].to_list())
    rows = []
    by_id = {r["item_id"]: r for r in its.iter_rows(named=True)}
    for c in cons.iter_rows(named=True):
        it = by_id[c["item_id"]]
        rows.append((c["item_id"], item_key(it["dataset"], it["identifier"], it["run_id"]),
                     prompt_group(it["prompt_title"] or "", it["prompt_body"] or ""), it["response_text"] or "",
                     float(c["consensus"]), c["consensus_source"], int(c["n_ratings"])))
    return pl.DataFrame(rows, schema=EXAMPLE_SCHEMA, orient="row").sort("item_id")


def project_ratings(store: LabelStore, project: Project) -> pl.DataFrame:
    """Each human rater's latest rating of each item of ``project`` (item_id, rater, score)."""
    return latest_ratings(ratings_frame(store, project)).select("item_id", "rater", "score")


def data_hash(examples: pl.DataFrame) -> str:
    """sha256 of the examples' (key, text, target), sorted by key."""
    rows = sorted(zip(examples["key"].to_list(), examples["text"].to_list(),
                      [round(t, 6) for t in examples["target"].to_list()], strict=True))
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def check_enough(examples: pl.DataFrame, project: str, minimum: int = MIN_TRAINING_ITEMS) -> None:
    """Refuse to train on fewer than ``minimum`` consensus items, saying why."""
    if examples.height < minimum:
        raise WorkbenchError(
            f"project {project!r} has {examples.height} items with a consensus; training a scorer needs at least "
            f"{minimum} (an item gets a consensus from ≥ 2 human ratings whose signs agree, or from an "
            f"adjudication): rate more items first")
