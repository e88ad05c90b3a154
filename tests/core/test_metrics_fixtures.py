"""Scoring runs end to end against the ADDM GT files of the shared fixtures (SPEC §3.3, §5)."""

from __future__ import annotations

import copy

import pytest

from core.metrics import load_gt, score_results
from tests.helpers.metrics import answer, perfect_run_from_gt, review_texts


@pytest.mark.parametrize("k", [25, 50])
def test_perfect_method_scores_full_marks(fixtures_dir, k):
    texts = review_texts(fixtures_dir / "dev-ADDM" / "dataset_K25_subset.jsonl")
    results, gt = perfect_run_from_gt(fixtures_dir / "dev-ADDM" / "answers" / f"G1_allergy_V2_K{k}_groundtruth.json", texts)
    # K25 texts cover the K25 reviews only: at K50 score without texts (no snippet check, all claims valid)
    out = score_results(results, gt=gt, review_texts=texts if k == 25 else None, n_boot=200)
    assert (out["accuracy"], out["total"]) == (1.0, 100)
    snippets = out["unified_metrics_full"]["process_components"]["snippet_validity"]
    assert snippets == (1.0 if k == 25 else None)
    assert out["unified_scores"] == {"auprc": 1.0, "process_score": 100.0, "consistency_score": 100.0}
    assert out["auprc"]["ranking_score"]["source"] == "risk_score"
    # GT's own incidents recomputed with the same policy give GT's verdicts: consistency 100 %
    assert out["unified_metrics_full"]["consistency_details"]["total"] == sum(1 for g in gt.values() if g["incidents"])


def test_perturbed_method_on_k25(fixtures_dir):
    folder = fixtures_dir / "dev-ADDM"
    texts = review_texts(folder / "dataset_K25_subset.jsonl")
    gt = load_gt(folder / "answers" / "G1_allergy_V2_K25_groundtruth.json", None)
    assert gt["JrG4NINLspXPNhSXg7Q07Q"]["incidents"][0]["modifiers"] == ["False assurance"]
    results, _ = perfect_run_from_gt(folder / "answers" / "G1_allergy_V2_K25_groundtruth.json", texts)
    perturbed = copy.deepcopy(results)
    by_id = {s["business_id"]: s for s in perturbed["results"]}
    # Front Street Cafe (GT: 1 moderate + False assurance = 10 → Critical): the method misses the
    # assurance, says 5 → High. Cafe Blue Moose (3 × (5 + 3) = 24 → Critical): calls them mild
    # without the dismissive staff: 3 × 2 = 6 → High.
    fsc = gt["JrG4NINLspXPNhSXg7Q07Q"]["incidents"]
    by_id["JrG4NINLspXPNhSXg7Q07Q"].update(risk_score=5, verdict="High Risk", parsed=answer(
        "High Risk", [{**fsc[0], "modifiers": []}], texts=texts, score=5))
    cbm = gt["sf-KdXHB5nxfNjl2uUpI6Q"]["incidents"]
    by_id["sf-KdXHB5nxfNjl2uUpI6Q"].update(risk_score=6, verdict="High Risk", parsed=answer(
        "High Risk", [{**i, "severity": "mild", "modifiers": []} for i in cbm], texts=texts, score=6))
    out = score_results(perturbed, gt=gt, review_texts=texts, n_boot=200)
    comp = out["unified_metrics_full"]["process_components"]
    assert out["accuracy"] == 0.98 and out["correct"] == 98
    assert comp["incident_precision"] == 1.0
    assert comp["severity_accuracy"] == pytest.approx(1 / 4)   # 4 matched; only Front Street's moderate right
    assert comp["modifier_accuracy"] == pytest.approx(4 / 8)   # FA missed once, DS missed three times
    assert comp["verdict_support_rate"] == 1.0 and comp["snippet_validity"] == 1.0
    # the two GT Critical are still ranked above every GT Low (scores 5 and 6 > 0): AP = 1
    assert out["unified_scores"]["auprc"] == 1.0
    # (.35 + .30·.25 + .15·.5 + .15 + .05)/1 = .35 + .075 + .075 + .15 + .05 = .70
    assert out["unified_scores"]["process_score"] == pytest.approx(70.0)
    iv = out["intervals"]["scores"]["process_score"]
    assert iv["low"] <= 70.0 <= iv["high"]
