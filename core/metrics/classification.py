"""Verdict metrics and primitive accuracy (SPEC §5.4), scikit-learn style."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

# SPEC §5.4: a predicted primitive is right when |predicted − GT| ≤ tolerance.
PRIMITIVE_TOLERANCES: dict[str, dict[str, float]] = {
    "v1": {"n_total_incidents": 0, "incident_score": 0, "recency_decay": 0.1, "credibility_factor": 0.2},
    "v2": {"n_total_incidents": 0, "n_allergy_reviews": 0, "trust_score": 0.1, "adjusted_incident_score": 1.0,
           "trajectory_multiplier": 0, "recency_decay": 0.1, "credibility_factor": 0.2, "cuisine_impact": 0.2,
           "incident_impact": 2.0, "trust_impact": 0.3, "positive_credit": 0.2},
}


def _pair(y_true: Sequence[Any] | ArrayLike, y_pred: Sequence[Any] | ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    t, p = np.asarray(y_true, dtype=object), np.asarray(y_pred, dtype=object)
    if t.shape != p.shape or t.ndim != 1:
        raise ValueError(f"y_true and y_pred must be 1-d of one length, got {t.shape} and {p.shape}")
    return t, p


def accuracy_score(y_true: Sequence[Any] | ArrayLike, y_pred: Sequence[Any] | ArrayLike) -> float | None:
    """Share of samples whose verdict equals GT's; None when there are no samples.

    >>> accuracy_score(["Low Risk", "High Risk"], ["Low Risk", "Low Risk"])
    0.5
    """
    t, p = _pair(y_true, y_pred)
    return float(np.mean(t == p)) if len(t) else None


def macro_f1_score(y_true: Sequence[Any] | ArrayLike, y_pred: Sequence[Any] | ArrayLike, *, labels: Sequence[str]) -> float | None:
    """Unweighted mean of the per-verdict F1 over ``labels`` (a verdict never seen scores 0).

    F1 of a label = 2·TP / (true count + predicted count), 0 where both counts are 0; values
    outside ``labels`` count for no label. The same arithmetic, in the same order, as
    scikit-learn's ``f1_score(average="macro", zero_division=0)`` (``tests/core/test_metrics.py``
    compares them on random inputs), without importing scikit-learn (over a second).

    >>> round(macro_f1_score(["Low", "Low", "High"], ["Low", "High", "High"], labels=["Low", "High"]), 4)
    0.6667
    """
    t, p = _pair(y_true, y_pred)
    if not len(t):
        return None
    labels = list(labels)
    if not labels:
        raise ValueError("labels must name at least one verdict")
    position = {label: i for i, label in enumerate(labels)}
    ti = np.fromiter((position.get(x, -1) for x in t), dtype=np.int64, count=len(t))
    pi = np.fromiter((position.get("" if x is None else x, -1) for x in p), dtype=np.int64, count=len(p))
    n = len(labels)
    tp = np.bincount(ti[(ti == pi) & (ti >= 0)], minlength=n)
    true_sum = np.bincount(ti[ti >= 0], minlength=n)
    pred_sum = np.bincount(pi[pi >= 0], minlength=n)
    denominator = 1.0 * true_sum.astype(np.float64) + pred_sum.astype(np.float64)  # beta² = 1
    zero = denominator == 0
    f1 = (2.0 * tp.astype(np.float64)) / np.where(zero, 1.0, denominator)
    f1[zero] = 0.0
    return float(np.nanmean(f1))


def false_positive_rate(gt_lowest: ArrayLike, claims_incident: ArrayLike) -> float | None:
    """Share of GT-lowest-verdict samples (e.g. GT Low Risk) that claim any incident.

    >>> false_positive_rate([True, True, False], [True, False, True])
    0.5
    """
    low = np.asarray(gt_lowest, dtype=bool)
    claim = np.asarray(claims_incident, dtype=bool)
    if low.shape != claim.shape:
        raise ValueError(f"gt_lowest and claims_incident differ in shape: {low.shape} vs {claim.shape}")
    return float(claim[low].mean()) if low.any() else None


def primitive_accuracy(
    predicted: Sequence[Mapping[str, Any]], truth: Sequence[Mapping[str, Any]], *, tolerances: Mapping[str, float]
) -> dict[str, Any]:
    """Per primitive, the share of samples predicted within its tolerance; their mean.

    A primitive counts only over samples where both sides hold a number (case-insensitive keys).

    >>> r = primitive_accuracy([{"N_TOTAL_INCIDENTS": 1, "RECENCY_DECAY": 0.5}],
    ...                        [{"n_total_incidents": 1, "recency_decay": 0.3}],
    ...                        tolerances={"n_total_incidents": 0, "recency_decay": 0.1})
    >>> r["per_primitive"], r["mean"]
    ({'n_total_incidents': 1.0, 'recency_decay': 0.0}, 0.5)
    """
    if len(predicted) != len(truth):
        raise ValueError(f"predicted and truth differ in length: {len(predicted)} vs {len(truth)}")
    per: dict[str, float] = {}
    for name, tol in tolerances.items():
        ok = n = 0
        for pred, gt in zip(predicted, truth, strict=True):
            pv = _lookup(pred, name)
            gv = _lookup(gt, name)
            if pv is None or gv is None:
                continue
            n += 1
            ok += int(abs(pv - gv) <= tol + 1e-9)
        if n:
            per[name] = ok / n
    return {"per_primitive": per, "mean": float(np.mean(list(per.values()))) if per else None}


def _lookup(record: Mapping[str, Any], name: str) -> float | None:
    for key in (name, name.upper()):
        value = record.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None
