"""Using a trained scorer: score texts, and evaluate it on a labeling project's consensus.

Scoring a study's run file (``run.jsonl`` → ``run_scored.jsonl``) is :func:`core.study.scoring.apply_to_run`:
the study uses the scorer, the scorer knows nothing of studies.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from core.base.progress import Progress, no_progress
from core.labeling.items import Project
from core.labeling.store import LabelStore
from core.study.scorer import metrics
from core.study.scorer.data import consensus_examples, project_ratings
from core.study.scorer.model import TrainedScorer

CHUNK = 20_000


def score_texts(scorer: TrainedScorer, texts: list[str], *, progress: Progress = no_progress) -> np.ndarray:
    """Scores of many texts, in chunks (progress per chunk)."""
    out = np.zeros(len(texts))
    for start in range(0, len(texts), CHUNK):
        out[start:start + CHUNK] = scorer.predict(texts[start:start + CHUNK])
        progress(min(start + CHUNK, len(texts)), len(texts), "scored")
    return out


def evaluate(scorer: TrainedScorer, store: LabelStore, project: Project) -> dict[str, Any]:
    """The scorer against a project's consensus on the items it was not trained on, next to the
    human ceiling on the same items."""
    examples = consensus_examples(store, project)
    seen = set((scorer.manifest.get("split") or {}).get("train") or [])
    unseen = examples.filter(~pl.col("key").is_in(list(seen)))
    pred = scorer.predict(unseen["text"].to_list())
    report = metrics.agreement_report(unseen["target"].to_numpy(), pred)
    ceiling = metrics.human_ceiling(project_ratings(store, project), unseen["item_id"].to_list())
    return {"project": project.name, "scorer_model": scorer.name, "kind": scorer.manifest["kind"],
            "n_items": examples.height, "n_skipped_training_items": examples.height - unseen.height,
            "n_test": unseen.height, **{k: report[k] for k in ("mae", "rmse", "pearson", "spearman", "ccc")},
            "bias": report.get("bias"), "human_ceiling": ceiling}
