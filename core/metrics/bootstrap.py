"""Bootstrap 95 % intervals of the headline scores, and paired differences of two runs.

Restaurants are resampled with replacement (``numpy.random.default_rng(seed)``, a (B, n) index
matrix). Every score is a function of per-restaurant counts, so a resample is a row of draw
counts ``w`` (B, n): ratio scores are ``w @ counts``, and AP is computed for all rows at once over
the samples sorted once by score (ties kept as one threshold), which equals scikit-learn's
``average_precision_score`` on the resampled list.

Memory is bounded: the matrix is drawn and scored a block of rows at a time, at most
:data:`MAX_CELLS` resample × restaurant cells at once (a 1,000,000-restaurant run would need
gigabytes whole). The generator draws the blocks one after the other, so the indices are the
very ones of the whole matrix and every figure is the same (a test checks it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from core.metrics.process import PROCESS_WEIGHTS

MAX_CELLS = 4_000_000  # resample × restaurant cells drawn and scored at once (~100 MB of work arrays)
MAX_GROUP_COLUMNS = 32  # tie groups × (labels + 1) of the AP's group indicator (n × 32 cells at most)
HEADLINE = ("ordinal_auprc", "process_score", "consistency_score", "accuracy")
# Per-restaurant count columns of the ratio scores: (numerator, denominator).
PROCESS_COUNTS = {
    "incident_precision": ("matched", "claimed"),
    "severity_accuracy": ("severity_correct", "matched"),
    "modifier_accuracy": ("modifier_correct", "modifier_checks"),
    "verdict_support_rate": ("supported", "verdicts"),
    "snippet_validity": ("snippets_valid", "snippets"),
}
COUNT_COLUMNS = ("claimed", "matched", "severity_correct", "modifier_correct", "modifier_checks", "supported",
                 "verdicts", "snippets_valid", "snippets", "consistent", "consistency_total", "correct", "has_gt")


@dataclass(frozen=True)
class SampleTable:
    """Per restaurant: business_id, GT ordinal (NaN = no GT), ranking score, and count columns."""

    business_ids: tuple[str, ...]
    gt_ordinal: NDArray[np.float64]
    score: NDArray[np.float64]
    counts: NDArray[np.float64]  # (n, len(COUNT_COLUMNS))
    n_levels: int

    def take(self, ids: Sequence[str]) -> SampleTable:
        """The rows of ``ids``, in that order."""
        pos = {b: i for i, b in enumerate(self.business_ids)}
        return self.take_rows(np.array([pos[b] for b in ids], dtype=np.int64))

    def take_rows(self, rows: NDArray[np.int64]) -> SampleTable:
        """The rows at positions ``rows``, in that order (no lookup by id: fast on a million rows)."""
        ids = self.business_ids
        return SampleTable(tuple(ids[i] for i in rows.tolist()), self.gt_ordinal[rows], self.score[rows],
                           self.counts[rows], self.n_levels)


def resample_index(n: int, *, n_boot: int, seed: int) -> NDArray[np.int64]:
    """The (n_boot, n) matrix of restaurant indices drawn with replacement (fixed seed)."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be ≥ 1, got {n_boot}")
    return np.random.default_rng(seed).integers(0, max(n, 1), size=(n_boot, n))


