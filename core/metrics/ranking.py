"""Average precision and ordinal AUPRC (SPEC §5.1), scikit-learn style.

:func:`average_precision` is scikit-learn's ``average_precision_score`` (step-wise, ties of
scores counted as one threshold) computed for many rows at once: one row per bootstrap
resample, so 1,000 resamples cost a few numpy passes instead of 1,000 calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray


def _check_binary(y_true: NDArray[Any], y_score: NDArray[Any]) -> None:
    if y_true.shape != y_score.shape:
        raise ValueError(f"y_true and y_score differ in shape: {y_true.shape} vs {y_score.shape}")
    if np.isnan(y_score).any():
        raise ValueError("y_score contains NaN")
    if not np.isin(y_true, (0, 1)).all():
        raise ValueError(f"y_true must hold 0/1 labels, got {np.unique(y_true)[:5].tolist()}")


def average_precision(y_true: ArrayLike, y_score: ArrayLike) -> NDArray[np.float64]:
    """Average precision of each row: AP = Σₙ (Rₙ − Rₙ₋₁)·Pₙ over distinct score thresholds.

    Equal to scikit-learn's ``average_precision_score`` row by row. Rows whose labels have no
    positive get NaN (AP is undefined there, SPEC §5.1), never 0.

    Args:
        y_true: 0/1 labels, shape (n,) or (B, n).
        y_score: scores of the same shape, higher = more likely positive; NaN is an error.

    Returns:
        AP per row, shape () for 1-d input or (B,).

    >>> float(average_precision([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]))
    0.8333333333333333
    >>> average_precision([[0, 1], [0, 0]], [[0.2, 0.9], [0.1, 0.2]]).tolist()
    [1.0, nan]
    """
    t = np.asarray(y_true)
    s = np.asarray(y_score, dtype=np.float64)
    _check_binary(t, s)
    one_d = t.ndim == 1
    t2 = np.atleast_2d(t).astype(np.float64)
    s2 = np.atleast_2d(s)
    n_rows, n = t2.shape
    if n == 0:
        out = np.full(n_rows, np.nan)
        return out.reshape(()) if one_d else out
    order = np.argsort(-s2, axis=1, kind="stable")
    s_sorted = np.take_along_axis(s2, order, axis=1)
    t_sorted = np.take_along_axis(t2, order, axis=1)
    tp = np.cumsum(t_sorted, axis=1)
    # A tie group is scored at its last member (one threshold per distinct score).
    last = np.ones_like(s_sorted, dtype=bool)
    last[:, :-1] = s_sorted[:, :-1] != s_sorted[:, 1:]
    end = np.where(last, np.arange(n), n)
    end = np.minimum.accumulate(end[:, ::-1], axis=1)[:, ::-1]
    precision_at_end = np.take_along_axis(tp, end, axis=1) / (end + 1)
    positives = tp[:, -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = (t_sorted * precision_at_end).sum(axis=1) / positives
    ap = np.where(positives > 0, ap, np.nan)
    return ap.reshape(()) if one_d else ap


def average_precision_score_like_sklearn(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """scikit-learn's ``average_precision_score(y_true, y_score)`` of 0/1 labels with a positive,
    in its own arithmetic and order (so the same float), without importing scikit-learn (over a
    second): precision and recall at each distinct score from the top, then
    AP = −Σ (recall[i+1] − recall[i]) · precision[i] over the reversed curve.

    >>> average_precision_score_like_sklearn([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.8333333333333333
    """
    y = np.asarray(y_true)
    s = np.asarray(y_score, dtype=np.float64)
    order = np.argsort(-s, kind="stable")  # the order within a tie does not change the sums below
    y_sorted, s_sorted = y[order].astype(np.float64), s[order]
    last = np.concatenate([np.nonzero(np.diff(s_sorted))[0], [y.size - 1]])
    tps = np.cumsum(y_sorted, dtype=np.float64)[last]
    fps = 1 + last.astype(np.float64) - tps
    precision = np.concatenate([(tps / (tps + fps))[::-1], [1.0]])
    recall = np.concatenate([(tps / tps[-1])[::-1], [0.0]])
    return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


def verdict_ordinals(verdicts: Sequence[str | None], scale: Sequence[str]) -> NDArray[np.float64]:
    """Position of each verdict in the ordered ``scale`` (lowest 0); unknown or None → NaN.

    >>> verdict_ordinals(["High Risk", None, "Low Risk"], ["Low Risk", "High Risk", "Critical Risk"]).tolist()
    [1.0, nan, 0.0]
    """
    pos = {v: float(i) for i, v in enumerate(scale)}
    return np.array([pos.get(v, np.nan) if v is not None else np.nan for v in verdicts], dtype=np.float64)


def threshold_key(level: str) -> str:
    """Key suffix of a threshold: "High Risk" → "high", "Not Recommended" → "not_recommended".

    >>> threshold_key("Critical Risk"), threshold_key("Not Recommended")
    ('critical', 'not_recommended')
    """
    text = level.lower().removesuffix(" risk")
    return "_".join(text.split())


def ordinal_auprc(
    y_true: ArrayLike, y_score: ArrayLike, *, scale: Sequence[str] = ("Low Risk", "High Risk", "Critical Risk")
) -> dict[str, Any]:
    """Ordinal AUPRC: one AP per level above the lowest, their mean, nAP and prevalences.

    For t = 1 … len(scale)−1: y = (y_true ≥ t), AP_t = ``average_precision_score(y, y_score)``
    when y has both classes, else null with its reason (never 0);
    nAP_t = (AP_t − prevalence_t)/(1 − prevalence_t); ordinal_auprc = mean of the defined AP_t.

    Args:
        y_true: GT ordinals (0 = lowest verdict of ``scale``).
        y_score: ranking scores (higher = riskier), no NaN.
        scale: the ordered verdicts.

    >>> r = ordinal_auprc([0, 0, 1, 2], [1.0, 2.0, 6.0, 10.0])
    >>> r["auprc_ge_high"], r["auprc_ge_critical"], r["ordinal_auprc"]
    (1.0, 1.0, 1.0)
    >>> ordinal_auprc([0, 0, 1], [1, 2, 3])["thresholds"][1]["reason"]
    'no sample has GT ≥ Critical Risk'
    """
    t = np.asarray(y_true, dtype=np.float64)
    s = np.asarray(y_score, dtype=np.float64)
    if t.shape != s.shape or t.ndim != 1:
        raise ValueError(f"y_true and y_score must be 1-d of one length, got {t.shape} and {s.shape}")
    if np.isnan(s).any():
        raise ValueError("y_score contains NaN")
    if len(scale) < 2:
        raise ValueError(f"scale needs at least 2 verdicts, got {list(scale)}")
    n = len(t)
    out: dict[str, Any] = {"n_samples": n}
    rows: list[dict[str, Any]] = []
    for level in range(1, len(scale)):
        name = scale[level]
        y = (t >= level).astype(int)
        n_pos = int(y.sum())
        prevalence = n_pos / n if n else None
        ap: float | None = None
        reason = None
        if n == 0:
            reason = "no samples"
        elif n_pos == 0:
            reason = f"no sample has GT ≥ {name}"
        elif n_pos == n:
            reason = f"every sample has GT ≥ {name}"
        else:
            ap = average_precision_score_like_sklearn(y, s)
        nap = None if ap is None or prevalence is None else (ap - prevalence) / (1 - prevalence)
        key = threshold_key(name)
        out[f"auprc_ge_{key}"] = ap
        out[f"nap_ge_{key}"] = nap
        out[f"prevalence_ge_{key}"] = prevalence
        rows.append({"threshold": level, "level": name, "key": key, "ap": ap, "nap": nap,
                     "prevalence": prevalence, "n_positive": n_pos, "reason": reason})
    defined = [float(r["ap"]) for r in rows if r["ap"] is not None]
    naps = [float(r["nap"]) for r in rows if r["nap"] is not None]
    out["ordinal_auprc"] = float(np.mean(defined)) if defined else None
    out["ordinal_nap"] = float(np.mean(naps)) if naps else None
    out["thresholds"] = rows
    if len(scale) >= 3:
        out["severity_ordering_ap"], out["severity_ordering_reason"] = severity_ordering_ap(t, s, scale)
    return out


def severity_ordering_ap(y_true: ArrayLike, y_score: ArrayLike, scale: Sequence[str]) -> tuple[float | None, str | None]:
    """xnot's auxiliary ``severity_ordering_ap``: among samples with GT above the lowest level, the AP
    of "GT is the highest level" (is Critical ranked above High?), and the reason when undefined.

    Undefined (null, where xnot writes NaN) with fewer than 2 such samples or without both classes.

    >>> severity_ordering_ap([0, 1, 2, 2, 1], [0.0, 3.0, 9.0, 2.0, 1.0], ["Low Risk", "High Risk", "Critical Risk"])
    (0.8333333333333333, None)
    >>> severity_ordering_ap([0, 1, 1], [0.0, 1.0, 2.0], ["Low Risk", "High Risk", "Critical Risk"])[1]
    'no sample has GT Critical Risk'
    """
    t = np.asarray(y_true, dtype=np.float64)
    s = np.asarray(y_score, dtype=np.float64)
    top = len(scale) - 1
    risky = t >= 1
    y = (t[risky] == top).astype(int)
    if int(risky.sum()) < 2:
        return None, f"fewer than 2 samples have GT ≥ {scale[1]}"
    if int(y.sum()) == 0:
        return None, f"no sample has GT {scale[top]}"
    if int(y.sum()) == len(y):
        return None, f"every sample with GT ≥ {scale[1]} is {scale[top]}"
    return average_precision_score_like_sklearn(y, s[risky]), None
