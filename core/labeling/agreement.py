"""Inter-rater agreement for scores in [-1, 1] (SPEC §6.4).

Every function takes a long frame of ratings with columns ``item_id``, ``rater``, ``score`` and
one rating per (item, rater) (use :func:`core.labeling.reports.first_ratings`; test–retest takes
all rows). Functions are pure; randomness (bootstrap over items) is seeded.

Formulas (n_u ratings of unit u, n = Σ n_u over units with n_u ≥ 2):

- Krippendorff's α, interval metric: α = 1 − D_o / D_e with
  D_o = (1/n) Σ_u Σ_{i≠j∈u} (v_i − v_j)² / (n_u − 1) and
  D_e = Σ_{i≠j over all pairable values} (v_i − v_j)² / (n (n − 1)).
- ICC, one-way random effects with unequal raters per item (McGraw & Wong 1996; Shrout & Fleiss
  1979, case 1): MSB = Σ k_i (ȳ_i − ȳ)² / (N_items − 1), MSW = ΣΣ (y_ij − ȳ_i)² / (N − N_items),
  k₀ = (N − Σ k_i² / N) / (N_items − 1); ICC(1,1) = (MSB − MSW) / (MSB + (k₀ − 1) MSW),
  ICC(1,k) = (MSB − MSW) / MSB; F-distribution confidence intervals.
- Fleiss' κ on binned scores (−1 if s < −t, +1 if s > t, else 0; t = 0.33 by default), for unequal
  raters per item: P_i = Σ_j n_ij (n_ij − 1) / (n_i (n_i − 1)), P̄ = mean P_i, p_j = share of all
  ratings in bin j, P_e = Σ p_j², κ = (P̄ − P_e) / (1 − P_e).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

DEFAULT_BIN_THRESHOLD = 0.33
DEFAULT_N_BOOT = 1000
MAX_N_BOOT = 100_000  # memory grows with items × resamples; more adds no precision to a 95 % CI


@dataclass(frozen=True)
class Band:
    """An interpretation band: values ≥ ``lower`` read as ``label``."""

    lower: float
    label: str


# Conventional reading of each statistic, highest band first.
BANDS: dict[str, tuple[Band, ...]] = {
    # Krippendorff (2004): rely on α ≥ .800; tentative conclusions for .667 ≤ α < .800.
    "alpha": (Band(0.8, "reliable"), Band(0.667, "tentative"), Band(-math.inf, "unreliable")),
    # Koo & Li (2016).
    "icc": (Band(0.9, "excellent"), Band(0.75, "good"), Band(0.5, "moderate"), Band(-math.inf, "poor")),
    # Landis & Koch (1977).
    "kappa": (Band(0.81, "almost perfect"), Band(0.61, "substantial"), Band(0.41, "moderate"),
              Band(0.21, "fair"), Band(0.0, "slight"), Band(-math.inf, "poor")),
    # Cohen (1988), on |r|.
    "correlation": (Band(0.5, "strong"), Band(0.3, "moderate"), Band(0.1, "weak"), Band(-math.inf, "negligible")),
}


def interpret(metric: str, value: float | None) -> str:
    """The band ``value`` falls in for ``metric`` (a key of :data:`BANDS`); "n/a" for None/NaN.

    >>> interpret("alpha", 0.7)
    'tentative'
    """
    if metric not in BANDS:
        raise ValueError(f"unknown metric {metric!r}; valid: {', '.join(BANDS)}")
    if value is None or not math.isfinite(value):
        return "n/a"
    v = abs(value) if metric == "correlation" else value
    return next(b.label for b in BANDS[metric] if v >= b.lower)


def _check(frame: pl.DataFrame) -> pl.DataFrame:
    missing = {"item_id", "rater", "score"} - set(frame.columns)
    if missing:
        raise ValueError(f"ratings frame lacks columns {sorted(missing)}")
    if frame.select(pl.struct("item_id", "rater").is_duplicated().any()).item():
        raise ValueError("ratings frame has several ratings of one item by one rater; use first_ratings()")
    return frame.select("item_id", "rater", pl.col("score").cast(pl.Float64))


def _unit_sums(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per item with ≥ 2 ratings: m (count), s1 (Σ score), s2 (Σ score²) of the scores centred on
    their mean (α does not change under a shift; centring avoids cancellation), and the largest
    squared score (the scale for the "no variation" tolerance)."""
    f = _check(frame)
    keep = f.group_by("item_id").len().filter(pl.col("len") >= 2)["item_id"]
    f = f.filter(pl.col("item_id").is_in(keep.implode()))
    if f.is_empty():
        empty = np.zeros(0)
        return empty, empty, empty, 0.0
    scale2 = float(np.max(f["score"].to_numpy() ** 2))
    u = (f.with_columns(pl.col("score") - pl.col("score").mean())
         .group_by("item_id")
         .agg(pl.len().alias("m"), pl.col("score").sum().alias("s1"), (pl.col("score") ** 2).sum().alias("s2"))
         .sort("item_id"))
    m, s1, s2 = (u[c].to_numpy().astype(float) for c in ("m", "s1", "s2"))
    return m, s1, s2, scale2


