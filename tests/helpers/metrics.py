"""Builders of results.json dicts for the metrics tests (from code, or from the shared fixtures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.metrics import load_gt, score_results

_FIELDS = {"False assurance": ("ASSURANCE_CLAIM", "true"), "Dismissive staff": ("STAFF_RESPONSE", "dismissive")}


def answer(verdict: str, incidents: list[dict[str, Any]], *, texts: dict[str, str] | None = None,
           score: float | None = None) -> dict[str, Any]:
    """A method answer in the SPEC §4.1 contract claiming ``incidents`` (review_id, severity, modifiers)."""
    evidences = []
    for inc in incidents:
        rid = inc["review_id"]
        snippet = (texts or {}).get(rid, "")[:40] or None
        evidences.append({"evidence_id": f"E{len(evidences) + 1}", "review_id": rid, "field": "INCIDENT_SEVERITY",
                          "judgement": inc["severity"], "snippet": snippet})
        for label in inc.get("modifiers") or []:
            field, value = _FIELDS[label]
            evidences.append({"evidence_id": f"E{len(evidences) + 1}", "review_id": rid, "field": field,
                              "judgement": value, "snippet": snippet})
    return {"verdict": verdict, "risk_score": score, "evidences": evidences,
            "justification": {"triggered_rule": "", "direct_evidence": [], "reasoning": ""}}


def sample(business_id: str, parsed: dict[str, Any] | None, *, gt_verdict: str | None = None) -> dict[str, Any]:
    return {"business_id": business_id, "name": business_id, "verdict": (parsed or {}).get("verdict"),
            "risk_score": (parsed or {}).get("risk_score"), "parsed": parsed, "response": json.dumps(parsed),
            "gt_verdict": gt_verdict, "prompt_tokens": 100, "completion_tokens": 20, "cost_usd": 0.0001,
            "latency_ms": 5, "llm_calls": 1}


def run(samples: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
    base = {"run_id": "r", "task_id": "G1a", "policy_id": "G1_allergy_V2", "method": "direct", "model": "heuristic",
            "k": 25, "n": len(samples), "timestamp": "20260101_000000", "config": {}}
    return {**base, **meta, "results": samples}


def review_texts(dataset_jsonl: Path) -> dict[str, str]:
    out = {}
    for line in dataset_jsonl.read_text(encoding="utf-8").splitlines():
        for r in json.loads(line)["reviews"]:
            out[r["review_id"]] = r["text"]
    return out


def perfect_run_from_gt(gt_file: Path, texts: dict[str, str]) -> tuple[dict[str, Any], dict[str, dict]]:
    """A method that answers exactly GT (score = GT score), quoting the start of each review."""
    gt = load_gt(gt_file, None)
    samples = [sample(bid, answer(g["verdict"], g["incidents"], texts=texts, score=g["score"]))
               for bid, g in gt.items()]
    return run(samples), gt


N_NO_INCIDENT = 50  # restaurants of no_incident_run


def no_incident_run() -> dict[str, Any]:
    """A model answering "no incident" for every restaurant: 49 GT Low, 1 GT High (one moderate GT
    incident), every answer Low with risk score 0 and one evidence whose snippet is not in the review."""
    samples, gt, texts = [], {}, {}
    for i in range(N_NO_INCIDENT):
        bid, rid = f"b{i:02d}", f"b{i:02d}-r0"
        texts[rid] = f"Review {i}: the pasta was fine and the staff were friendly."
        high = i == N_NO_INCIDENT - 1
        gt[bid] = {"verdict": "High Risk" if high else "Low Risk",
                   "incidents": [{"review_id": rid, "severity": "moderate", "modifiers": []}] if high else []}
        parsed = {"verdict": "Low Risk", "risk_score": 0.0, "evidences": [
            {"evidence_id": "E1", "review_id": rid, "field": "INCIDENT_SEVERITY", "judgement": "none",
             "snippet": "no allergy incident reported"}], "justification": {"reasoning": "no incident"}}
        samples.append(sample(bid, parsed))
    return score_results(run(samples, method="direct", run_id="no-incident"), gt=gt, review_texts=texts, n_boot=0)
