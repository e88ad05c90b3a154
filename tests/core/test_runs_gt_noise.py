"""GT noise of scored runs (issue 28): a certain GT gives a zero-width interval at the point score,
a coin-flip verdict spreads accuracy as a binomial, a gap survives or not, a GT file is refused."""

from __future__ import annotations

import numpy as np
import pytest

from core.base.errors import WorkbenchError
from core.runs.gt_noise import NoiseInput, compare_noise, gt_key, run_noise, same_gt

SCALE = ["Low Risk", "High Risk", "Critical Risk"]
KEY = ("d", "G1a", "G1_allergy_V2", "j", 25)


def _given(p: list[list[float]]) -> NoiseInput:
    ids = [f"b{i}" for i in range(len(p))]
    point = {b: SCALE[int(np.argmax(row))] for b, row in zip(ids, p, strict=True)}
    return NoiseInput(KEY, ids, np.array(p, dtype=np.float64), SCALE, point)


def _run(run_id: str, verdicts: list[str], scores: list[float], gt: list[str]) -> dict:
    return {"run_id": run_id, "results": [
        {"business_id": f"b{i}", "verdict": v, "risk_score": s, "gt_verdict": g}
        for i, (v, s, g) in enumerate(zip(verdicts, scores, gt, strict=True))]}


def test_a_certain_gt_has_no_noise():
    given = _given([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]])
    run = _run("r", ["Low Risk", "High Risk", "Low Risk", "Low Risk"], [0.0, 5.0, 9.0, 1.0],
               ["Low Risk", "High Risk", "Critical Risk", "Low Risk"])
    out = run_noise(run, given, draws=200)
    acc = out["intervals"]["accuracy"]
    assert (acc["point"], acc["low"], acc["high"]) == (0.75, 0.75, 0.75)
    assert out["uncertain"] == 0 and out["differ"] == 0 and out["n"] == 4


def test_one_coin_flip_verdict_moves_accuracy_by_one_restaurant():
    """Restaurant b1 is High Risk with P ½ (else Low): accuracy over 4 is 1.0 or 0.75, each in about
    half of the draws; the 95 % interval spans both."""
    given = _given([[1, 0, 0], [0.5, 0.5, 0], [0, 0, 1], [1, 0, 0]])
    gt = ["Low Risk", "Low Risk", "Critical Risk", "Low Risk"]
    run = _run("r", gt, [0.0, 1.0, 9.0, 0.5], gt)
    out = run_noise(run, given, draws=4000, seed=3)
    acc = out["intervals"]["accuracy"]
    assert (acc["point"], acc["low"], acc["high"]) == (1.0, 0.75, 1.0)
    assert acc["mean"] == pytest.approx(0.875, abs=0.02)
    assert out["uncertain"] == 1


def test_a_gap_survives_only_when_the_noise_cannot_close_it():
    given = _given([[1, 0, 0], [0.5, 0.5, 0], [0, 0, 1], [1, 0, 0]])
    gt = ["Low Risk", "Low Risk", "Critical Risk", "Low Risk"]
    right = _run("a", gt, [0.0, 1.0, 9.0, 0.5], gt)
    wrong = _run("b", ["Critical Risk", "High Risk", "Low Risk", "Low Risk"], [9.0, 1.0, 0.0, 0.5], gt)
    d = compare_noise(right, wrong, given, draws=2000)
    assert d["accuracy"]["survives"] and d["accuracy"]["high"] < 0 and d["accuracy"]["sign_share"] == 1.0
    # b differs from a only on the coin-flip restaurant: the gap is + or − depending on the draw
    flip = _run("c", ["Low Risk", "High Risk", "Critical Risk", "Low Risk"], [0.0, 1.0, 9.0, 0.5], gt)
    d = compare_noise(right, flip, given, draws=2000)
    assert not d["accuracy"]["survives"] and d["accuracy"]["low"] < 0 < d["accuracy"]["high"]


def test_only_a_computed_gt_has_a_judge_whose_error_carries():
    computed = {"run_id": "r", "gt": {"origin": "computed", "dataset": "d", "task": "G1a", "judge": "j", "k": 25,
                                      "definition": {"name": "G1_allergy_V2"}}}
    assert gt_key(computed) == KEY
    with pytest.raises(WorkbenchError, match="GT file gt/x.json"):
        gt_key({"run_id": "r", "gt": {"origin": "file", "file": "gt/x.json", "file_sha256": "ab" * 32}})
    other_k = {**computed, "gt": {**computed["gt"], "k": 50}}
    assert same_gt([computed, computed]) == KEY and same_gt([computed, other_k]) is None
