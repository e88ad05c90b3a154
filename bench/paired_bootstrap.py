"""Benchmark: the paired bootstrap of two runs (Compare runs), old AP formula vs the tie-grouped one.

Issue 27: comparing two 150,000-sample runs took 42.1 s for 1,000 resamples, mostly the cumsum
over (resamples × samples) in :func:`core.metrics.bootstrap.weighted_average_precisions`. The
function now sums the weights per tied-score group (``np.add.reduceat``) before the running sums.

Both formulas run in the same process on the same synthetic tables: ``paired_differences`` of two
runs (scores from a handful of verdict levels, as most methods output; GT on 4 levels), with the
old formula patched in as the baseline. The results must be identical (checked, every figure).

    .venv/bin/python bench/paired_bootstrap.py [--sizes 2000,20000,150000] [--boot 1000] [--levels 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.metrics import bootstrap  # noqa: E402
from core.metrics.bootstrap import COUNT_COLUMNS, SampleTable, paired_differences  # noqa: E402

N_LEVELS = 4


def old_weighted_average_precisions(ys: NDArray[Any], score: NDArray[np.float64], weights: NDArray[Any]) -> NDArray[np.float64]:
    """The formula before issue 27 (cumsum over every sample, then the tie-group ends): the baseline,
    which the core keeps as its path for many distinct scores."""
    return bootstrap.sorted_pass_aps(ys, score, weights)


def run_table(n: int, seed: int, gt: NDArray[np.float64], levels: int) -> SampleTable:
    """A synthetic run: a risk score from ``levels`` verdict levels, noisy around the GT."""
    rng = np.random.default_rng(seed)
    noisy = np.clip(gt * (levels - 1) / (N_LEVELS - 1) + rng.normal(0, 0.8, n), 0, levels - 1)
    score = np.round(noisy) / (levels - 1)
    counts = rng.integers(0, 4, size=(n, len(COUNT_COLUMNS))).astype(np.float64)
    counts[:, -1] = 1.0  # has_gt
    ids = tuple(f"b{i:07d}" for i in range(n))
    return SampleTable(ids, gt, score, counts, N_LEVELS)


def timed(a: SampleTable, b: SampleTable, boot: int) -> tuple[float, dict[str, Any]]:
    """Wall time and result of one paired comparison (no cache: both sides resampled)."""
    bootstrap.resample_weights.cache_clear()
    t0 = time.perf_counter()
    res = paired_differences(a, b, n_boot=boot, seed=0)
    return time.perf_counter() - t0, res


def main() -> None:
    """Time old vs new at each size, check the results are identical, print the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,20000,150000")
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--levels", type=int, default=5, help="distinct scores a run outputs")
    args = ap.parse_args()
    new = bootstrap.weighted_average_precisions
    print(f"paired bootstrap, {args.boot} resamples, scores on {args.levels} levels, GT on {N_LEVELS}")
    print(f"{'samples':>9} {'old s':>8} {'new s':>8} {'old/new':>8}  identical")
    for n in (int(x) for x in args.sizes.split(",")):
        gt = np.random.default_rng(99).integers(0, N_LEVELS, n).astype(np.float64)
        a, b = run_table(n, 1, gt, args.levels), run_table(n, 2, gt, args.levels)
        bootstrap.weighted_average_precisions = old_weighted_average_precisions  # type: ignore[assignment]
        try:
            t_old, r_old = timed(a, b, args.boot)
        finally:
            bootstrap.weighted_average_precisions = new  # type: ignore[assignment]
        t_new, r_new = timed(a, b, args.boot)
        same = repr(r_old) == repr(r_new)
        print(f"{n:>9,} {t_old:>8.2f} {t_new:>8.2f} {t_old / t_new:>7.2f}×  {same}")
        if not same:
            raise SystemExit(f"results differ at n={n}")


if __name__ == "__main__":
    main()
