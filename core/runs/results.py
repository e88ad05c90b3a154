"""``results.json`` (SPEC §4.2): built from the samples, checked against its schema, written once.

``finalize_results`` is the one place the file is made. The metric fields (``auprc``,
``unified_scores``, ``unified_metrics_full``, intervals …) come from ``core.metrics.score_results``
with the run's GT file, the texts of the reviews the method saw and the run's policy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import jsonschema

from core.base.clock import now_iso
from core.base.errors import WorkbenchError
from core.base.files import write_bytes_atomic
from core.methods import METHODS
from core.metrics import score_results
from core.runs.records import GT_FILE, RESULTS_FILE, read_prepared, write_results

if TYPE_CHECKING:
    from core.runs.plan import RunPlan

N_BOOT = 1000  # bootstrap resamples of the metrics' intervals (config option n_boot)
SAMPLE_FIELDS = ("business_id", "name", "verdict", "risk_score", "parsed", "response", "gt_verdict", "correct",
                 "prompt_tokens", "completion_tokens", "cost_usd", "latency_ms", "llm_calls")
_NUM = {"type": ["number", "null"]}
SAMPLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": list(SAMPLE_FIELDS),
    "properties": {
        "business_id": {"type": "string"}, "name": {"type": ["string", "null"]},
        "verdict": {"type": ["string", "null"]}, "risk_score": _NUM, "parsed": {"type": ["object", "null"]},
        "response": {"type": ["string", "null"]}, "gt_verdict": {"type": ["string", "null"]},
        "correct": {"type": ["boolean", "null"]}, "prompt_tokens": {"type": "integer", "minimum": 0},
        "completion_tokens": {"type": "integer", "minimum": 0}, "cost_usd": _NUM, "latency_ms": _NUM,
        "llm_calls": {"type": "integer", "minimum": 0}, "error": {"type": "string"},
    },
}
RESULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["run_id", "task_id", "policy_id", "method", "model", "k", "n", "timestamp", "config",
                 "accuracy", "correct", "total", "auprc", "unified_scores", "unified_metrics_full", "results"],
    "properties": {
        "run_id": {"type": "string"}, "task_id": {"type": "string"}, "policy_id": {"type": "string"},
        "method": {"type": "string"}, "model": {"type": "string"}, "k": {"type": ["integer", "null"]},
        "n": {"type": "integer"}, "timestamp": {"type": "string"}, "config": {"type": "object"},
        "accuracy": _NUM, "correct": {"type": "integer"}, "total": {"type": "integer"},
        "auprc": {"type": "object", "required": ["auprc_ge_high", "auprc_ge_critical", "ordinal_auprc", "n_samples"]},
        "unified_scores": {"type": "object", "required": ["auprc", "process_score", "consistency_score"]},
        "unified_metrics_full": {"type": "object", "required": [
            "auprc", "process_score", "process_components", "consistency_score", "consistency_details"],
            "properties": {
                "process_components": {"type": "object", "required": [
                    "incident_precision", "severity_accuracy", "modifier_accuracy", "verdict_support_rate",
                    "snippet_validity", "weighted_sum", "total_weight"]},
                "consistency_details": {"type": "object", "required": ["consistent", "total", "per_sample"]}}},
        "results": {"type": "array", "items": SAMPLE_SCHEMA},
    },
}


_VALIDATOR = jsonschema.Draft202012Validator(RESULTS_SCHEMA)  # the schema is checked once, not per file


def validate_results(payload: Any, where: str = RESULTS_FILE) -> None:
    """Raise WorkbenchError naming the first place ``payload`` departs from SPEC §4.2."""
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(payload))
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise WorkbenchError(f"{where}: {path}: {error.message}")


def _score(payload: dict[str, Any], plan: RunPlan) -> dict[str, Any]:
    """``payload`` with the metric fields of SPEC §4.2/§5 (``core.metrics.score_results``)."""
    gt = plan.run_gt.records
    texts = {rv["review_id"]: rv.get("text") or "" for r in plan.restaurants for rv in r.reviews}
    n_boot = int(plan.config.options.get("n_boot", N_BOOT))
    scored: dict[str, Any] = score_results(payload, gt=gt, review_texts=texts, policy=plan.policy,
                                           n_boot=n_boot, seed=plan.config.seed)
    return scored


def build_results(plan: RunPlan, samples: Sequence[dict[str, Any]], *, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """The results.json payload of a run (without writing it)."""
    order = {r.business_id: i for i, r in enumerate(plan.restaurants)}
    latest = {s["business_id"]: s for s in samples}  # a sample appears once; the last line wins if not
    results = sorted(latest.values(), key=lambda s: order.get(s["business_id"], len(order)))
    judged = [s for s in results if s.get("gt_verdict") is not None]
    correct = sum(1 for s in judged if s.get("correct"))
    config = plan.config
    uses_llm = METHODS[config.method].uses_llm
    prepared = read_prepared(plan.run_dir)
    payload: dict[str, Any] = {
        "run_id": plan.run_id, "task_id": config.task, "policy_id": config.policy, "method": config.method,
        "model": config.model if uses_llm else "none (baseline)", "k": config.k, "n": len(results),
        "timestamp": now_iso(),
        "config": {**config.as_dict(), "dataset": config.dataset},
        "gt": plan.run_gt.lineage, "offline": (config.model == "heuristic") or not uses_llm,
        "accuracy": round(correct / len(judged), 6) if judged else None, "correct": correct, "total": len(judged),
        "errors": sum(1 for s in results if s.get("error")),
        "usage": _usage(results, prepared),
        "timing": {"started_at": (status or {}).get("started_at"), "finished_at": now_iso(),
                   "elapsed_s": (status or {}).get("elapsed_s")},
        "results": [{k: v for k, v in s.items() if k != "id"} for s in results],
    }
    if prepared is not None:  # the method's prepare step (amos: the compiled spec): its calls and any fallback
        spec = prepared.get("spec")
        payload["prepare"] = {"usage": prepared.get("usage") or {},
                              "spec_fallback": spec.get("fallback") if isinstance(spec, dict) else None}
    return _score(payload, plan)


def _usage(samples: Sequence[dict[str, Any]], prepared: dict[str, Any] | None) -> dict[str, Any]:
    """Tokens, cost and calls of the samples plus those of the method's prepare step (every call counts)."""
    extra = (prepared or {}).get("usage") or {}
    out = {k: sum(int(s.get(k) or 0) for s in samples) + int(extra.get(k) or 0)
           for k in ("prompt_tokens", "completion_tokens", "llm_calls", "cached_calls")}
    cost = sum(float(s.get("cost_usd") or 0) for s in samples) + float(extra.get("cost_usd") or 0)
    return {**out, "cost_usd": round(cost, 6)}


def finalize_results(plan: RunPlan, samples: Sequence[dict[str, Any]], *, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build, validate and write ``runs/{run_id}/results.json``; returns the payload."""
    payload = build_results(plan, samples, status=status)
    validate_results(payload, str(plan.run_dir / RESULTS_FILE))
    snapshot = plan.run_gt.snapshot()
    if snapshot is not None:  # the GT as it was, kept with the run (its lineage says where it came from)
        write_bytes_atomic(plan.run_dir / GT_FILE, snapshot)
        payload["gt"] = {**(payload["gt"] or {}), "snapshot": GT_FILE,
                         "snapshot_sha256": hashlib.sha256(snapshot).hexdigest()}
    write_results(plan.run_dir, payload)
    return payload
