"""An xnot detailed_results.json (layout of jimmy-academia/xnot explore/results/*/detailed_results.json)
re-scored: the AUPRC it stores is reproduced. The file is built here; xnot's AUPRC is computed in the
test the way xnot does it (scikit-learn AP of final_risk_score.predicted, missing → 0.0)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from core.base.errors import DataError
from core.metrics import score_results
from core.metrics.xnot import results_from_xnot, stored_auprc

VERDICTS = ["Low Risk", "High Risk", "Critical Risk"]


def _detailed(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    runs, exp, pred = [], [], []
    for i in range(100):
        e = VERDICTS[int(rng.choice(3, p=[0.9, 0.06, 0.04]))]
        p_score = None if i % 17 == 0 else float(np.round(rng.normal(2.75 + 4 * VERDICTS.index(e), 2.0), 2))
        runs.append({"restaurant": f"R{i}", "results": {"verdict": {"expected": e, "predicted": "Low Risk"},
                                                         "final_risk_score": {"expected": 3.0, "predicted": p_score}},
                     "ground_truth": {"n_total_incidents": 0, "incident_score": 0.0, "recency_decay": 0.3,
                                      "credibility_factor": 1.0, "final_risk_score": 3.0, "verdict": e},
                     "parsed": {"N_TOTAL_INCIDENTS": 0, "INCIDENT_SCORE": 0.0, "RECENCY_DECAY": 0.3,
                                "CREDIBILITY_FACTOR": 0.0 if i % 2 else 1.0}})
        exp.append(VERDICTS.index(e))
        pred.append(0.0 if p_score is None else p_score)
    y, s = np.array(exp), np.array(pred)
    ap1, ap2 = average_precision_score(y >= 1, s), average_precision_score(y >= 2, s)
    metrics = {"auprc_ge_1": ap1, "auprc_ge_2": ap2, "ordinal_auprc": (ap1 + ap2) / 2}
    return {"timestamp": "2026-01-10T06:01:55", "task": "G1a", "k": 50, "n_restaurants": 100, "metrics": metrics,
            "runs": runs}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rescoring_reproduces_stored_auprc(seed):
    payload = _detailed(seed)
    results, gt = results_from_xnot(payload)
    out = score_results(results, gt=gt, n_boot=0)
    stored = stored_auprc(payload)
    assert out["auprc"]["auprc_ge_high"] == pytest.approx(stored["auprc_ge_1"], abs=1e-12)
    assert out["auprc"]["auprc_ge_critical"] == pytest.approx(stored["auprc_ge_2"], abs=1e-12)
    assert out["auprc"]["ordinal_auprc"] == pytest.approx(stored["ordinal_auprc"], abs=1e-12)
    assert out["auprc"]["ranking_score"] == {"source": "risk_score", "n_missing": 6}
    # primitive accuracy (SPEC §5.4, v1 tolerances): credibility_factor right on half the samples
    prim = out["unified_metrics_full"]["intermediate_metrics"]["primitive_accuracy"]
    assert prim["formula"] == "v1" and prim["per_primitive"]["credibility_factor"] == 0.5
    assert prim["per_primitive"]["n_total_incidents"] == 1.0
    # mean of 1, 1, 1, 0.5 = 0.875; adjusted AUPRC = ordinal × 0.875
    adjusted = out["unified_metrics_full"]["intermediate_metrics"]["adjusted_auprc"]
    assert adjusted == pytest.approx(stored["ordinal_auprc"] * 0.875)


def test_not_an_xnot_file():
    with pytest.raises(DataError, match="not an xnot detailed_results.json"):
        results_from_xnot({"results": []})


def test_score_command_takes_a_detailed_results_file(tmp_path, workspace, capsys):
    import json

    from core.cli import main

    payload = _detailed(3)
    path = tmp_path / "detailed_results.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    assert main(["--workspace", str(workspace.root), "score", str(path), "--json", "--n-boot", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["auprc"]["ordinal_auprc"] == pytest.approx(payload["metrics"]["ordinal_auprc"], abs=1e-12)
