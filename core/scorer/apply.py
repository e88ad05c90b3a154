"""Using a trained scorer: score a run (``run.jsonl`` → ``run_scored.jsonl``) and evaluate it on a
labeling project's consensus.

A scored record is the run record plus ``scorer_model`` (the model folder's name),
``scorer_kind``, ``scorer_sha256`` (of its model file) and ``score`` (null for a failed response).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from core.labeling.items import Project
from core.labeling.store import LabelStore
from core.progress import Progress, no_progress
from core.scorer import metrics
from core.scorer.data import consensus_examples, project_ratings
from core.scorer.model import TrainedScorer
from core.study.runs import read_run, write_scored_run

CHUNK = 20_000


def score_texts(scorer: TrainedScorer, texts: list[str], *, progress: Progress = no_progress) -> np.ndarray:
    """Scores of many texts, in chunks (progress per chunk)."""
    out = np.zeros(len(texts))
    for start in range(0, len(texts), CHUNK):
        out[start:start + CHUNK] = scorer.predict(texts[start:start + CHUNK])
        progress(min(start + CHUNK, len(texts)), len(texts), "scored")
    return out


def apply_to_run(scorer: TrainedScorer, run_path: str | Path, out_path: str | Path, *,
                 progress: Progress = no_progress) -> dict[str, Any]:
    """Score every response of a run file and write the scored run atomically."""
    records = read_run(run_path, scored=False)
    ok = [i for i, r in enumerate(records) if r.get("response_text") is not None]
    scores = score_texts(scorer, [records[i]["response_text"] for i in ok], progress=progress)
    by_index = dict(zip(ok, scores.tolist(), strict=True))
    sha = (scorer.manifest.get("files") or {}).get("model.joblib")
    scored = [{**r, "scorer_model": scorer.name, "scorer_kind": scorer.manifest["kind"], "scorer_sha256": sha,
               "score": None if i not in by_index else round(by_index[i], 6)} for i, r in enumerate(records)]
    n = write_scored_run(out_path, scored)
    return {"path": str(out_path), "records": n, "scored": len(ok), "failed_responses": n - len(ok),
            "scorer_model": scorer.name, "mean_score": float(np.mean(scores)) if len(ok) else None}


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