def resample_blocks(n: int, *, n_boot: int, seed: int, max_cells: int | None = None) -> Iterator[NDArray[np.float32]]:
    """The rows of ``draw_counts(resample_index(n, n_boot=n_boot, seed=seed), n)``, a block at a
    time of at most ``max_cells`` cells (default :data:`MAX_CELLS`): the same numbers, bounded memory.

    >>> whole = draw_counts(resample_index(5, n_boot=7, seed=1), 5)
    >>> bool((np.vstack(list(resample_blocks(5, n_boot=7, seed=1, max_cells=10))) == whole).all())
    True
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be ≥ 1, got {n_boot}")
    rng = np.random.default_rng(seed)
    rows = max(1, (max_cells or MAX_CELLS) // max(n, 1))
    for start in range(0, n_boot, rows):
        block = rng.integers(0, max(n, 1), size=(min(rows, n_boot - start), n))
        yield draw_counts(block, n)


def scores_in_blocks(table: SampleTable, *, n_boot: int, seed: int) -> dict[str, NDArray[np.float64]]:
    """:func:`scores_from_counts` of every resample, computed a block of resamples at a time."""
    return scores_of_blocks((table,), resample_blocks(len(table.business_ids), n_boot=n_boot, seed=seed))[0]


def scores_of_blocks(tables: Sequence[SampleTable],
                     blocks: Iterable[NDArray[np.float32]]) -> list[dict[str, NDArray[np.float64]]]:
    """:func:`scores_from_counts` of each table (rows in one order) under every block of draw
    counts: the blocks are drawn once for all the tables, and each block is summed for all of them
    in one matrix product (the paired bootstrap's two sides share every draw)."""
    designs = [_design(t, np.float32) for t in tables]
    matrix = np.hstack([d.matrix for d in designs])
    edges = np.cumsum([0] + [d.matrix.shape[1] for d in designs])
    parts: list[list[dict[str, NDArray[np.float64]]]] = [[] for _ in tables]
    for w in blocks:
        sums = w @ matrix
        for i, (table, design) in enumerate(zip(tables, designs, strict=True)):
            parts[i].append(_scores_from_sums(table, design, sums[:, edges[i]:edges[i + 1]], w))
    return [{name: np.concatenate([p[name] for p in side]) for name in side[0]} for side in parts]


def draw_counts(index: NDArray[np.int64], n: int) -> NDArray[np.float32]:
    """How often each restaurant is drawn in each resample: (B, n) from a (B, n) index matrix.

    float32 holds these counts and their sums exactly (far below 2**24) and halves the memory.
    """
    b = index.shape[0]
    flat = (index + (np.arange(b, dtype=index.dtype) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float32)


def weighted_average_precision(y: NDArray[Any], score: NDArray[np.float64], weights: NDArray[Any]) -> NDArray[np.float64]:
    """AP of every row of ``weights`` (B, n) (sample i repeated weights[b, i] times); NaN when a row
    has no positive or no negative.

    >>> w = np.array([[1., 1, 1, 1], [0, 2, 1, 1]])
    >>> weighted_average_precision(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]), w).round(4).tolist()
    [0.8333, 0.75]
    """
    return weighted_average_precisions(np.asarray(y)[None, :], score, weights)[0]


def weighted_average_precisions(ys: NDArray[Any], score: NDArray[np.float64], weights: NDArray[Any]) -> NDArray[np.float64]:
    """AP for each label row of ``ys`` (L, n) and each weight row (B, n) → (L, B), one sort shared.

    Samples are sorted once by score (descending); a tie group is one threshold, scored at its
    end: AP = Σ_g Δtp_g · tp_g / seen_g / P, where tp and seen are running weighted sums.
    With few distinct scores (a handful of verdict levels), the weights are summed per tie group
    first (:func:`_group_sums`) and the running sums taken over the groups.
    """
    n = len(score)
    if n == 0:
        return np.full((len(ys), weights.shape[0]), np.nan)
    grouped = _group_sums(ys, score, weights)
    if grouped is not None:
        return _grouped_aps(*grouped)
    return sorted_pass_aps(ys, score, weights)


def sorted_pass_aps(ys: NDArray[Any], score: NDArray[np.float64], weights: NDArray[Any]) -> NDArray[np.float64]:
    """:func:`weighted_average_precisions` by running sums over every sample in score order (the
    path for many distinct scores, and the baseline of ``bench/paired_bootstrap.py``)."""
    n = len(score)
    if n == 0:
        return np.full((len(ys), weights.shape[0]), np.nan)
    if np.all(score[:-1] >= score[1:]):  # already in descending order (bootstrap_intervals sorts once)
        order, s, w = np.arange(n), score, weights
    else:
        order = np.argsort(-score, kind="stable")
        s, w = score[order], weights[:, order]
    ends = np.flatnonzero(np.append(s[:-1] != s[1:], True))
    ties = len(ends) < n
    seen = np.cumsum(w, axis=1)
    if ties:
        seen = seen[:, ends]
    seen[seen == 0] = 1.0  # nothing drawn yet: no positive gained there either
    total = w.sum(axis=1)
    out = []
    for y in ys:
        wy = w * np.asarray(y, dtype=w.dtype)[order]
        tp = np.cumsum(wy, axis=1)
        if ties:
            tp = tp[:, ends]
            wy = np.diff(tp, axis=1, prepend=0.0)  # positives gained per tie group
        out.append(_running_ap(wy, tp, seen, total))
    return np.vstack(out)


def _running_ap(gained: NDArray[Any], tp: NDArray[Any], seen: NDArray[Any], total: NDArray[Any]) -> NDArray[np.float64]:
    """AP of each row from the positives ``gained`` at each threshold and the running sums of
    positives (``tp``) and of all samples (``seen``, zeros made 1) up to it; NaN where a row has no
    positive or no negative (``total``: the row's drawn samples)."""
    positives = tp[:, -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = (gained * tp / seen).sum(axis=1, dtype=np.float64) / positives
    return np.where((positives > 0) & (positives < total), ap, np.nan)


def _group_sums(ys: NDArray[Any], score: NDArray[np.float64],
                weights: NDArray[Any]) -> tuple[NDArray[Any], list[NDArray[Any]]] | None:
    """Per tie group (descending score): the drawn weight (B, G) and, per label, the positive
    weight (B, G) — one matrix product with a 0/1 group indicator, in any sample order. None when
    the scores take too many values (more than :data:`MAX_GROUP_COLUMNS` columns) or hold a NaN.

    The sums are whole numbers below 2**24 (draw counts), so any summation order gives exactly
    the cumulative sums' values at the group ends: every AP is bit-identical to the sorted pass.
    """
    found = _group_indicator(ys, score, weights.dtype)
    if found is None:
        return None
    indicator, g = found
    sums = weights @ indicator
    return _split_groups(sums, g, len(ys))


def _group_indicator(ys: NDArray[Any], score: NDArray[np.float64], dtype: Any) -> tuple[NDArray[Any], int] | None:
    """The (n, G·(L+1)) 0/1 indicator whose column sums under a weight row are :func:`_group_sums`
    (drawn weight per tie group, then each label's positive weight per group), and G; None when
    the scores take too many values or hold a NaN."""
    n = len(score)
    if n == 0 or np.isnan(score).any():
        return None
    uniq = np.unique(score)
    g = len(uniq)
    if g == n or g * (len(ys) + 1) > MAX_GROUP_COLUMNS:
        return None
    gid = (g - 1) - np.searchsorted(uniq, score)  # group 0 holds the highest score
    rows = np.arange(n)
    indicator = np.zeros((n, g * (len(ys) + 1)), dtype=dtype)
    indicator[rows, gid] = 1
    for i, y in enumerate(ys):
        indicator[rows, (i + 1) * g + gid] = np.asarray(y, dtype=dtype)
    return indicator, g


def _split_groups(sums: NDArray[Any], g: int, n_labels: int) -> tuple[NDArray[Any], list[NDArray[Any]]]:
    """The drawn and per-label positive group sums out of the columns of :func:`_group_indicator`."""
    return sums[:, :g], [sums[:, (i + 1) * g:(i + 2) * g] for i in range(n_labels)]


def _grouped_aps(drawn: NDArray[Any], positive: list[NDArray[Any]]) -> NDArray[np.float64]:
    """:func:`weighted_average_precisions` from per-group sums (B, G): the same arithmetic."""
    seen = np.cumsum(drawn, axis=1)
    total = seen[:, -1].copy()
    seen[seen == 0] = 1.0  # nothing drawn yet: no positive gained there either
    out = []
    for group_pos in positive:
        tp = np.cumsum(group_pos, axis=1)
        out.append(_running_ap(np.diff(tp, axis=1, prepend=0.0), tp, seen, total))  # gained per tie group
    return np.vstack(out)


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


@dataclass(frozen=True)
class _Design:
    """What a table's scores need of a row of draw counts ``w``: ``w @ matrix`` sums the count
    columns and then, when the AP's scores fall in few tie groups, the group indicator of
    :func:`_group_indicator` (rows of samples without a GT are zero there)."""

    matrix: NDArray[Any]  # (n, len(COUNT_COLUMNS) [+ G·(L+1)])
    has_gt: NDArray[np.bool_] | None  # None: every sample has a GT
    levels: NDArray[np.bool_]  # (L, samples with a GT): the AP's labels, GT ≥ 1, ≥ 2, …
    groups: int  # G; 0 when the AP takes the sorted pass over every sample


def _design(table: SampleTable, dtype: Any) -> _Design:
    """:class:`_Design` of ``table`` with its matrix in ``dtype`` (that of the draw counts)."""
    has_gt = ~np.isnan(table.gt_ordinal)
    gt = table.gt_ordinal[has_gt]
    levels = np.vstack([(gt >= level) for level in range(1, table.n_levels)])
    counts = table.counts.astype(dtype)
    found = _group_indicator(levels, table.score[has_gt], dtype)
    if found is None:
        return _Design(counts, None if has_gt.all() else has_gt, levels, 0)
    indicator, g = found
    if not has_gt.all():
        full = np.zeros((len(has_gt), indicator.shape[1]), dtype=dtype)
        full[has_gt] = indicator
        indicator = full
    return _Design(np.hstack([counts, indicator]), None if has_gt.all() else has_gt, levels, g)


def scores_from_counts(table: SampleTable, weights: NDArray[Any]) -> dict[str, NDArray[np.float64]]:
    """Every headline score (and process component) for each row of ``weights`` (B, n)."""
    design = _design(table, weights.dtype)
    return _scores_from_sums(table, design, weights @ design.matrix, weights)


def _scores_from_sums(table: SampleTable, design: _Design, sums: NDArray[Any],
                      weights: NDArray[Any]) -> dict[str, NDArray[np.float64]]:
    """:func:`scores_from_counts` from ``sums = weights @ design.matrix`` (whole numbers, exact)."""
    n_counts = len(COUNT_COLUMNS)
    count_sums = sums[:, :n_counts].astype(np.float64)  # exact: counts < 2**24
    col = {name: count_sums[:, i] for i, name in enumerate(COUNT_COLUMNS)}
    out: dict[str, NDArray[np.float64]] = {}
    num = np.zeros(weights.shape[0])
    den = np.zeros(weights.shape[0])
    for comp, (a, b) in PROCESS_COUNTS.items():
        value = _ratio(col[a], col[b])
        out[comp] = value
        defined = ~np.isnan(value)
        num += np.where(defined, PROCESS_WEIGHTS[comp] * np.nan_to_num(value), 0.0)
        den += np.where(defined, PROCESS_WEIGHTS[comp], 0.0)
    out["process_score"] = 100.0 * _ratio(num, den)
    out["consistency_score"] = 100.0 * _ratio(col["consistent"], col["consistency_total"])
    out["accuracy"] = _ratio(col["correct"], col["has_gt"])
    if design.groups:
        aps = _grouped_aps(*_split_groups(sums[:, n_counts:], design.groups, len(design.levels)))
    else:
        score, w = table.score, weights
        if design.has_gt is not None:
            score, w = score[design.has_gt], weights[:, design.has_gt]
        aps = sorted_pass_aps(design.levels, score, w)
    defined = ~np.isnan(aps)
    out["ordinal_auprc"] = _ratio(np.where(defined, aps, 0.0).sum(axis=0), defined.sum(axis=0).astype(np.float64))
    return out


def interval(values: NDArray[np.float64], *, level: float = 0.95) -> dict[str, Any]:
    """Percentile interval of the defined values; the share of resamples where the score was undefined."""
    ok = values[~np.isnan(values)]
    if not len(ok):
        return {"low": None, "high": None, "n_defined": 0, "n_boot": int(len(values))}
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(ok, [tail, 100 - tail])
    return {"low": float(low), "high": float(high), "n_defined": int(len(ok)), "n_boot": int(len(values))}


@lru_cache(maxsize=4)
def resample_weights(n: int, n_boot: int, seed: int) -> NDArray[np.float32]:
    """:func:`draw_counts` of :func:`resample_index`, drawn once per (n, n_boot, seed) for the paired
    comparisons of a page (read-only; the same matrix a fresh draw gives). Only for matrices of at
    most :data:`MAX_CELLS` cells: larger ones are drawn in blocks each time (:func:`scores_in_blocks`)."""
    weights = draw_counts(resample_index(n, n_boot=n_boot, seed=seed), n)
    weights.flags.writeable = False
    return weights


def bootstrap_intervals(table: SampleTable, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> dict[str, Any]:
    """95 % percentile intervals of every headline score and process component (restaurants resampled)."""
    # Restaurants in descending score order first, so the AP pass needs no gather per resample.
    table = table.take_rows(np.argsort(-table.score, kind="stable"))
    scores = scores_in_blocks(table, n_boot=n_boot, seed=seed)
    return {"method": "percentile bootstrap over restaurants", "n_boot": n_boot, "seed": seed, "level": level,
            "scores": {name: interval(v, level=level) for name, v in scores.items()}}


def common_ids(a: SampleTable, b: SampleTable, *, same_gt: bool = True) -> list[str]:
    """The restaurants both tables hold with the same GT verdict, in ``a``'s order (the order the
    paired resamples index): two runs are compared only where their targets agree (``same_gt=False``:
    every restaurant both hold, for one run's answers scored against two GTs).

    >>> t = lambda ids, gt: SampleTable(tuple(ids), np.array(gt, float), np.zeros(len(ids)), np.zeros((len(ids), 1)), 3)
    >>> common_ids(t("abc", [0, 2, 1]), t("cbd", [1, 1, 0]))
    ['c']
    """
    in_b = {x: g for x, g in zip(b.business_ids, b.gt_ordinal.tolist(), strict=True)}
    return [x for x, g in zip(a.business_ids, a.gt_ordinal.tolist(), strict=True)
            if x in in_b and (not same_gt or in_b[x] == g)]


def gt_differs(a: SampleTable, b: SampleTable) -> list[str]:
    """The restaurants both tables hold whose GT verdict differs (left out of paired comparisons)."""
    in_b = {x: g for x, g in zip(b.business_ids, b.gt_ordinal.tolist(), strict=True)}
    return [x for x, g in zip(a.business_ids, a.gt_ordinal.tolist(), strict=True) if x in in_b and in_b[x] != g]


def resampled_scores(table: SampleTable, *, n_boot: int = 1000, seed: int = 0) -> dict[str, NDArray[np.float64]]:
    """Every score of ``table`` on each paired resample of its rows (in its order): one side of
    :func:`paired_differences`. A pure function of (rows in order, n_boot, seed), so callers may
    cache it per run and order."""
    return scores_of_blocks((table,), _weight_blocks(len(table.business_ids), n_boot=n_boot, seed=seed))[0]


def _weight_blocks(n: int, *, n_boot: int, seed: int) -> Iterable[NDArray[np.float32]]:
    """The paired resamples' draw counts: the cached whole matrix when it is small, else blocks."""
    if n * n_boot > MAX_CELLS:
        return resample_blocks(n, n_boot=n_boot, seed=seed)
    return (resample_weights(n, n_boot, seed),)


def paired_differences(
    a: SampleTable, b: SampleTable, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95,
    resampled: Any = None, same_gt: bool = True,
) -> dict[str, Any]:
    """Paired bootstrap of B − A on the restaurants both runs scored against the same GT verdict
    (same resamples for both); ``n_gt_differs`` counts those left out because their GT differs
    (runs scored against different GT versions or K).

    A difference is "real" at this level when its interval excludes 0. ``resampled(side, table)``
    (side "a" or "b", the table in common order) may return :func:`resampled_scores` from a cache.
    ``same_gt=False`` pairs every restaurant both hold: the same answers scored against two GTs.
    """
    common = common_ids(a, b, same_gt=same_gt)
    ta, tb = a.take(common), b.take(common)
    n = len(common)
    if resampled is None:  # one draw for both sides
        sa, sb = scores_of_blocks((ta, tb), _weight_blocks(n, n_boot=n_boot, seed=seed))
    else:
        sa, sb = resampled("a", ta), resampled("b", tb)
    full = np.ones((1, n))
    pa = {k: float(v[0]) for k, v in scores_from_counts(ta, full).items()}
    pb = {k: float(v[0]) for k, v in scores_from_counts(tb, full).items()}
    out = {}
    for name in sa:
        diff = sb[name] - sa[name]
        iv = interval(diff, level=level)
        point = pb[name] - pa[name]
        real = iv["low"] is not None and (iv["low"] > 0 or iv["high"] < 0)
        out[name] = {"a": _nan_none(pa[name]), "b": _nan_none(pb[name]), "difference": _nan_none(point), **iv,
                     "excludes_zero": bool(real)}
    return {"n_common": n, "n_gt_differs": len(gt_differs(a, b)) if same_gt else 0, "n_boot": n_boot, "seed": seed, "level": level,
            "differences": out}


def _nan_none(x: float) -> float | None:
    return None if np.isnan(x) else float(x)
