"""Scored runs written into a workspace from its own GT files, for the Results page tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from core.metrics import load_gt, score_results
from tests.helpers.metrics import answer, run, sample

SEVERITIES = ["mild", "moderate", "severe"]


def write_runs(root: Path, *, methods: dict[str, float] | None = None, ks: tuple[int, ...] = (25, 50),
               dataset: str = "demo", n_boot: int = 200, copies: int = 1) -> list[Path]:
    """One scored run per (method, K) answering GT with per-incident error rate ``noise``."""
    methods = methods or {"direct": 0.1, "cot": 0.4}
    reviews = pl.read_parquet(next((root / "datasets" / dataset).glob("reviews.parquet")))
    texts_all = dict(zip(reviews["review_id"].to_list(), reviews["text"].to_list(), strict=True))
    out = []
    for k in ks:
        gt = load_gt(root / "gt" / dataset / "G1a" / f"G1_allergy_V2_K{k}_groundtruth.json", None)
        k_ids = set(reviews.filter(pl.col("idx") < k)["review_id"].to_list())
        texts = {r: t for r, t in texts_all.items() if r in k_ids}
        for c in range(copies):
            for m, (method, noise) in enumerate(methods.items()):
                rng = np.random.default_rng([k, m, c])
                samples = []
                for bid, g in gt.items():
                    claims = []
                    for inc in g["incidents"]:
                        if rng.random() < noise:
                            claims.append({**inc, "severity": SEVERITIES[int(rng.integers(0, 3))], "modifiers": []})
                        else:
                            claims.append(inc)
                    verdict = g["verdict"] if rng.random() > noise / 2 else ["Low Risk", "High Risk", "Critical Risk"][
                        int(rng.integers(0, 3))]
                    s = sample(bid, answer(verdict, claims, texts=texts, score=float(g["score"] or 0) + rng.normal(0, 1)))
                    s["name"] = g.get("name") or bid
                    s["response"] = "<b>raw</b> " + json.dumps(s["parsed"])
                    samples.append(s)
                run_id = f"{method}_k{k}" + (f"_{c}" if copies > 1 else "")
                results = run(samples, run_id=run_id, method=method, k=k, config={"dataset": dataset})
                scored = score_results(results, gt=gt, review_texts=texts, n_boot=n_boot)
                folder = root / "runs" / run_id
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "results.json").write_text(json.dumps(scored), encoding="utf-8")
                out.append(folder)
    return out
