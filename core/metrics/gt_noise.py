"""GT noise (issue 28): how much a run's score moves when the ground truth itself is uncertain.

Ground truth comes from a judge with a measured error; :mod:`core.ground_truth.uncertainty`
turns that error into each restaurant's verdict probabilities. A *GT draw* picks one verdict per
restaurant from them (restaurants are independent: each review's fields are drawn independently).
Over N draws a run's ordinal AUPRC and accuracy spread out; the 2.5 and 97.5 percentiles of that
spread are its GT-noise interval (next to, not instead of, its bootstrap interval, which resamples
restaurants with the GT fixed). For two runs scored on the same draws, the difference B − A per
draw says whether their gap survives the GT noise: the share of draws in which its sign holds, and
its own interval.

Percentiles are numpy's default (linear interpolation between order statistics); a draw in which
no threshold of the ordinal AUPRC is defined (every GT verdict alike) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.metrics.ranking import average_precision, verdict_ordinals

LEVEL = 0.95


def gt_draws(probabilities: ArrayLike, *, n_draws: int, seed: int = 0) -> NDArray[np.int64]:
    """(n_draws, n) GT ordinals: restaurant i's verdict drawn from ``probabilities[i]`` (rows of
    P(verdict) over the scale, lowest first), independently, seeded.

    >>> gt_draws([[1.0, 0.0], [0.0, 1.0]], n_draws=2).tolist()
    [[0, 1], [0, 1]]
    """
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"probabilities must be (restaurants, verdicts) with ≥ 2 verdicts, got shape {p.shape}")
    if n_draws < 1:
        raise ValueError(f"n_draws must be ≥ 1, got {n_draws}")
    if (p < 0).any() or not np.allclose(p.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("each row of probabilities must be ≥ 0 and sum to 1")
    cumulative = np.cumsum(p, axis=1)
    u = np.random.default_rng(seed).random((n_draws, p.shape[0]))
    return np.minimum((u[:, :, None] >= cumulative[None, :, :-1]).sum(axis=2), p.shape[1] - 1).astype(np.int64)


def ordinal_auprc_draws(gt: ArrayLike, score: ArrayLike, *, n_levels: int) -> NDArray[np.float64]:
    """Ordinal AUPRC (SPEC §5.1) of one ranking ``score`` against every row of ``gt`` (D, n):
    the mean of AP_t over the thresholds t = 1 … n_levels−1 that have both classes in that row;
    NaN when none has.

    >>> ordinal_auprc_draws([[0, 1, 2], [0, 0, 2], [0, 0, 0]], [1.0, 2.0, 3.0], n_levels=3).tolist()
    [1.0, 1.0, nan]
    """
    g = np.atleast_2d(np.asarray(gt, dtype=np.float64))
    s = np.broadcast_to(np.asarray(score, dtype=np.float64), g.shape)
    aps = []
    for level in range(1, n_levels):
        y = (g >= level).astype(np.int64)
        positives = y.sum(axis=1)
        ap = average_precision(y, s) if g.shape[1] else np.full(g.shape[0], np.nan)
        aps.append(np.where((positives > 0) & (positives < g.shape[1]), ap, np.nan))
    stacked = np.array(aps)
    defined = ~np.isnan(stacked)
    with np.errstate(invalid="ignore"):
        return np.where(defined.any(axis=0), np.nansum(stacked, axis=0) / defined.sum(axis=0), np.nan)


def accuracy_draws(gt: ArrayLike, predicted: ArrayLike) -> NDArray[np.float64]:
    """Share of samples whose predicted ordinal equals GT's, per row of ``gt`` (a NaN prediction is wrong).

    >>> accuracy_draws([[0, 1], [1, 1]], [0, 1]).tolist()
    [1.0, 0.5]
    """
    g = np.atleast_2d(np.asarray(gt, dtype=np.float64))
    p = np.asarray(predicted, dtype=np.float64)
    return (g == p[None, :]).mean(axis=1) if g.shape[1] else np.full(g.shape[0], np.nan)


@dataclass(frozen=True)
class NoiseInterval:
    """A score's spread over GT draws: mean and the central ``level`` interval of the defined draws."""

    point: float | None  # on the point GT, when given
    mean: float | None
    low: float | None
    high: float | None
    n_draws: int
    n_defined: int


def _interval(values: NDArray[np.float64], point: float | None, level: float) -> NoiseInterval:
    defined = values[~np.isnan(values)]
    if not len(defined):
        return NoiseInterval(point, None, None, None, len(values), 0)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(defined, [tail, 100 - tail])
    return NoiseInterval(point, float(defined.mean()), float(low), float(high), len(values), len(defined))