def _alpha_from_sums(w: np.ndarray, m: np.ndarray, s1: np.ndarray, s2: np.ndarray, scale2: float) -> np.ndarray:
    # Σ_{i≠j}(v_i − v_j)² = 2 (m Σv² − (Σv)²) within a unit and over the pooled values alike.
    within = (m * s2 - s1**2) / (m - 1)
    n, a = w @ m, w @ within
    t1, t2 = w @ s1, w @ s2
    pooled = n * t2 - t1**2
    varies = pooled > 1e-12 * n**2 * max(scale2, 1e-300)  # rounding noise is not variation
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(varies, 1.0 - (n - 1) * a / pooled, np.nan)


def krippendorff_alpha_interval(frame: pl.DataFrame) -> float:
    """Krippendorff's α with the interval metric (NaN when there is no variation at all).

    >>> f = pl.DataFrame({"item_id": [1, 1, 2, 2], "rater": ["a", "b"] * 2, "score": [1.0, 1.0, -1.0, -1.0]})
    >>> krippendorff_alpha_interval(f)
    1.0
    """
    m, s1, s2, scale2 = _unit_sums(frame)
    if len(m) == 0:
        return float("nan")
    return float(_alpha_from_sums(np.ones(len(m)), m, s1, s2, scale2))


def alpha_bootstrap_ci(frame: pl.DataFrame, *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile CI of interval α from resampling items (units) with replacement."""
    m, s1, s2, scale2 = _unit_sums(frame)
    if len(m) < 2:
        return (float("nan"), float("nan"))
    weights = np.random.default_rng(seed).multinomial(len(m), np.full(len(m), 1 / len(m)), size=n_boot)
    boots = _alpha_from_sums(weights.astype(float), m, s1, s2, scale2)
    if np.isnan(boots).all():
        return (float("nan"), float("nan"))
    lo, hi = np.nanquantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2])
    return (float(lo), float(hi))


def icc_oneway(frame: pl.DataFrame, *, level: float = 0.95) -> dict[str, float | int]:
    """ICC(1,1) and ICC(1,k) of a one-way random-effects model, unequal raters per item.

    Items with fewer than 2 ratings are left out. Returns icc1, icc1_lo, icc1_hi, icck, icck_lo,
    icck_hi, k0, msb, msw, f, df1, df2, n_items, n_ratings (NaN where undefined).
    """
    f = _check(frame)
    keep = f.group_by("item_id").len().filter(pl.col("len") >= 2)["item_id"]
    f = f.filter(pl.col("item_id").is_in(keep.implode()))
    n_items, total = keep.len(), f.height
    out: dict[str, float | int] = {"n_items": n_items, "n_ratings": total}
    nan = float("nan")
    if n_items < 2 or total <= n_items:
        return {**out, **dict.fromkeys(("icc1", "icc1_lo", "icc1_hi", "icck", "icck_lo", "icck_hi", "k0", "msb",
                                        "msw", "f", "df1", "df2"), nan)}
    g = f.group_by("item_id").agg(pl.len().alias("k"), pl.col("score").mean().alias("mean"))
    grand = f["score"].mean()
    ssb = float((g["k"] * (g["mean"] - grand) ** 2).sum())
    ssw = float(f.join(g, on="item_id").select(((pl.col("score") - pl.col("mean")) ** 2).sum()).item())
    df1, df2 = n_items - 1, total - n_items
    msb, msw = ssb / df1, ssw / df2
    k0 = (total - float((g["k"] ** 2).sum()) / total) / df1
    out.update(k0=k0, msb=msb, msw=msw, df1=df1, df2=df2)
    if msw == 0:
        return {**out, "icc1": 1.0 if msb > 0 else nan, "icck": 1.0 if msb > 0 else nan, "f": math.inf,
                "icc1_lo": nan, "icc1_hi": nan, "icck_lo": nan, "icck_hi": nan}
    # deferred: heavy optional import (~500 ms), only needed when an ICC interval is computed
    from scipy import stats

    fstat = msb / msw
    q = 1 - (1 - level) / 2
    f_lo, f_hi = fstat / stats.f.ppf(q, df1, df2), fstat * stats.f.ppf(q, df2, df1)
    out.update(
        f=fstat, icc1=(msb - msw) / (msb + (k0 - 1) * msw), icck=(msb - msw) / msb if msb else nan,
        icc1_lo=(f_lo - 1) / (f_lo + k0 - 1), icc1_hi=(f_hi - 1) / (f_hi + k0 - 1),
        icck_lo=1 - 1 / f_lo, icck_hi=1 - 1 / f_hi,
    )
    return out


def _fisher_ci(r: float, n: int, *, se_scale: float = 1.0, level: float = 0.95) -> tuple[float, float]:
    if n <= 3 or not math.isfinite(r) or abs(r) >= 1:
        return (r, r) if math.isfinite(r) and abs(r) >= 1 else (float("nan"), float("nan"))
    # deferred: heavy optional import (~500 ms), only needed when a correlation interval is computed
    from scipy import stats

    z, se = math.atanh(r), math.sqrt(se_scale / (n - 3))
    q = stats.norm.ppf(1 - (1 - level) / 2)
    return (math.tanh(z - q * se), math.tanh(z + q * se))


def _corr(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def pairwise_correlations(frame: pl.DataFrame, *, min_overlap: int = 3) -> pl.DataFrame:
    """Pearson and Spearman correlation of every pair of raters over the items both rated.

    CIs by Fisher's z (Spearman with the Fieller et al. variance 1.06 / (n − 3)). Pairs with fewer
    than ``min_overlap`` shared items are left out.
    """
    # deferred: heavy optional import (~500 ms), only needed when a Spearman correlation is computed
    from scipy import stats

    f = _check(frame)
    wide = f.pivot(on="rater", index="item_id", values="score", aggregate_function="first")
    rows = []
    for a, b in combinations(sorted(c for c in wide.columns if c != "item_id"), 2):
        both = wide.select(a, b).drop_nulls()
        if both.height < min_overlap:
            continue
        x, y = both[a].to_numpy(), both[b].to_numpy()
        r = _corr(x, y)
        rho = _corr(stats.rankdata(x), stats.rankdata(y))
        rows.append((a, b, both.height, r, *_fisher_ci(r, both.height), rho,
                     *_fisher_ci(rho, both.height, se_scale=1.06), float(np.mean(np.abs(x - y)))))
    schema = {"rater_a": pl.String, "rater_b": pl.String, "n": pl.Int64, "pearson": pl.Float64,
              "pearson_lo": pl.Float64, "pearson_hi": pl.Float64, "spearman": pl.Float64,
              "spearman_lo": pl.Float64, "spearman_hi": pl.Float64, "mean_abs_diff": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def bin_scores(scores: Any, *, threshold: float = DEFAULT_BIN_THRESHOLD) -> np.ndarray:
    """−1 below −threshold, +1 above +threshold, else 0 (the neutral bin is closed).

    >>> bin_scores([-0.5, -0.33, 0.0, 0.34]).tolist()
    [-1, 0, 0, 1]
    """
    if not 0 <= threshold < 1:
        raise ValueError(f"bin threshold must lie in [0, 1), got {threshold!r}")
    s = np.asarray(scores, dtype=float)
    return np.where(s < -threshold, -1, np.where(s > threshold, 1, 0)).astype(int)


def _bin_counts(frame: pl.DataFrame, threshold: float) -> np.ndarray:
    f = _check(frame).with_columns(pl.Series("bin", bin_scores(frame["score"].to_numpy(), threshold=threshold)))
    counts = (f.group_by("item_id").agg(*((pl.col("bin") == b).sum().alias(str(b)) for b in (-1, 0, 1)))
              .sort("item_id").select("-1", "0", "1").to_numpy().astype(float))
    return counts[counts.sum(axis=1) >= 2]


def _kappa_from_counts(counts: np.ndarray) -> tuple[float, float]:
    n_i = counts.sum(axis=1)
    p_i = (counts * (counts - 1)).sum(axis=1) / (n_i * (n_i - 1))
    p_bar = float(p_i.mean())
    p_j = counts.sum(axis=0) / n_i.sum()
    p_e = float((p_j**2).sum())
    return ((p_bar - p_e) / (1 - p_e) if p_e < 1 else float("nan")), p_bar


def fleiss_kappa_binned(frame: pl.DataFrame, *, threshold: float = DEFAULT_BIN_THRESHOLD,
                        n_boot: int = DEFAULT_N_BOOT, seed: int = 0, level: float = 0.95) -> dict[str, float | int]:
    """Fleiss' κ and observed agreement of the binned scores, with a bootstrap CI over items."""
    counts = _bin_counts(frame, threshold)
    if len(counts) == 0:
        return {"kappa": float("nan"), "kappa_lo": float("nan"), "kappa_hi": float("nan"),
                "observed_agreement": float("nan"), "n_items": 0, "threshold": threshold}
    kappa, p_bar = _kappa_from_counts(counts)
    rng = np.random.default_rng(seed)
    boots = [_kappa_from_counts(counts[rng.integers(0, len(counts), len(counts))])[0] for _ in range(n_boot)]
    usable = len(counts) > 1 and not np.isnan(boots).all()
    lo, hi = np.nanquantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2]) if usable else (np.nan, np.nan)
    return {"kappa": kappa, "kappa_lo": float(lo), "kappa_hi": float(hi), "observed_agreement": p_bar,
            "n_items": len(counts), "threshold": threshold}


