"""``runs import FILE``: runs made elsewhere, converted to our layout with their origin kept.

Two formats:

- **ADDM** ``results.json`` — already SPEC §4.2 (``run_id, task_id, policy_id, method, model, k,
  results: [samples]``): checked and stored as is.
- **xnot** ``detailed_results.json`` — the explore scripts' ``{metrics, runs: [...]}`` layout, read by
  :func:`core.metrics.xnot.results_from_xnot` (GT from each run's ``ground_truth``), or a list of
  per-restaurant records (or ``{"results": [...]}``
  / ``{"restaurants": {name: record}}``), each with the restaurant (``restaurant`` or ``name``,
  ``business_id`` when present) and per-primitive ``{predicted, ground_truth}`` pairs, among them
  ``verdict`` and ``final_risk_score``. A sample's ``risk_score`` is ``final_risk_score.predicted``
  (missing → 0.0, as xnot scores it, SPEC §5.1), its verdicts the predicted and GT verdicts, and
  the whole record is kept as its ``response``.

The imported run is scored with ``core.metrics.score_results`` (GT from each sample's
``gt_verdict``) and goes to ``runs/{run_id}/results.json`` with ``config.origin`` = {format, file,
sha256, imported_at}, with its ``summary.json`` (``core.metrics.io``); the source file is never changed.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.base.errors import DataError, WorkbenchError
from core.base.files import read_json, require_file, sha256_file
from core.base.settings import require_writable
from core.metrics import score_results
from core.metrics.score import resolve_policy
from core.metrics.xnot import is_xnot_detailed, results_from_xnot
from core.runs.records import check_samples, write_results
from core.runs.results import N_BOOT, validate_results
from core.workspace import Workspace, check_name


def _pair(entry: dict[str, Any], name: str) -> tuple[Any, Any]:
    value = entry.get(name)
    if isinstance(value, dict):
        return value.get("predicted"), value.get("ground_truth")
    return entry.get(f"predicted_{name}", value), entry.get(f"gt_{name}", entry.get(f"ground_truth_{name}"))


MAX_K = 100_000  # reviews per restaurant a run may claim to have read


def _xnot_entries(payload: Any, path: Path) -> list[dict[str, Any]]:
    if isinstance(payload, dict) and isinstance(payload.get("results"), list):
        payload = payload["results"]
    elif isinstance(payload, dict) and isinstance(payload.get("restaurants"), dict):
        bad = next((k for k, v in payload["restaurants"].items() if not isinstance(v, dict)), None)
        if bad is not None:  # never dropped silently: the run would be scored on fewer restaurants
            raise DataError(f"expected an object per restaurant, got {type(payload['restaurants'][bad]).__name__}",
                            path=path, field=f"restaurants.{bad}")
        payload = [{"restaurant": k, **v} for k, v in payload["restaurants"].items()]
    if not isinstance(payload, list):
        raise DataError("expected a list of per-restaurant records (xnot detailed_results.json)", path=path)
    for i, entry in enumerate(payload):
        if not isinstance(entry, dict) or not (entry.get("restaurant") or entry.get("name") or entry.get("business_id")):
            raise DataError("record without restaurant/name/business_id", path=path, field=f"[{i}]")
    return payload


def convert_xnot(payload: Any, path: Path) -> dict[str, Any]:
    """A SPEC §4.2 results payload from an xnot ``detailed_results.json``."""
    samples = []
    for entry in _xnot_entries(payload, path):
        verdict, gt_verdict = _pair(entry, "verdict")
        score, _ = _pair(entry, "final_risk_score")
        name = entry.get("restaurant") or entry.get("name")
        score = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else 0.0
        samples.append({
            "business_id": str(entry.get("business_id") or name), "name": name, "verdict": verdict,
            "risk_score": score, "parsed": None, "response": json.dumps(entry, ensure_ascii=False, default=str),
            "gt_verdict": gt_verdict, "correct": None if gt_verdict is None else verdict == gt_verdict,
            "prompt_tokens": entry.get("prompt_tokens") or 0, "completion_tokens": entry.get("completion_tokens") or 0,
            "cost_usd": entry.get("cost_usd") or 0.0, "latency_ms": None, "llm_calls": entry.get("llm_calls") or 0,
        })
    judged = [s for s in samples if s["gt_verdict"] is not None]
    correct = sum(1 for s in judged if s["correct"])
    meta = payload if isinstance(payload, dict) else {}
    return {
        "run_id": str(meta.get("run_id") or ""), "task_id": str(meta.get("task_id") or "G1a"),
        "policy_id": str(meta.get("formula_version") or meta.get("policy_id") or "v1"),
        "method": str(meta.get("method") or "xnot"), "model": str(meta.get("model") or "unknown"),
        "k": meta.get("k"), "n": len(samples), "timestamp": str(meta.get("timestamp") or ""), "config": {},
        "accuracy": round(correct / len(judged), 6) if judged else None, "correct": correct, "total": len(judged),
        "results": samples,
    }


def detect_format(payload: Any) -> str:
    """``addm`` for a SPEC §4.2 results file, else ``xnot``."""
    if isinstance(payload, dict) and isinstance(payload.get("results"), list) and "policy_id" in payload and "method" in payload:
        return "addm"
    return "xnot"


def import_run_file(ws: Workspace, source: str | Path, *, run_id: str | None = None,
                    n_boot: int = N_BOOT) -> dict[str, Any]:
    """Convert and store a run made elsewhere (``n_boot`` bootstrap resamples of its intervals, 0:
    none); returns {run_id, format, n, path}."""
    require_writable("import a run")
    source = Path(source)
    require_file(source)  # missing, or a folder / device / pipe named as such
    payload = read_json(source)
    fmt = detect_format(payload)
    gt = None
    if is_xnot_detailed(payload):  # the explore scripts' layout: {metrics, runs: [...]} (core.metrics.xnot)
        converted, gt = results_from_xnot(payload, path=str(source))
    elif fmt == "addm":
        converted = dict(payload)
    else:
        converted = convert_xnot(payload, source)
    defaults = {"name": None, "verdict": None, "risk_score": None, "parsed": None, "response": None, "gt_verdict": None,
                "correct": None, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None, "latency_ms": None,
                "llm_calls": 0}
    samples = converted.get("results")
    if not isinstance(samples, list) or not samples:
        raise DataError("no samples: a run needs at least one restaurant's result", path=source, field="results")
    check_samples(samples, source)  # types, finite scores, each business_id once (as score checks them)
    k = converted.get("k")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K):
        raise DataError(f"expected a whole number of reviews from 1 to {MAX_K} (or null), got {k!r:.40}", path=source,
                        field="k")
    converted["results"] = [{**defaults, **s} for s in samples]
    for key in ("config", "n", "timestamp", "accuracy", "correct", "total"):
        converted.setdefault(key, {} if key == "config" else None if key == "accuracy" else 0 if key != "timestamp" else "")
    stamp = datetime.now(UTC)
    base = run_id or converted.get("run_id") or f"imported-{fmt}-{stamp:%Y%m%d-%H%M%S}"
    rid = check_name("run", re.sub(r"[^A-Za-z0-9_.-]+", "-", str(base))[:64].lstrip("-.") or "imported")
    if (ws.runs_dir / rid).exists():
        raise WorkbenchError(f"run {rid!r} exists already in {ws.runs_dir}; pass --run-id to import under another id")
    converted["run_id"] = rid
    converted["config"] = {**(converted.get("config") or {}), "origin": {
        "format": fmt, "file": str(source.resolve()), "sha256": sha256_file(source),
        "imported_at": stamp.isoformat(timespec="seconds")}}
    policy = resolve_policy(converted.get("policy_id"), ws)
    converted = score_results(converted, gt=gt, policy=policy, n_boot=n_boot)
    validate_results(converted, str(source))
    target = write_results(ws.runs_dir / rid, converted)
    return {"run_id": rid, "format": fmt, "n": len(converted["results"]), "path": str(target)}