def _scores(gt: NDArray[np.float64], score: NDArray[np.float64], predicted: NDArray[np.float64],
            n_levels: int) -> dict[str, NDArray[np.float64]]:
    return {"ordinal_auprc": ordinal_auprc_draws(gt, score, n_levels=n_levels), "accuracy": accuracy_draws(gt, predicted)}


def gt_noise_interval(
    score: ArrayLike, predicted: ArrayLike, draws: ArrayLike, *, n_levels: int = 3,
    point_gt: ArrayLike | None = None, level: float = LEVEL,
) -> dict[str, NoiseInterval]:
    """A run's ordinal AUPRC and accuracy over GT draws (D, n), restaurants in the run's order.

    Args:
        score: the run's ranking score per restaurant (SPEC §5.1's choice).
        predicted: the run's verdict ordinal per restaurant (NaN: no verdict).
        draws: GT ordinals, one row per draw (:func:`gt_draws`).
        point_gt: the GT without uncertainty, for the ``point`` figures.

    >>> r = gt_noise_interval([3.0, 1.0], [1, 0], [[1, 0], [1, 1]], n_levels=2)
    >>> r["accuracy"].mean, r["ordinal_auprc"].n_defined
    (0.75, 1)
    """
    g = np.atleast_2d(np.asarray(draws, dtype=np.float64))
    s, p = np.asarray(score, dtype=np.float64), np.asarray(predicted, dtype=np.float64)
    if g.shape[1] != len(s) or len(s) != len(p):
        raise ValueError(f"draws have {g.shape[1]} restaurants, score {len(s)}, predicted {len(p)}")
    values = _scores(g, s, p, n_levels)
    points = _scores(np.asarray(point_gt, dtype=np.float64)[None, :], s, p, n_levels) if point_gt is not None else None
    return {name: _interval(v, None if points is None or np.isnan(points[name][0]) else float(points[name][0]), level)
            for name, v in values.items()}


def gt_noise_difference(
    run_a: tuple[ArrayLike, ArrayLike], run_b: tuple[ArrayLike, ArrayLike], draws: ArrayLike, *,
    n_levels: int = 3, point_gt: ArrayLike | None = None, level: float = LEVEL,
) -> dict[str, dict[str, Any]]:
    """Does B − A survive the GT noise? Each run is (score, predicted) on the same restaurants.

    Per metric: the difference on the point GT (when given), its mean and central interval over
    the draws, and ``sign_share``: the share of draws (where both are defined) whose difference has
    the sign of the point difference (of the mean difference without a point GT); ``survives``
    when the interval excludes 0.

    >>> d = gt_noise_difference(([2.0, 1.0], [1, 0]), ([2.0, 1.0], [1, 1]), [[1, 0], [1, 1], [0, 1]], n_levels=2)
    >>> d["accuracy"]["sign_share"], round(d["accuracy"]["mean"], 4)   # differences −0.5, +0.5, +0.5
    (0.6666666666666666, 0.1667)
    """
    g = np.atleast_2d(np.asarray(draws, dtype=np.float64))
    values = [_scores(g, np.asarray(s, dtype=np.float64), np.asarray(p, dtype=np.float64), n_levels) for s, p in (run_a, run_b)]
    out = {}
    for name in values[0]:
        diff = values[1][name] - values[0][name]
        point = None
        if point_gt is not None:
            at = [_scores(np.asarray(point_gt, dtype=np.float64)[None, :], np.asarray(s, dtype=np.float64),
                          np.asarray(p, dtype=np.float64), n_levels)[name][0] for s, p in (run_a, run_b)]
            point = None if np.isnan(at[1] - at[0]) else float(at[1] - at[0])
        spread = _interval(diff, point, level)
        defined = diff[~np.isnan(diff)]
        reference = point if point is not None else spread.mean
        share = None if not len(defined) or reference is None else float(np.mean(np.sign(defined) == np.sign(reference)))
        out[name] = {**spread.__dict__, "sign_share": share,
                     "survives": spread.low is not None and (spread.low > 0 or spread.high < 0)}  # type: ignore[operator]
    return out


def run_arrays(samples: Sequence[Mapping[str, Any]], business_ids: Sequence[str], scale: Sequence[str],
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(score, predicted ordinal) of a run's samples (SPEC §4.2) in the order of ``business_ids``
    (the columns of the GT draws); a restaurant the run has no sample for scores 0 and has no verdict."""
    # deferred: score.py pulls in the GT file readers
    from core.metrics.score import ranking_scores

    score, _ = ranking_scores(samples, scale)
    by_id = {str(s.get("business_id")): i for i, s in enumerate(samples)}
    rows = [by_id.get(b) for b in business_ids]
    predicted = verdict_ordinals([None if i is None else samples[i].get("verdict") for i in rows], scale)
    return np.array([0.0 if i is None else score[i] for i in rows]), predicted
