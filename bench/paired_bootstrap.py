"""Benchmark: the paired bootstrap of two runs (Compare runs): each side drawn and scored apart,
with the sorted pass or the tie-grouped AP, against both sides scored from one draw.

Issue 27: comparing two 150,000-sample runs took 42.1 s for 1,000 resamples, mostly the cumsum
over (resamples × samples) in :func:`core.metrics.bootstrap.sorted_pass_aps`. Two steps since:
the AP sums the drawn weights per tied score (one matrix product with a group indicator) before
the running sums, and :func:`core.metrics.bootstrap.scores_of_blocks` draws each block of
resamples once for both sides and sums both sides' count and group columns in one product.

Three ways, in the same process on the same synthetic tables (``paired_differences`` of two runs,
scores from a handful of verdict levels, as most methods output; GT on 4 levels):
- ``per side, sorted``: each side resampled on its own (``resampled=``), the AP by the sorted pass
  (the formula before issue 27, still the path for many distinct scores);
- ``per side, grouped``: each side resampled on its own, the tie-grouped AP;
- ``shared``: the default, one draw for both sides.
The results must be identical (checked, every figure).

    .venv/bin/python bench/paired_bootstrap.py [--sizes 2000,20000,150000] [--boot 1000] [--levels 5] [--passes 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.metrics import bootstrap  # noqa: E402
from core.metrics.bootstrap import COUNT_COLUMNS, SampleTable, paired_differences, resampled_scores  # noqa: E402

N_LEVELS = 4


def run_table(n: int, seed: int, gt: NDArray[np.float64], levels: int) -> SampleTable:
    """A synthetic run: a risk score from ``levels`` verdict levels, noisy around the GT."""
    rng = np.random.default_rng(seed)
    noisy = np.clip(gt * (levels - 1) / (N_LEVELS - 1) + rng.normal(0, 0.8, n), 0, levels - 1)
    score = np.round(noisy) / (levels - 1)
    counts = rng.integers(0, 4, size=(n, len(COUNT_COLUMNS))).astype(np.float64)
    counts[:, -1] = 1.0  # has_gt
    ids = tuple(f"b{i:07d}" for i in range(n))
    return SampleTable(ids, gt, score, counts, N_LEVELS)


def timed(a: SampleTable, b: SampleTable, boot: int, way: str) -> tuple[float, str]:
    """Wall time and result (repr) of one paired comparison by ``way`` (no cache)."""
    bootstrap.resample_weights.cache_clear()
    per_side = None if way == "shared" else (lambda side, t: resampled_scores(t, n_boot=boot, seed=0))
    cap = bootstrap.MAX_GROUP_COLUMNS
    if way == "per side, sorted":
        bootstrap.MAX_GROUP_COLUMNS = 0
    try:
        t0 = time.perf_counter()
        res = paired_differences(a, b, n_boot=boot, seed=0, resampled=per_side)
        return time.perf_counter() - t0, repr(res)
    finally:
        bootstrap.MAX_GROUP_COLUMNS = cap


def main() -> None:
    """Time the three ways at each size (the best of ``--passes``, interleaved), check the results
    are identical, print the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,20000,150000")
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--levels", type=int, default=5, help="distinct scores a run outputs")
    ap.add_argument("--passes", type=int, default=1, help="passes of the three ways, interleaved; the best counts")
    args = ap.parse_args()
    ways = ("per side, sorted", "per side, grouped", "shared")
    print(f"paired bootstrap, {args.boot} resamples, scores on {args.levels} levels, GT on {N_LEVELS}")
    print(f"{'samples':>9} {'sorted s':>9} {'grouped s':>10} {'shared s':>9} {'sorted/shared':>14} "
          f"{'grouped/shared':>15}  identical")
    for n in (int(x) for x in args.sizes.split(",")):
        gt = np.random.default_rng(99).integers(0, N_LEVELS, n).astype(np.float64)
        a, b = run_table(n, 1, gt, args.levels), run_table(n, 2, gt, args.levels)
        best = dict.fromkeys(ways, float("inf"))
        results = set()
        for _ in range(args.passes):
            for way in ways:
                t, res = timed(a, b, args.boot, way)
                best[way] = min(best[way], t)
                results.add(res)
        same = len(results) == 1
        t_sorted, t_grouped, t_shared = (best[w] for w in ways)
        print(f"{n:>9,} {t_sorted:>9.2f} {t_grouped:>10.2f} {t_shared:>9.2f} {t_sorted / t_shared:>13.2f}× "
              f"{t_grouped / t_shared:>14.2f}×  {same}")
        if not same:
            raise SystemExit(f"results differ at n={n}")


if __name__ == "__main__":
    main()
