"""The default scorer (``tfidf-ridge``) over 100,000 responses, next to a per-response baseline.

    .venv/bin/python bench/scorer.py               # 100,000 responses; target ≤ 10 s
    .venv/bin/python bench/scorer.py --n 20000

Trains the default scorer on the offline advisors' answers to the full rent grid (targets: the
advisor's own stance), then times, on ``--n`` responses:

- predict: the scorer over the texts in memory (the chunked, vectorised path ``scorer apply``
  uses: :mod:`core.study.scorer.fast`);
- apply: ``scorer apply`` end to end: read and check a ``run.jsonl``, score, write ``run_scored.jsonl``;
- baselines: the same model through scikit-learn's own ``predict`` in batches (timed on 20,000
  responses and scaled to ``--n``), and called once per response (timed on 2,000, scaled).

Texts: "short" are offline-advisor answers (~50 words); "long" are the AITA seed's real LLM
responses (~250 words, from ``$WORKBENCH_FIXTURES``; skipped when it is unset).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.study import (
    grid,  # noqa: E402
    scoring,  # noqa: E402
)
from core.study.responders import OFFLINE_MODELS  # noqa: E402
from core.study.scorer import apply, model  # noqa: E402

TARGET_SECONDS = 10.0


def train_default() -> model.TrainedScorer:
    prompts = grid.build_grid(grid.read_templates(), grid.read_factors())
    rows, ratings = [], []
    for i, p in enumerate(prompts):
        for j, advisor in enumerate(OFFLINE_MODELS.values()):
            item = i * 2 + j
            stance = advisor.stance(grid.user_text(p))
            rows.append((item, f"k{item}", p["scenario_id"], advisor.respond(p["messages"]).text, stance))
            ratings += [(item, r, max(-1.0, min(1.0, stance + d))) for r, d in (("a", 0.05), ("b", -0.05))]
    examples = pl.DataFrame(rows, schema=["item_id", "key", "group", "text", "target"], orient="row")
    frame = pl.DataFrame(ratings, schema=["item_id", "rater", "score"], orient="row")
    return model.train(examples, frame, cv=2)


def short_texts(n: int) -> list[str]:
    prompts = grid.build_grid(grid.read_templates(), grid.read_factors())
    pool = [a.respond(p["messages"]).text for p in prompts for a in OFFLINE_MODELS.values()]
    rng = random.Random(0)
    return [f"{rng.choice(pool)} Note {i}." for i in range(n)]  # every text distinct


def long_texts(n: int) -> list[str] | None:
    root = os.environ.get("WORKBENCH_FIXTURES")
    path = Path(root or "") / "aita/seeds/aita_seed.jsonl"
    if not root or not path.is_file():
        return None
    pool = [json.loads(line)["model_response_text"] for line in path.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(0)
    return [f"{rng.choice(pool)} ({i})" for i in range(n)]


def bench(name: str, scorer: model.TrainedScorer, texts: list[str]) -> None:
    n = len(texts)
    words = sum(len(t.split()) for t in texts[:2000]) / min(n, 2000)
    started = time.perf_counter()
    scores = apply.score_texts(scorer, texts)
    predict_s = time.perf_counter() - started
    assert scores.min() >= -1 and scores.max() <= 1
    with tempfile.TemporaryDirectory(prefix="bench-scorer-") as tmp:
        run = Path(tmp) / "run.jsonl"
        with open(run, "w", encoding="utf-8") as fh:
            for i, t in enumerate(texts):
                fh.write(json.dumps({"run_id": "bench", "model_id": "m", "prompt_id": str(i), "perspective": "neutral",
                                     "factors": {"perspective": "neutral"},
                                     "messages": [{"role": "user", "content": "q"}], "response_text": t}) + "\n")
        started = time.perf_counter()
        scoring.apply_to_run(scorer, run, Path(tmp) / "run_scored.jsonl")
        apply_s = time.perf_counter() - started
    batch = texts[:20_000]
    started = time.perf_counter()
    sk = model.predict_clipped(scorer.pipeline, batch)
    sklearn_s = (time.perf_counter() - started) * n / len(batch)
    assert abs(sk - scores[:len(batch)]).max() < 1e-5  # both paths give the same scores
    sample = texts[:2000]
    started = time.perf_counter()
    for t in sample:
        scorer.pipeline.predict([t])
    single_s = (time.perf_counter() - started) * n / len(sample)
    ok = "OK" if predict_s <= TARGET_SECONDS else "OVER TARGET"
    print(f"{name:<6} n={n:,} (~{words:.0f} words each)")
    print(f"  predict   {predict_s:7.2f} s  ({n / predict_s:,.0f} responses/s)  target ≤ {TARGET_SECONDS:.0f} s: {ok}")
    print(f"  apply     {apply_s:7.2f} s  (read + check run.jsonl, score, write run_scored.jsonl)")
    print(f"  sklearn   {sklearn_s:7.2f} s  (pipeline.predict in batches, from {len(batch):,})  "
          f"ratio {sklearn_s / predict_s:.1f}x")
    print(f"  one-by-one {single_s:6.2f} s  (one predict call per response, from {len(sample):,})  "
          f"ratio {single_s / predict_s:.1f}x")


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    args = parser.parse_args()
    started = time.perf_counter()
    scorer = train_default()
    print(f"trained tfidf-ridge on {scorer.manifest['n_train']} answers in {time.perf_counter() - started:.1f} s")
    bench("short", scorer, short_texts(args.n))
    texts = long_texts(args.n)
    if texts is None:
        print("long   skipped: set WORKBENCH_FIXTURES for the AITA responses")
    else:
        bench("long", scorer, texts)


if __name__ == "__main__":
    main()