def rater_bias(frame: pl.DataFrame, *, level: float = 0.95) -> pl.DataFrame:
    """Per rater: mean signed deviation of their score from the mean of the co-raters on the same
    item (items with ≥ 2 raters), with a t-interval. Positive = rates higher than the others."""
    f = _check(frame)
    g = f.group_by("item_id").agg(pl.len().alias("m"), pl.col("score").sum().alias("s1"))
    dev = (f.join(g.filter(pl.col("m") >= 2), on="item_id")
           .with_columns((pl.col("score") - (pl.col("s1") - pl.col("score")) / (pl.col("m") - 1)).alias("dev")))
    out = dev.group_by("rater").agg(pl.len().alias("n"), pl.col("dev").mean().alias("mean_signed_deviation"),
                                    pl.col("dev").std().alias("sd")).sort("rater")
    # deferred: heavy optional import (~500 ms), only needed when a rater-bias interval is computed
    from scipy import stats

    q = pl.Series([stats.t.ppf(1 - (1 - level) / 2, n - 1) if n > 1 else float("nan") for n in out["n"]])
    half = q * out["sd"] / out["n"].cast(pl.Float64).sqrt()
    return out.with_columns((pl.col("mean_signed_deviation") - half).alias("ci_lo"),
                            (pl.col("mean_signed_deviation") + half).alias("ci_hi"))


