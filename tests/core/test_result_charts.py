"""The precision–recall chart draws what the AP says: the area under each drawn curve, computed from
the chart's own Vega-Lite spec the way Vega-Lite draws it, equals the AP in the thresholds table
(and scikit-learn's) to 1e-9, on hand-made, synthetic and real (xnot) runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import average_precision_score, precision_recall_curve

from core.base.files import read_json
from core.metrics import charts as rc
from core.metrics import score_results
from core.metrics import views as mv
from core.metrics.ranking import verdict_ordinals
from core.metrics.score import ranking_scores
from core.metrics.synthetic import synthetic_run
from core.metrics.xnot import results_from_xnot
from tests.helpers.charts import drawn_areas

XNOT_DIR = Path(__file__).resolve().parent.parent / "data" / "xnot_results"
SCALE = ["Low Risk", "High Risk", "Critical Risk"]


def _run(gt: list[str], scores: list[float | None], verdicts: list[str] | None = None) -> dict[str, Any]:
    samples = [{"business_id": f"b{i}", "name": f"R{i}", "gt_verdict": g, "risk_score": s,
                "verdict": (verdicts or ["Low Risk"] * len(gt))[i]} for i, (g, s) in enumerate(zip(gt, scores, strict=True))]
    return score_results({"run_id": "hand", "results": samples}, n_boot=0)


def _check(scored: dict[str, Any]) -> dict[str, float]:
    """Drawn area = table AP = scikit-learn's AP (both ways) for every defined threshold."""
    pr = mv.pr_curves(scored)
    areas = drawn_areas(rc.pr_chart(pr).to_dict())
    table = {row["threshold"]: row["AP"] for row in mv.thresholds(scored).iter_rows(named=True) if row["AP"] is not None}
    assert set(areas) == set(table) and table
    scale = scored["verdict_scale"]
    judged = [s for s in scored["results"] if s.get("gt_verdict") in scale]
    y_true = verdict_ordinals([s["gt_verdict"] for s in judged], scale)
    y_score, _ = ranking_scores(judged, scale)
    for level in range(1, len(scale)):
        name = f"≥ {scale[level]}"
        if name not in table:
            continue
        y = y_true >= level
        p, r, _ = precision_recall_curve(y, y_score)
        assert table[name] == pytest.approx(average_precision_score(y, y_score), abs=1e-12)
        assert -np.sum(np.diff(r) * p[:-1]) == pytest.approx(table[name], abs=1e-12)
        assert areas[name] == pytest.approx(table[name], abs=1e-9)
    return areas


def test_hand_computed_curve():
    # scores 0.8 (pos), 0.4 (neg), 0.35 (pos), 0.1 (neg): P at the two positives 1/1 and 2/3
    # → AP = ½·1 + ½·⅔ = 5/6. Drawn: recall 0→½ at precision 1, ½→1 at precision ⅔.
    scored = _run(["Low Risk", "Low Risk", "High Risk", "High Risk"], [0.1, 0.4, 0.35, 0.8])
    assert _check(scored) == {"≥ High Risk": pytest.approx(5 / 6, abs=1e-12)}
    pr = mv.pr_curves(scored)
    assert pr["recall"].to_list() == [0.0, 0.5, 0.5, 1.0, 1.0]  # in drawing order: recall up,
    assert pr["precision"].to_list() == pytest.approx([1.0, 1.0, 0.5, 2 / 3, 0.5])  # ties: precision down


def test_a_constant_score_is_drawn_at_its_prevalence_not_at_precision_one():
    # "no incident" everywhere: 49 Low, 1 High, every risk score 0. One threshold holds all 50
    # samples: AP = prevalence = 1/50. Drawn with step-after this was a flat line at precision 1.0.
    scored = _run(["Low Risk"] * 49 + ["High Risk"], [0.0] * 50)
    assert _check(scored) == {"≥ High Risk": pytest.approx(0.02, abs=1e-12)}
    spec = rc.pr_chart(mv.pr_curves(scored)).to_dict()
    before = {**spec, "mark": {**spec["mark"], "interpolate": "step-after"}, "encoding": {
        k: v for k, v in spec["encoding"].items() if k != "order"}}
    (rows,) = before["datasets"].values()
    rows.sort(key=lambda r: -r["point"])  # scikit-learn's own order, as the chart used to get it
    assert drawn_areas(before) == {"≥ High Risk": pytest.approx(1.0)}


@pytest.mark.parametrize("method,noise", [("direct", 0.2), ("cot", 0.6), ("keyword", 0.4), ("random", 1.0)])
def test_synthetic_runs_with_ties(method, noise):
    results, gt, texts = synthetic_run(80, seed=5, noise=noise, method=method, k=50, run_id=f"{method}_k50")
    _check(score_results(results, gt=gt, review_texts=texts, n_boot=0))


def test_ranked_by_verdict_only_many_ties():
    # No risk score: the verdict ordinal ranks (three tied groups), including a sample with no verdict (→ 0).
    rng = np.random.default_rng(0)
    gt = list(rng.choice(SCALE, size=60, p=[0.7, 0.2, 0.1]))
    verdicts = [str(v) for v in rng.choice(SCALE, size=60)]
    scored = _run(gt, [None] * 60, verdicts)
    assert scored["auprc"]["ranking_score"]["source"] == "verdict ordinal"
    assert len(_check(scored)) == 2


@pytest.mark.parametrize("folder", sorted(p.name for p in XNOT_DIR.iterdir() if p.is_dir()))
def test_real_xnot_runs(folder):
    path = XNOT_DIR / folder / "detailed_results.json"
    results, gt = results_from_xnot(read_json(path), path=str(path))
    areas = _check(score_results(results, gt=gt, n_boot=0))
    assert len(areas) == 2


def test_a_sample_left_out_of_the_scores_is_left_out_of_the_curve():
    # The run carries a GT verdict for every sample, the GT file scored against lacks one restaurant:
    # the AP leaves it out, so must the PR points (they used to keep its old GT verdict).
    results, gt, texts = synthetic_run(40, seed=1, noise=0.3, method="direct", k=50, run_id="x")
    dropped = str(results["results"][0]["business_id"])
    scored = score_results(results, gt={k: v for k, v in gt.items() if k != dropped}, n_boot=0)
    assert scored["total"] == 39 and scored["results"][0]["gt_verdict"] is None
    assert mv.samples(scored).filter(pl.col("gt_verdict").is_not_null()).height == 39
    _check(scored)
