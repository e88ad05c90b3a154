"""GT-noise intervals (issue 28): hand-computed cases, scikit-learn as the reference, draws, a real frame."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from core.metrics import ordinal_auprc
from core.metrics.gt_noise import (
    accuracy_draws,
    gt_draws,
    gt_noise_difference,
    gt_noise_interval,
    ordinal_auprc_draws,
    run_arrays,
)

SCALE = ("Low Risk", "High Risk", "Critical Risk")


def test_interval_by_hand():
    """Predicted [0, 1, 2, 0]; three draws give accuracy 2/4, 3/4, 4/4. Mean 0.75; numpy's linear
    percentiles of [0.5, 0.75, 1.0]: 2.5 % at rank 0.05 → 0.5 + 0.05·0.25 = 0.5125, 97.5 % at rank
    1.95 → 0.75 + 0.95·0.25 = 0.9875. Ordinal AUPRC with scores [0, 5, 9, 1] ranks perfectly in
    every draw where a threshold is defined: 1.0."""
    draws = [[0, 1, 1, 1], [0, 1, 2, 1], [0, 1, 2, 0]]
    r = gt_noise_interval([0.0, 5.0, 9.0, 1.0], [0, 1, 2, 0], draws, point_gt=[0, 1, 2, 0])
    acc = r["accuracy"]
    assert (acc.point, acc.mean, acc.n_draws, acc.n_defined) == (1.0, 0.75, 3, 3)
    assert acc.low == pytest.approx(0.5125) and acc.high == pytest.approx(0.9875)
    # draw 1: ≥High = [0,1,1,1] (scores 5, 9, 1 all above the negative's 0) → AP 1; ≥Critical has no
    # positive → undefined. Draw 2: ≥High AP 1, ≥Critical [0,0,1,0] (score 9 on top) → AP 1.
    # Draw 3: ≥High = [0,1,1,0] (scores 9, 5 above 1, 0) → AP 1, ≥Critical → AP 1.
    assert r["ordinal_auprc"].mean == 1.0 and r["ordinal_auprc"].low == 1.0


def test_ordinal_auprc_by_hand_with_a_misranked_restaurant():
    """GT [0, 1, 0], scores [0.9, 0.5, 0.1]: ≥High is ranked second after a negative: AP = 1/2."""
    assert ordinal_auprc_draws([[0, 1, 0]], [0.9, 0.5, 0.1], n_levels=3).tolist() == [0.5]


def test_draws_equal_scikit_learn_row_by_row():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = int(rng.integers(2, 12))
        gt = rng.integers(0, 3, size=(5, n))
        score = rng.integers(0, 4, size=n).astype(float)  # ties on purpose
        got = ordinal_auprc_draws(gt, score, n_levels=3)
        for row, value in zip(gt, got, strict=True):
            want = ordinal_auprc(row, score)["ordinal_auprc"]
            assert (want is None and np.isnan(value)) or value == pytest.approx(want, abs=1e-12)
        assert accuracy_draws(gt, gt[0]).tolist()[0] == 1.0


def test_difference_by_hand_and_whether_it_survives():
    """A predicts [1, 0, 0], B [1, 1, 0]; draws [1,1,0], [1,1,0], [1,0,0], [1,1,1]:
    accuracy A 2/3, 2/3, 1, 1/3; B 1, 1, 2/3, 2/3 → B − A = 1/3, 1/3, −1/3, 1/3; point GT [1,1,0]:
    +1/3, so the sign holds in 3 of 4 draws; the interval spans 0: it does not survive."""
    a, b = ([1.0, 0.0, 0.0], [1, 0, 0]), ([1.0, 1.0, 0.0], [1, 1, 0])
    draws = [[1, 1, 0], [1, 1, 0], [1, 0, 0], [1, 1, 1]]
    d = gt_noise_difference(a, b, draws, point_gt=[1, 1, 0])["accuracy"]
    assert d["point"] == pytest.approx(1 / 3) and d["sign_share"] == 0.75 and d["mean"] == pytest.approx(1 / 6)
    assert d["low"] < 0 < d["high"] and d["survives"] is False
    sure = gt_noise_difference(a, b, draws[:2], point_gt=[1, 1, 0])["accuracy"]
    assert sure["sign_share"] == 1.0 and sure["survives"] is True and sure["low"] == pytest.approx(1 / 3)


def test_gt_draws_follow_the_probabilities_and_are_seeded():
    p = np.array([[1.0, 0.0, 0.0], [0.2, 0.5, 0.3], [0.0, 0.0, 1.0]])
    draws = gt_draws(p, n_draws=20_000, seed=3)
    assert draws.shape == (20_000, 3) and set(draws[:, 0]) == {0} and set(draws[:, 2]) == {2}
    shares = np.bincount(draws[:, 1], minlength=3) / 20_000
    assert np.abs(shares - p[1]).max() < 0.015
    assert (gt_draws(p, n_draws=50, seed=3) == draws[:50]).all()
    with pytest.raises(ValueError, match="sum to 1"):
        gt_draws([[0.5, 0.4]], n_draws=1)
    with pytest.raises(ValueError, match="n_draws must be ≥ 1"):
        gt_draws(p, n_draws=0)


def test_edge_cases():
    none = gt_noise_interval([1.0, 2.0], [0, 0], [[0, 0], [0, 0]])["ordinal_auprc"]  # one class in every draw
    assert (none.mean, none.low, none.n_defined) == (None, None, 0)
    with pytest.raises(ValueError, match="draws have 2 restaurants, score 3"):
        gt_noise_interval([1.0, 2.0, 3.0], [0, 0, 0], [[0, 1]])
    assert np.isnan(accuracy_draws(np.zeros((2, 0)), [])).all()


def test_run_arrays_and_a_real_probability_frame():
    from core.ground_truth.uncertainty import parse_confusion, probability_matrix, verdict_probabilities

    rows = [{"business_id": b, "review_id": f"{b}{i}", "idx": i, "incident_severity": "moderate",
             "account_type": "firsthand", "safety_interaction": "none"} for b, n in (("a", 1), ("b", 2)) for i in range(n)]
    restaurants = pl.DataFrame({"business_id": ["a", "b", "c"], "name": ["A", "B", "C"], "categories": [None] * 3})
    frame = verdict_probabilities(pl.DataFrame(rows), restaurants, "G1_allergy_V2", [25],
                                  parse_confusion({"incident_severity": {"moderate": {"moderate": 0.5, "none": 0.5}}}))
    ids, p = probability_matrix(frame, 25, SCALE)
    # a: one moderate (5, High) kept half the time; b: two, 10 (Critical) ¼, 5 (High) ½, 0 ¼; c: Low
    assert ids == ["a", "b", "c"] and p.tolist() == [[0.5, 0.5, 0.0], [0.25, 0.5, 0.25], [1.0, 0.0, 0.0]]
    samples = [{"business_id": "b", "verdict": "Critical Risk", "risk_score": 10.0},
               {"business_id": "a", "verdict": "High Risk", "risk_score": 5.0}]
    score, predicted = run_arrays(samples, ids, SCALE)
    assert score.tolist() == [5.0, 10.0, 0.0] and predicted[:2].tolist() == [1.0, 2.0] and np.isnan(predicted[2])
    r = gt_noise_interval(score, predicted, gt_draws(p, n_draws=4000, seed=1), point_gt=[1, 2, 0])
    # accuracy: a right with ½, b with ¼, c never (no verdict): mean (½ + ¼)/3 = 0.25
    assert r["accuracy"].point == pytest.approx(2 / 3) and r["accuracy"].mean == pytest.approx(0.25, abs=0.01)
