"""Per-rater leniency and range use, with 95 % intervals (the Label review page's rater view).

- **Leniency**: the mean offset of a rater's score from the item's consensus, over the items with
  ≥ 2 raters they rated (each rater's latest rating in force). The consensus is the item's
  calculated or adjudicated value, else (mixed signs, not yet adjudicated) the mean of its raters'
  scores. Positive = more lenient (rates higher) than the consensus. Interval: mean ± t(0.975,
  n−1)·sd/√n.
- **Range use**: how much of the −1 … +1 scale the rater uses, over all their ratings in force:
  the standard deviation of their scores with its chi-square interval
  [sd·√((n−1)/χ²(0.975, n−1)), sd·√((n−1)/χ²(0.025, n−1))], the 5th–95th percentile span, and the
  share of ratings at the ends (|score| ≥ 0.8) with its Wilson interval.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

EXTREME = 0.8
LENIENCY_SCHEMA: dict[str, Any] = {"rater": pl.String, "n": pl.Int64, "leniency": pl.Float64, "ci_lo": pl.Float64,
                                   "ci_hi": pl.Float64}
RANGE_SCHEMA: dict[str, Any] = {"rater": pl.String, "n": pl.Int64, "sd": pl.Float64, "sd_lo": pl.Float64,
                                "sd_hi": pl.Float64, "p05": pl.Float64, "p95": pl.Float64, "extreme_share": pl.Float64,
                                "extreme_lo": pl.Float64, "extreme_hi": pl.Float64}


def wilson_interval(k: int, n: int, *, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n.

    >>> tuple(round(x, 4) for x in wilson_interval(3, 10))
    (0.1078, 0.6032)
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def item_consensus(consensus_frame: pl.DataFrame) -> pl.DataFrame:
    """item_id → the value a rater is compared with: the consensus, else the mean of the raters' scores."""
    return consensus_frame.select(
        "item_id", pl.coalesce(pl.col("consensus"), pl.col("scores").list.mean()).alias("reference"))


def leniency(latest: pl.DataFrame, consensus_frame: pl.DataFrame) -> pl.DataFrame:
    """Per rater: n items, mean offset from the item consensus and its 95 % t-interval.

    Args:
        latest: each rater's latest rating in force per item (columns item_id, rater, score).
        consensus_frame: :func:`core.labeling.consensus.compute_consensus` of the same ratings.
    """
    if latest.is_empty() or consensus_frame.is_empty():
        return pl.DataFrame(schema=LENIENCY_SCHEMA)
    offsets = latest.join(item_consensus(consensus_frame), on="item_id").with_columns(
        (pl.col("score") - pl.col("reference")).alias("offset"))
    out = offsets.group_by("rater").agg(pl.len().alias("n"), pl.col("offset").mean().alias("leniency"),
                                        pl.col("offset").std().alias("sd")).sort("rater")
    # deferred: scipy (~0.5 s) only when the rater view is computed
    from scipy import stats

    half = [stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) if n > 1 and sd is not None else math.nan
            for n, sd in zip(out["n"], out["sd"], strict=True)]
    return out.with_columns(pl.Series("half", half, dtype=pl.Float64)).select(
        "rater", pl.col("n").cast(pl.Int64), "leniency", (pl.col("leniency") - pl.col("half")).alias("ci_lo"),
        (pl.col("leniency") + pl.col("half")).alias("ci_hi"))


def _range_row(rater: str, scores: list[float]) -> dict[str, Any]:
    # deferred: scipy (~0.5 s) only when the rater view is computed
    from scipy import stats

    n = len(scores)
    series = pl.Series(scores, dtype=pl.Float64)
    std = series.std() if n > 1 else None
    sd = float(std) if isinstance(std, int | float) else math.nan
    lo = hi = math.nan
    if n > 1 and sd > 0:
        lo = sd * math.sqrt((n - 1) / stats.chi2.ppf(0.975, n - 1))
        hi = sd * math.sqrt((n - 1) / stats.chi2.ppf(0.025, n - 1))
    k = sum(1 for s in scores if abs(s) >= EXTREME)
    e_lo, e_hi = wilson_interval(k, n)
    return {"rater": rater, "n": n, "sd": sd, "sd_lo": lo, "sd_hi": hi,
            "p05": float(series.quantile(0.05, "linear") or math.nan),
            "p95": float(series.quantile(0.95, "linear") or math.nan),
            "extreme_share": k / n if n else math.nan, "extreme_lo": e_lo, "extreme_hi": e_hi}


def range_use(latest: pl.DataFrame) -> pl.DataFrame:
    """Per rater: how much of the scale they use (sd with interval, 5–95 % span, share at the ends)."""
    if latest.is_empty():
        return pl.DataFrame(schema=RANGE_SCHEMA)
    rows = [_range_row(rater, part["score"].to_list())
            for (rater,), part in sorted(latest.partition_by("rater", as_dict=True).items())]
    return pl.DataFrame(rows, schema=RANGE_SCHEMA, orient="row")
