"""A scorer trained on the real AITA reviews' consensus: the pipeline's invariants, not a score."""

from __future__ import annotations

import numpy as np
import pytest

from core.labeling import items
from core.labeling.export import import_reviews
from core.study.scorer import data, model

pytestmark = pytest.mark.fixtures


def test_aita_consensus_scorer_invariants(store, fixtures_dir, tmp_path):
    project = items.create_project(store, "aita")
    items.import_items_file(store, project, fixtures_dir / "aita/seeds/aita_seed.jsonl", dataset="aita")
    assert import_reviews(store, project, fixtures_dir / "aita/reviews/aita_reviews_slim.jsonl").added == 514
    examples = data.consensus_examples(store, project)
    assert examples.height >= 20 and examples["target"].is_between(-1, 1).all()
    ratings = data.project_ratings(store, project)
    assert not ratings["rater"].str.starts_with("llm:").any()  # the ceiling is human only
    a = model.train(examples, ratings, seed=0, project="aita")
    b = model.train(examples, ratings, seed=0, project="aita")
    m = a.manifest
    train_keys, test_keys = set(m["split"]["train"]), set(m["split"]["test"])
    assert not train_keys & test_keys
    group = dict(zip(examples["key"].to_list(), examples["group"].to_list(), strict=True))
    assert not {group[k] for k in train_keys} & {group[k] for k in test_keys}
    preds = np.array(m["test_predictions"])
    assert preds.min() >= -1 and preds.max() <= 1
    assert m["test_predictions"] == b.manifest["test_predictions"] and m["metrics"] == b.manifest["metrics"]
    assert m["human_ceiling"]["n_items"] == m["n_test"]
    saved = model.load(model.save(a, tmp_path / "aita-tfidf-ridge"))
    assert saved.manifest["training_data_sha256"] == data.data_hash(examples)
    print("AITA held-out:", model.summary_line(m))