def retest_agreement(all_ratings: pl.DataFrame, *, threshold: float = DEFAULT_BIN_THRESHOLD) -> pl.DataFrame:
    """Repeat audits: each rater's first vs second rating of the same item.

    ``all_ratings`` has every row (columns item_id, rater, score, created_at). Returns one row per
    rater plus ``(all)``: n_pairs, mean_abs_diff, pearson, same_bin (share of pairs in one bin).
    """
    f = all_ratings.sort("created_at", *(["rating_id"] if "rating_id" in all_ratings.columns else []))
    pairs = (f.with_columns(pl.int_range(pl.len()).over("item_id", "rater").alias("nth"))
             .filter(pl.col("nth") < 2)
             .pivot(on="nth", index=["item_id", "rater"], values="score"))
    pairs = pairs.drop_nulls() if "1" in pairs.columns else pairs.clear()
    schema = {"rater": pl.String, "n_pairs": pl.Int64, "mean_abs_diff": pl.Float64, "pearson": pl.Float64,
              "same_bin": pl.Float64}
    if pairs.is_empty():
        return pl.DataFrame(schema=schema)
    rows = []
    for name, part in [*sorted(pairs.partition_by("rater", as_dict=True).items()), (("(all)",), pairs)]:
        x, y = part["0"].to_numpy(), part["1"].to_numpy()
        same = float(np.mean(bin_scores(x, threshold=threshold) == bin_scores(y, threshold=threshold)))
        rows.append((name[0], len(x), float(np.mean(np.abs(x - y))), _corr(x, y), same))
    return pl.DataFrame(rows, schema=schema, orient="row")


