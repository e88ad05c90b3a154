"""Every agreement statistic against a direct numpy/scipy computation, plus hand cases and edges."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from core.study.scorer import metrics


@pytest.mark.parametrize("seed", range(5))
def test_statistics_match_numpy_and_scipy(seed):
    rng = np.random.default_rng(seed)
    y = rng.uniform(-1, 1, 17).round(2)
    p = np.clip(y + rng.normal(0, 0.3, 17), -1, 1).round(2)
    assert metrics.mean_absolute_error(y, p) == pytest.approx(np.abs(p - y).mean())
    assert metrics.root_mean_squared_error(y, p) == pytest.approx(math.sqrt(((p - y) ** 2).mean()))
    assert metrics.pearson_score(y, p) == pytest.approx(stats.pearsonr(y, p).statistic)
    assert metrics.spearman_score(y, p) == pytest.approx(stats.spearmanr(y, p).statistic)
    # Lin's CCC from its definition with population moments
    ccc = 2 * np.cov(y, p, ddof=0)[0, 1] / (y.var() + p.var() + (y.mean() - p.mean()) ** 2)
    assert metrics.concordance_correlation_score(y, p) == pytest.approx(ccc)
    ba = metrics.bland_altman(y, p)
    d = p - y
    assert ba["bias"] == pytest.approx(d.mean())
    assert ba["loa_low"] == pytest.approx(d.mean() - 1.96 * d.std(ddof=1))
    assert ba["loa_high"] == pytest.approx(d.mean() + 1.96 * d.std(ddof=1))


def test_hand_computed_case():
    y, p = [0.0, 0.5, 1.0], [0.5, 0.5, 0.5]
    # |diffs| = .5, 0, .5 -> MAE 1/3; squared .25, 0, .25 -> RMSE sqrt(1/6)
    assert metrics.mean_absolute_error(y, p) == pytest.approx(1 / 3)
    assert metrics.root_mean_squared_error(y, p) == pytest.approx(math.sqrt(1 / 6))
    assert math.isnan(metrics.pearson_score(y, p))  # a constant prediction has no correlation
    # CCC: cov 0 -> 0; var y = 1/6, var p = 0, means equal -> 0 / (1/6) = 0
    assert metrics.concordance_correlation_score(y, p) == 0.0


def test_edge_cases():
    with pytest.raises(ValueError, match="differ in length"):
        metrics.mean_absolute_error([0.1], [0.1, 0.2])
    with pytest.raises(ValueError, match="finite"):
        metrics.pearson_score([0.1, float("nan")], [0.1, 0.2])
    assert math.isnan(metrics.concordance_correlation_score([0.2, 0.2], [0.2, 0.2]))
    assert metrics.spearman_score([1, 1, 2], [3, 3, 4]) == pytest.approx(stats.spearmanr([1, 1, 2], [3, 3, 4]).statistic)
    assert metrics.agreement_report([], [])["n"] == 0


def test_human_ceiling_is_each_rater_against_the_mean_of_the_others():
    frame = pl.DataFrame({"item_id": [1, 1, 1, 2, 2, 3, 4, 4], "rater": ["a", "b", "c", "a", "b", "a", "b", "c"],
                          "score": [0.9, 0.5, 0.7, -0.2, 0.0, 0.4, -0.8, -0.4]})
    held, rest = [], []
    for _, part in frame.group_by("item_id"):
        s = part["score"].to_list()
        if len(s) < 2:
            continue  # item 3 has one rater: no pair
        for v in s:
            held.append(v)
            rest.append((sum(s) - v) / (len(s) - 1))
    report = metrics.human_ceiling(frame)
    assert report["n_pairs"] == 7 and report["n_items"] == 3
    assert report["mae"] == pytest.approx(np.abs(np.array(held) - np.array(rest)).mean())
    assert report["pearson"] == pytest.approx(stats.pearsonr(rest, held).statistic)
    only = metrics.human_ceiling(frame, [1])
    assert only["n_pairs"] == 3
