"""Synthetic scored-run material for benchmarks and tests (labelled synthetic wherever it appears).

:func:`synthetic_run` makes GT incidents per restaurant, review texts, and a method's answers in
the SPEC §4.1 contract that are right with probability ``1 − noise`` per incident (otherwise the
severity is off, a modifier is missed, the incident is missed or an extra one is claimed). The
method's verdict and score are the policy's, so consistency is high unless ``sloppy`` > 0.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from core.ground_truth.policies.loader import get_policy

SEVERITIES = ("mild", "moderate", "severe")
MODIFIER_FIELDS = {"False assurance": ("ASSURANCE_CLAIM", "true"), "Dismissive staff": ("STAFF_RESPONSE", "dismissive")}
CATEGORIES = ("Italian, Pizza", "Thai, Restaurants", "American (New), Bars", "Chinese, Dim Sum", "Cafes")


def _review(rng: np.random.Generator, rid: str) -> str:
    words = ["the", "food", "was", "great", "but", "my", "allergy", "server", "said", "safe", "reaction", "hives"]
    return f"Review {rid}: " + " ".join(rng.choice(words, 14).tolist()) + "."


def synthetic_run(
    n: int, *, seed: int = 0, noise: float = 0.2, sloppy: float = 0.0, method: str = "direct", k: int = 25,
    run_id: str | None = None, policy_id: str = "G1_allergy_V2",
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, str]]:
    """(results, gt, review_texts) for ``n`` synthetic restaurants (same ``seed`` → same GT)."""
    policy = get_policy(policy_id, None)
    gt_rng = np.random.default_rng(seed)
    rng = np.random.default_rng([seed, zlib.crc32(method.encode()), int(noise * 1000), k])
    gt: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    samples = []
    n_inc = gt_rng.choice([0, 1, 2, 3], size=n, p=[0.8, 0.12, 0.06, 0.02])
    for i in range(n):
        bid = f"syn{i:06d}"
        cats = CATEGORIES[i % len(CATEGORIES)]
        incidents = []
        for j in range(int(n_inc[i])):
            rid = f"{bid}-r{j}"
            texts[rid] = _review(gt_rng, rid)
            mods = [m for m in MODIFIER_FIELDS if gt_rng.random() < 0.2]
            incidents.append({"review_id": rid, "severity": str(gt_rng.choice(SEVERITIES, p=[0.5, 0.35, 0.15])),
                              "modifiers": mods})
        texts[f"{bid}-r9"] = _review(gt_rng, f"{bid}-r9")
        g = policy.score_incidents(incidents, cats)
        gt[bid] = {"verdict": g.verdict, "score": g.score, "categories": cats, "incidents": incidents,
                   "name": f"Synthetic {i}"}
        claims = []
        for inc in incidents:
            r = rng.random()
            if r < noise / 3:
                continue  # missed
            c = dict(inc)
            if r < 2 * noise / 3:
                c["severity"] = str(rng.choice(SEVERITIES))
            elif r < noise:
                c["modifiers"] = []
            claims.append(c)
        if rng.random() < noise / 4:
            claims.append({"review_id": f"{bid}-r9", "severity": "mild", "modifiers": []})
        p = policy.score_incidents(claims, cats)
        verdict = p.verdict
        if rng.random() < sloppy:
            verdict = str(rng.choice(["Low Risk", "High Risk", "Critical Risk"]))
        parsed = _answer(verdict, float(p.score) + float(rng.normal(0, 0.5)), claims, texts)
        tokens = int(rng.integers(800, 4000))
        samples.append({
            "business_id": bid, "name": f"Synthetic {i}", "verdict": verdict, "risk_score": parsed["risk_score"],
            "parsed": parsed, "response": str(parsed), "gt_verdict": g.verdict, "correct": verdict == g.verdict,
            "prompt_tokens": tokens, "completion_tokens": tokens // 10, "cost_usd": tokens * 1.5e-7,
            "latency_ms": int(rng.integers(200, 3000)), "llm_calls": 1,
        })
    results = {"run_id": run_id or f"{method}_k{k}_s{seed}", "task_id": "G1a", "policy_id": policy_id,
               "method": method, "model": "synthetic", "k": k, "n": n, "timestamp": "20260101_000000",
               "config": {"synthetic": True, "noise": noise, "sloppy": sloppy}, "results": samples}
    return results, gt, texts


def _answer(verdict: str, score: float, claims: list[dict[str, Any]], texts: dict[str, str]) -> dict[str, Any]:
    evidences: list[dict[str, Any]] = []
    for c in claims:
        snippet = texts[c["review_id"]][:30]
        evidences.append({"evidence_id": f"E{len(evidences) + 1}", "review_id": c["review_id"],
                          "field": "INCIDENT_SEVERITY", "judgement": c["severity"], "snippet": snippet})
        for label in c["modifiers"]:
            field, value = MODIFIER_FIELDS[label]
            evidences.append({"evidence_id": f"E{len(evidences) + 1}", "review_id": c["review_id"], "field": field,
                              "judgement": value, "snippet": snippet})
    return {"verdict": verdict, "risk_score": round(score, 2), "evidences": evidences,
            "justification": {"triggered_rule": "", "direct_evidence": [e["evidence_id"] for e in evidences],
                              "reasoning": "synthetic answer"}}