def agreement_report(all_ratings: pl.DataFrame, *, threshold: float = DEFAULT_BIN_THRESHOLD,
                     n_boot: int = DEFAULT_N_BOOT, seed: int = 0, min_overlap: int = 3) -> dict[str, Any]:
    """Every statistic of SPEC §6.4 with CIs and interpretation bands, on each rater's first
    rating of each item (test–retest on the repeats)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or not 1 <= n_boot <= MAX_N_BOOT:
        raise ValueError(f"bootstrap resamples must be an integer from 1 to {MAX_N_BOOT:,}, got {n_boot!r}")
    order = ["is_repeat", "created_at"] if "is_repeat" in all_ratings.columns else ["created_at"]
    first = all_ratings.sort(order).unique(["item_id", "rater"], keep="first", maintain_order=True)
    alpha = krippendorff_alpha_interval(first)
    alpha_lo, alpha_hi = alpha_bootstrap_ci(first, n_boot=n_boot, seed=seed)
    icc = icc_oneway(first)
    kappa = fleiss_kappa_binned(first, threshold=threshold, n_boot=n_boot, seed=seed)
    per_item = first.group_by("item_id").len()
    return {
        "n_ratings": all_ratings.height, "n_items": per_item.height,
        "n_items_multi": int((per_item["len"] >= 2).sum()), "n_raters": first["rater"].n_unique(),
        "alpha": {"value": alpha, "ci": [alpha_lo, alpha_hi], "band": interpret("alpha", alpha), "n_boot": n_boot},
        "icc": {**icc, "band_icc1": interpret("icc", icc["icc1"]), "band_icck": interpret("icc", icc["icck"])},
        "binned": {**kappa, "band": interpret("kappa", kappa["kappa"])},
        "pairwise": pairwise_correlations(first, min_overlap=min_overlap).to_dicts(),
        "rater_bias": rater_bias(first).to_dicts(),
        "test_retest": retest_agreement(all_ratings, threshold=threshold).to_dicts(),
    }


def json_safe(obj: Any) -> Any:
    """``obj`` with NaN and infinities replaced by None (strict JSON has neither).

    >>> json_safe({"a": [float("nan"), 1.0]})
    {'a': [None, 1.0]}
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    return obj
