"""Interval arithmetic of a judge audit: Wilson intervals of weighted proportions, the sample size
a target width needs, and Cohen's κ of a weighted confusion table.

A stratified sample with knife-edge reviews taken first gives each audited review a weight
w = 1 / (its inclusion probability) (Horvitz–Thompson). A proportion is estimated as
p̂ = Σ w·y / Σ w, and its 95 % interval is Wilson's score interval at Kish's effective sample
size n_eff = (Σ w)² / Σ w² (equal weights: n_eff = n, the plain Wilson interval):

    centre = (p̂ + z²/2n) / (1 + z²/n),  half-width = z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n),  n = n_eff.

Its width is largest at p̂ = ½, so a sample whose n_eff reaches :func:`n_for_width` (computed at
p̂ = ½) has an interval no wider than the target whatever the proportion turns out to be.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

Z95 = 1.959963984540054  # the 97.5 % normal quantile


def wilson(p: float, n: float, *, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval of a proportion ``p`` observed on (an effective) ``n``.

    >>> [round(x, 4) for x in wilson(0.5, 100)]
    [0.4038, 0.5962]
    >>> [round(x, 4) for x in wilson(1.0, 10)]
    [0.7225, 1.0]
    """
    if n <= 0:
        raise ValueError(f"n must be > 0, got {n}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_width(p: float, n: float, *, z: float = Z95) -> float:
    """The width of :func:`wilson` (without the clipping to [0, 1], which never binds at p = ½).

    >>> round(wilson_width(0.5, 1533), 5)   # the smallest n reaching 0.05
    0.05
    """
    z2 = z * z
    return 2 * z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)


def n_for_width(target: float, *, p: float = 0.5, z: float = Z95) -> int:
    """The smallest n whose Wilson interval at ``p`` is at most ``target`` wide (the width falls
    monotonically in n, so a bisection finds it).

    >>> n_for_width(0.05), n_for_width(0.2), n_for_width(0.1)
    (1533, 93, 381)
    """
    if not 0 < target < 1:
        raise ValueError(f"target width must lie in (0, 1), got {target}")
    lo, hi = 1, 2
    while wilson_width(p, hi, z=z) > target:
        lo, hi = hi, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if wilson_width(p, mid, z=z) <= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def kish_n(weights: ArrayLike) -> float:
    """Kish's effective sample size (Σw)² / Σw² (0 for no weights).

    >>> kish_n([1, 1, 1]), kish_n([1, 3])
    (3.0, 1.6)
    """
    w = np.asarray(weights, dtype=np.float64)
    return float(w.sum() ** 2 / (w * w).sum()) if len(w) and (w * w).sum() > 0 else 0.0


def weighted_proportion(hits: ArrayLike, weights: ArrayLike) -> tuple[float | None, float, float | None, float | None]:
    """(p̂, n_eff, low, high): the weighted share of ``hits`` (booleans) with its Wilson interval at
    Kish's n_eff; (None, 0, None, None) when there is nothing to count.

    >>> p, n, lo, hi = weighted_proportion([1, 1, 0, 1], [1, 1, 1, 1])
    >>> p, n, round(lo, 4), round(hi, 4)
    (0.75, 4.0, 0.3006, 0.9544)
    """
    y = np.asarray(hits, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if not len(w) or w.sum() <= 0:
        return None, 0.0, None, None
    p = float((w * y).sum() / w.sum())
    n = kish_n(w)
    low, high = wilson(min(1.0, max(0.0, p)), n)
    return p, n, low, high


def cohen_kappa(table: ArrayLike) -> float | None:
    """Cohen's κ of a (weighted) square confusion table (rows one rater, columns the other):
    (p_o − p_e) / (1 − p_e); None when undefined (empty, or p_e = 1: a single category).

    >>> cohen_kappa([[20, 5], [10, 15]])   # p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5
    0.4
    >>> cohen_kappa([[4, 0], [0, 0]]) is None
    True
    """
    t = np.asarray(table, dtype=np.float64)
    total = t.sum()
    if t.ndim != 2 or t.shape[0] != t.shape[1] or total <= 0:
        return None
    p_o = float(np.trace(t) / total)
    p_e = float((t.sum(axis=1) / total) @ (t.sum(axis=0) / total))
    return None if math.isclose(p_e, 1.0) else round((p_o - p_e) / (1 - p_e), 12)


def widths_reached(n_eff: Sequence[float], target: float) -> bool:
    """Whether every effective size reaches ``target`` at the worst case p = ½."""
    return all(wilson_width(0.5, n) <= target for n in n_eff if n > 0)
