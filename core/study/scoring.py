"""Scoring a study's run with a trained scorer: ``run.jsonl`` → ``run_scored.jsonl``.

A scored record is the run record plus ``scorer_model`` (the model folder's name),
``scorer_kind``, ``scorer_sha256`` (of its model file) and ``score`` (null for a failed response).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from core.base.progress import Progress, no_progress
from core.study.runs import read_run, write_scored_run
from core.study.scorer.apply import score_texts
from core.study.scorer.model import MODEL_FILE, TrainedScorer


def apply_to_run(scorer: TrainedScorer, run_path: str | Path, out_path: str | Path, *,
                 progress: Progress = no_progress) -> dict[str, Any]:
    """Score every response of a run file and write the scored run atomically."""
    records = read_run(run_path, scored=False)
    ok = [i for i, r in enumerate(records) if r.get("response_text") is not None]
    scores = score_texts(scorer, [records[i]["response_text"] for i in ok], progress=progress)
    by_index = dict(zip(ok, scores.tolist(), strict=True))
    sha = (scorer.manifest.get("files") or {}).get(MODEL_FILE)
    scored = [{**r, "scorer_model": scorer.name, "scorer_kind": scorer.manifest["kind"], "scorer_sha256": sha,
               "score": None if i not in by_index else round(by_index[i], 6)} for i, r in enumerate(records)]
    n = write_scored_run(out_path, scored)
    return {"path": str(out_path), "records": n, "scored": len(ok), "failed_responses": n - len(ok),
            "scorer_model": scorer.name, "mean_score": float(np.mean(scores)) if len(ok) else None}
