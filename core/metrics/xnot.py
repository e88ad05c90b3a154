"""xnot's ``detailed_results.json`` (an evaluation run of the xnot explore scripts) as a SPEC §4.2 run.

Layout: ``{timestamp, task, k, n_restaurants, metrics: {auprc_ge_1, auprc_ge_2, ordinal_auprc, nap_ge_*,
prevalence_ge_*, …}, runs: [{restaurant, results: {verdict: {expected, predicted},
final_risk_score: {expected, predicted}}, ground_truth: {<formula record>}, parsed: {<PRIMITIVES>}}]}``.
Restaurants are keyed by name. xnot ranks by ``final_risk_score.predicted`` with a missing
prediction as 0.0, which is what :func:`core.metrics.score_results` does with ``risk_score``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.base.errors import DataError


def is_xnot_detailed(payload: Any) -> bool:
    """True for the shape of an xnot ``detailed_results.json``."""
    return isinstance(payload, Mapping) and isinstance(payload.get("runs"), list) and isinstance(payload.get("metrics"), Mapping)


def results_from_xnot(payload: Mapping[str, Any], *, path: str = "detailed_results.json") -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(results, gt): the run in the SPEC §4.2 layout and its GT records keyed by restaurant name.

    The stored metrics are kept under ``config.stored_metrics`` so a re-score can be compared.
    """
    if not is_xnot_detailed(payload):
        raise DataError("not an xnot detailed_results.json: expected 'metrics' and a 'runs' list", path=path)
    samples, gt = [], {}
    for i, r in enumerate(payload["runs"]):
        if not isinstance(r, Mapping) or not isinstance(r.get("restaurant"), str):
            raise DataError("a run needs a restaurant name", path=path, field=f"runs[{i}].restaurant")
        res = r.get("results") or {}
        verdict = (res.get("verdict") or {})
        score = (res.get("final_risk_score") or {}).get("predicted")
        name = r["restaurant"]
        record = dict(r.get("ground_truth") or {})
        expected = verdict.get("expected") or record.get("verdict")
        gt[name] = {**record, "verdict": expected, "name": name}
        samples.append({
            "business_id": name, "name": name, "verdict": verdict.get("predicted"),
            "risk_score": score if isinstance(score, int | float) and not isinstance(score, bool) else None,
            "parsed": r.get("parsed"), "response": None, "gt_verdict": expected,
            "correct": verdict.get("predicted") == expected, "prompt_tokens": 0, "completion_tokens": 0,
            "cost_usd": None, "latency_ms": None, "llm_calls": 0,
        })
    k = payload.get("k")
    results = {
        "run_id": f"xnot_{payload.get('task', 'G1a')}_k{k}_{payload.get('timestamp', '')}", "task_id": payload.get("task", "G1a"),
        "policy_id": "G1_allergy_V2", "method": "xnot", "model": "unknown", "k": k if isinstance(k, int) else None,
        "n": len(samples), "timestamp": str(payload.get("timestamp", "")),
        "config": {"source": "xnot detailed_results.json", "stored_metrics": dict(payload["metrics"])},
        "results": samples,
    }
    return results, gt


def stored_auprc(payload: Mapping[str, Any]) -> dict[str, float | None]:
    """The AUPRC figures xnot stored (``auprc_ge_1``, ``auprc_ge_2``, ``ordinal_auprc``)."""
    m = payload.get("metrics") or {}
    return {key: m.get(key) for key in ("auprc_ge_1", "auprc_ge_2", "ordinal_auprc")}
