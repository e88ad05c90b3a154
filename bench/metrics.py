"""Benchmark: scoring a 10,000-restaurant run with 1,000 bootstrap resamples vs a loop of scikit-learn calls.

The run is synthetic (:func:`core.metrics.synthetic.synthetic_run`: GT incidents, review texts,
answers with evidence). Measured:

* ``score_results(..., n_boot=1000)``: every SPEC §5 metric plus the vectorised bootstrap
  intervals of every headline score. Goal: ≤ 2 s.
* the baseline, in the same run: the same 1,000 resamples (same seed, same index matrix) scored
  with a Python loop of scikit-learn calls (``average_precision_score`` per threshold,
  ``accuracy_score``) — only the AUPRC and accuracy intervals, so the baseline does less work.
  Goal: the vectorised bootstrap ≥ 10× faster than the loop.

    .venv/bin/python bench/metrics.py [--restaurants 10000] [--boot 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import accuracy_score, average_precision_score

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.metrics import bootstrap_intervals, sample_table, score_results  # noqa: E402
from core.metrics.bootstrap import resample_index  # noqa: E402
from core.metrics.synthetic import synthetic_run  # noqa: E402


def sklearn_loop(table, n_boot: int, seed: int) -> dict[str, list[float]]:
    """AUPRC and accuracy of each resample, one scikit-learn call per resample and threshold."""
    idx = resample_index(len(table.business_ids), n_boot=n_boot, seed=seed)
    correct = table.counts[:, -2]
    out: dict[str, list[float]] = {"ordinal_auprc": [], "accuracy": []}
    for row in idx:
        gt, score = table.gt_ordinal[row], table.score[row]
        aps = []
        for level in range(1, table.n_levels):
            y = gt >= level
            if 0 < y.sum() < len(y):
                aps.append(average_precision_score(y, score))
        out["ordinal_auprc"].append(float(np.mean(aps)) if aps else float("nan"))
        out["accuracy"].append(accuracy_score(np.ones(len(row)), correct[row]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--restaurants", type=int, default=10_000)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    results, gt, texts = synthetic_run(args.restaurants, seed=1, noise=0.2)
    print(f"synthetic run: {args.restaurants:,} restaurants, {len(texts):,} review texts, {args.boot:,} resamples")

    full, boot_only, cpu = [], [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        scored = score_results(results, gt=gt, review_texts=texts, n_boot=args.boot, seed=0)
        full.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        table = sample_table(scored)
        t0 = time.perf_counter()
        bootstrap_intervals(table, n_boot=args.boot, seed=0)
        boot_only.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    loop = sklearn_loop(table, args.boot, 0)
    loop_s = time.perf_counter() - t0

    iv = scored["intervals"]["scores"]
    lo, hi = np.nanpercentile(loop["ordinal_auprc"], [2.5, 97.5])
    print(f"ordinal AUPRC {scored['unified_scores']['auprc']:.4f}  vectorised CI "
          f"[{iv['ordinal_auprc']['low']:.4f}, {iv['ordinal_auprc']['high']:.4f}]  (scikit-learn loop on the "
          f"unsorted order: [{lo:.4f}, {hi:.4f}])")
    f, b = statistics.median(full), statistics.median(boot_only)
    print(f"score_results, all metrics + {args.boot} resamples: median {f:.3f} s (min {min(full):.3f}) "
          f"{'OK' if f <= 2 else 'SLOW'} (goal ≤ 2 s); CPU time median {statistics.median(cpu):.3f} s "
          f"(wall time on a shared machine includes waiting for a core; see `uptime`)")
    print(f"vectorised bootstrap of every headline score: median {b:.3f} s")
    print(f"loop of scikit-learn calls (AUPRC + accuracy only): {loop_s:.3f} s")
    print(f"ratio loop / vectorised bootstrap: {loop_s / b:.1f}×  {'OK' if loop_s / b >= 10 else 'BELOW'} (goal ≥ 10×); "
          f"loop / whole score_results: {loop_s / f:.1f}×")


if __name__ == "__main__":
    main()
