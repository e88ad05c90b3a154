"""Agreement between two sets of scores in [-1, 1]: a scorer (or rater) against a reference.

scikit-learn style: data positional, options keyword-only, validation first (``ValueError`` naming
the bad value); ``*_error`` is lower-is-better, ``*_score`` higher-is-better. A correlation of a
constant input is NaN (undefined), never an exception.

- MAE = mean |ŷ − y|; RMSE = sqrt(mean (ŷ − y)²).
- Pearson r = cov(y, ŷ) / (sd(y) sd(ŷ)); Spearman ρ = Pearson r of the average ranks.
- Lin's concordance correlation CCC = 2 s_yŷ / (s_y² + s_ŷ² + (ȳ − ŷ̄)²), moments with 1/n
  (Lin 1989): 1 only when ŷ = y, so it punishes bias and scale, which r ignores.
- Bland–Altman: d = ŷ − y; bias = mean d; limits of agreement = bias ± 1.96 · sd(d) (sd with n − 1).
- Human ceiling: each rater of each item with ≥ 2 raters in turn held out against the mean of the
  item's other raters; the same statistics over those (rater, rest-mean) pairs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl


def _check_pair(y_true: Any, y_pred: Any, *, min_n: int = 1) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(y_true, dtype=float).ravel(), np.asarray(y_pred, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"y_true and y_pred differ in length: {a.size} != {b.size}")
    if a.size < min_n:
        raise ValueError(f"need at least {min_n} pairs, got {a.size}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("scores must be finite numbers (no NaN or infinity)")
    return a, b


def mean_absolute_error(y_true: Any, y_pred: Any) -> float:
    """Mean absolute difference.

    >>> mean_absolute_error([0.0, 1.0], [0.5, 0.5])
    0.5
    """
    a, b = _check_pair(y_true, y_pred)
    return float(np.mean(np.abs(b - a)))


def root_mean_squared_error(y_true: Any, y_pred: Any) -> float:
    """Root of the mean squared difference.

    >>> round(root_mean_squared_error([0.0, 0.0], [0.3, -0.4]), 6)
    0.353553
    """
    a, b = _check_pair(y_true, y_pred)
    return float(np.sqrt(np.mean((b - a) ** 2)))


def pearson_score(y_true: Any, y_pred: Any) -> float:
    """Pearson's r (NaN when either side is constant or n < 2).

    >>> pearson_score([1, 2, 3], [2, 4, 6])
    1.0
    """
    a, b = _check_pair(y_true, y_pred)
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    da, db = a - a.mean(), b - b.mean()
    return float(np.clip((da @ db) / math.sqrt((da @ da) * (db @ db)), -1.0, 1.0))


def spearman_score(y_true: Any, y_pred: Any) -> float:
    """Spearman's ρ: Pearson's r of the average ranks (ties share their mean rank).

    >>> spearman_score([1, 2, 3], [1, 4, 9])
    1.0
    """
    a, b = _check_pair(y_true, y_pred)
    # deferred: heavy optional import (~500 ms), only needed when a Spearman correlation is computed
    from scipy import stats

    return pearson_score(stats.rankdata(a), stats.rankdata(b))


def concordance_correlation_score(y_true: Any, y_pred: Any) -> float:
    """Lin's concordance correlation coefficient (NaN when both sides are one constant value).

    >>> concordance_correlation_score([0.0, 1.0], [0.0, 1.0])
    1.0
    >>> round(concordance_correlation_score([0.0, 1.0], [0.5, 1.5]), 4)  # shifted: r = 1, CCC < 1
    0.6667
    """
    a, b = _check_pair(y_true, y_pred)
    va, vb = a.var(), b.var()
    cov = float(np.mean((a - a.mean()) * (b - b.mean())))
    denom = va + vb + (a.mean() - b.mean()) ** 2
    return float(2 * cov / denom) if denom > 0 else float("nan")


def bland_altman(y_true: Any, y_pred: Any, *, z: float = 1.96) -> dict[str, float]:
    """Bias (mean of ŷ − y), its sd (n − 1) and the limits of agreement bias ± z·sd.

    >>> bland_altman([0.0, 0.0, 0.0], [0.1, 0.2, 0.3])["bias"]
    0.2
    """
    a, b = _check_pair(y_true, y_pred)
    d = b - a
    bias = float(np.round(d.mean(), 12)) + 0.0  # no "-0.0"
    sd = float(d.std(ddof=1)) if d.size > 1 else float("nan")
    return {"bias": bias, "sd": sd, "loa_low": bias - z * sd, "loa_high": bias + z * sd, "n": int(d.size)}


def agreement_report(y_true: Any, y_pred: Any) -> dict[str, Any]:
    """n, MAE, RMSE, Pearson, Spearman, CCC and Bland–Altman of ŷ against y (NaN where undefined)."""
    a, b = _check_pair(y_true, y_pred, min_n=0)
    if a.size == 0:
        return {"n": 0, **dict.fromkeys(("mae", "rmse", "pearson", "spearman", "ccc", "bias", "loa_low", "loa_high"),
                                       float("nan"))}
    ba = bland_altman(a, b)
    return {"n": int(a.size), "mae": mean_absolute_error(a, b), "rmse": root_mean_squared_error(a, b),
            "pearson": pearson_score(a, b), "spearman": spearman_score(a, b),
            "ccc": concordance_correlation_score(a, b), "bias": ba["bias"], "loa_low": ba["loa_low"],
            "loa_high": ba["loa_high"]}


def ceiling_pairs(ratings: pl.DataFrame) -> pl.DataFrame:
    """(held-out rater's score, mean of the other raters) for every rater of every item with ≥ 2 raters.

    ``ratings`` has one row per (item_id, rater) with ``score``.
    """
    if ratings.select(pl.struct("item_id", "rater").is_duplicated().any()).item():
        raise ValueError("ratings hold several rows of one (item, rater); keep one per rater")
    g = ratings.group_by("item_id").agg(pl.len().alias("m"), pl.col("score").sum().alias("s"))
    return (ratings.join(g.filter(pl.col("m") >= 2), on="item_id")
            .with_columns(((pl.col("s") - pl.col("score")) / (pl.col("m") - 1)).alias("others_mean"))
            .select("item_id", "rater", "score", "others_mean").sort("item_id", "rater"))


def human_ceiling(ratings: pl.DataFrame, item_ids: Any = None) -> dict[str, Any]:
    """The agreement statistics of one held-out rater against the mean of the others.

    Args:
        ratings: one row per (item_id, rater) with ``score`` (human raters).
        item_ids: restrict to these items (e.g. a scorer's test items); None = all.
    """
    frame = ratings.select("item_id", "rater", pl.col("score").cast(pl.Float64))
    if item_ids is not None:
        frame = frame.filter(pl.col("item_id").is_in(list(item_ids)))
    pairs = ceiling_pairs(frame)
    report = agreement_report(pairs["others_mean"].to_numpy(), pairs["score"].to_numpy())
    return {**report, "n_items": pairs["item_id"].n_unique(), "n_pairs": pairs.height}
