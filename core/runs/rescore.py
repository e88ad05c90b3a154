"""A run's GT in words, whether it is stale, and rescoring a run's stored answers against current GT.

``gt_status`` reads a run's ``results.json``: the lineage of its GT (:mod:`core.ground_truth.lineage`), the
file it kept (``gt.json``) and its sha256, and whether the workspace would give another GT now.
``rescore_run`` computes the run's GT again (or reads the GT file it names), scores the answers the
run stored against it (no LLM call), keeps the earlier scoring under ``history/NNN/`` and writes
the new ``results.json``, ``summary.json`` and ``gt.json``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.base.clock import now_iso
from core.base.errors import WorkbenchError
from core.base.files import write_bytes_atomic
from core.base.settings import require_writable
from core.datasets.db import Database
from core.ground_truth.lineage import describe, stale_reasons
from core.metrics import score_results
from core.metrics.io import dataset_review_texts
from core.metrics.score import resolve_policy
from core.runs.gt import COMPUTED, RunGT, run_gt
from core.runs.records import (
    CONFIG_FILE,
    GT_FILE,
    archive_scoring,
    history,
    load_results,
    read_record,
    run_dir,
    run_dirs,
    write_results,
)
from core.runs.results import N_BOOT, validate_results
from core.workspace import Workspace

_METRIC_FIELDS = ("accuracy", "correct", "total", "n_without_gt", "auprc", "unified_scores", "unified_metrics_full",
                  "intervals", "policy_id_used", "verdict_scale")


def lineage_of(results: Mapping[str, Any]) -> dict[str, Any] | None:
    """The lineage of the GT a scored run names; runs made before lineage was recorded are read as
    what they recorded (a GT file and its sha256), an imported run as its own embedded verdicts."""
    gt = results.get("gt")
    if isinstance(gt, dict) and gt.get("origin"):
        return gt
    if isinstance(gt, dict) and gt.get("file"):
        sha = str(gt.get("sha256") or "")
        return {"origin": "file", "version": sha[:16], "file": gt["file"], "file_sha256": sha}
    origin = (results.get("config") or {}).get("origin")
    if isinstance(origin, dict):
        return {"origin": "embedded", "version": str(origin.get("sha256") or "")[:16],
                "file": Path(str(origin.get("file") or "")).name, "file_sha256": origin.get("sha256")}
    return None


def gt_status(ws: Workspace, results: Mapping[str, Any], folder: Path | None = None, *,
              cache: dict[Any, Any] | None = None) -> dict[str, Any]:
    """``{origin, version, description, file, sha256, stale, stale_reasons, lineage, history}`` of a
    scored run: ``file``/``sha256`` name the GT the run kept (``gt.json``) or the file it read.
    ``cache``: shared by the runs of one listing (:func:`core.ground_truth.lineage.stale_reasons`)."""
    lineage = lineage_of(results)
    reasons = stale_reasons(ws, lineage, cache=cache)
    file: str | None = (lineage or {}).get("file")
    sha: str | None = (lineage or {}).get("file_sha256")
    if folder is not None and (lineage or {}).get("snapshot"):  # the GT the run kept, with the sha256 it recorded
        kept = folder / str((lineage or {})["snapshot"])
        file = str(kept.relative_to(ws.root)) if kept.is_relative_to(ws.root) else str(kept)
        sha = (lineage or {}).get("snapshot_sha256")
    return {"origin": (lineage or {}).get("origin"), "version": (lineage or {}).get("version"),
            "description": describe(lineage), "file": file, "sha256": sha, "stale": bool(reasons),
            "stale_reasons": reasons, "lineage": lineage, "rescored_at": results.get("rescored_at"),
            "history": [str(p.relative_to(ws.root)) for p in history(folder)] if folder is not None else []}


def status_line(gt: Mapping[str, Any] | None, *, stale_hint: str | None = "runs rescore to update") -> str:
    """``GT: <description> · runs/ID/gt.json sha256 1a2b3c4d5e6f`` and, when stale, why: one line
    about a :func:`gt_status`, the same on the pages and in the command line (``stale_hint=None``:
    without the staleness, which a page says in its own banner)."""
    if not gt:
        return "GT: none recorded"
    sha = f" · {gt['file']} sha256 {str(gt['sha256'])[:12]}" if gt.get("file") and gt.get("sha256") else ""
    stale = (f" · STALE: {'; '.join(gt['stale_reasons'])} ({stale_hint})"
             if gt.get("stale") and stale_hint is not None else "")
    return f"GT: {gt['description']}{sha}{stale}"


def _run_facts(folder: Path, results: dict[str, Any]) -> tuple[str, str, str, int]:
    config = (read_record(folder / CONFIG_FILE) or {}).get("config") or results.get("config") or {}
    dataset, k = config.get("dataset"), results.get("k")
    if not dataset:
        raise WorkbenchError(f"run {folder.name} names no dataset of this workspace: its GT cannot be computed; "
                             "rescore it with --gt FILE")
    if not isinstance(k, int):
        raise WorkbenchError(f"run {folder.name} has no K: it cannot be rescored")
    return str(dataset), str(results.get("task_id")), str(results.get("policy_id")), k


def rescore_results(ws: Workspace, folder: Path, results: dict[str, Any], source: str | None, *,
                    gt: RunGT | None = None) -> tuple[dict[str, Any], RunGT]:
    """(the run's results scored against the GT of ``source``, that GT) without writing anything.

    ``source``: None keeps the run's kind of GT (computed again, or the same GT file read again),
    ``"computed"`` computes it from the workspace's judgments now, anything else is a GT file;
    ``gt``: a GT already made (the same for several runs), used instead.
    """
    old = lineage_of(results)
    if source is None and gt is None:
        if old is not None and old.get("origin") == "embedded":
            raise WorkbenchError(f"run {folder.name} was imported with its own GT verdicts: rescore it with "
                                 "--gt computed or --gt FILE")
        source = COMPUTED if old is None or old.get("origin") == "computed" else str(old.get("file"))
    dataset, task, policy_id, k = _run_facts(folder, results)
    if dataset not in ws.datasets():
        raise WorkbenchError(f"run {folder.name} is of dataset {dataset!r}, which is not in {ws.root}")
    policy = resolve_policy(policy_id, ws)
    gt = gt or run_gt(ws, dataset, task, policy, k, source)
    if gt.document is None:
        raise WorkbenchError("; ".join(gt.warnings) or f"no GT for run {folder.name}")
    samples = [{key: v for key, v in s.items() if key not in ("gt_verdict", "correct")} for s in results["results"]]
    bare = {key: v for key, v in results.items() if key not in _METRIC_FIELDS}
    ids = [str(s["business_id"]) for s in samples]
    texts = dataset_review_texts(Database(ws.root), dataset, ids, k)
    options = (results.get("config") or {}).get("options") or {}
    scored = score_results({**bare, "results": samples}, gt=gt.records, review_texts=texts, policy=policy,
                           n_boot=int(options.get("n_boot", N_BOOT)), seed=int((results.get("config") or {}).get("seed") or 0))
    return scored, gt


def rescore_run(ws: Workspace, run_id: str, *, source: str | None = None) -> dict[str, Any]:
    """Rescore one run against current GT (see :func:`rescore_results`) and write it; the earlier
    scoring is kept under ``history/``. Returns ``{run_id, before, after, history}``."""
    require_writable("rescore a run")
    folder = run_dir(ws, run_id)
    if not (folder / "results.json").exists():
        raise WorkbenchError(f"no scored run {run_id!r} in {ws.runs_dir}; see `python -m core runs list`")
    results = load_results(folder)
    scored, gt = rescore_results(ws, folder, results, source)
    snapshot = gt.snapshot()
    if snapshot is None:  # rescore_results refuses a run without GT; kept for the type checker
        raise WorkbenchError(f"no GT for run {run_id}")
    kept = archive_scoring(folder)
    write_bytes_atomic(folder / GT_FILE, snapshot)
    scored["gt"] = {**(gt.lineage or {}), "snapshot": GT_FILE, "snapshot_sha256": hashlib.sha256(snapshot).hexdigest()}
    scored["rescored_at"] = now_iso()
    scored["rescored_from"] = {"version": (lineage_of(results) or {}).get("version"),
                               "history": str(kept.relative_to(folder))}
    validate_results(scored, str(folder / "results.json"))
    write_results(folder, scored)  # the commit point: results.json names the gt.json written above
    return {"run_id": run_id, "history": str(kept.relative_to(ws.root)),
            "before": _headline(results), "after": _headline(scored), "gt": describe(gt.lineage)}


def rescore_stale(ws: Workspace) -> dict[str, Any]:
    """Rescore every run whose GT is stale; returns the rescored runs and the current ones left as they are."""
    done, current, failed = [], [], []
    for folder in run_dirs(ws.runs_dir):
        results = load_results(folder)
        if not gt_status(ws, results).get("stale"):
            current.append(folder.name)
            continue
        try:
            done.append(rescore_run(ws, folder.name))
        except WorkbenchError as exc:
            failed.append({"run_id": folder.name, "error": str(exc)})
    return {"rescored": done, "current": current, "failed": failed}


def _headline(results: dict[str, Any]) -> dict[str, Any]:
    scores = results.get("unified_scores") or {}
    return {"ordinal_auprc": scores.get("auprc"), "process_score": scores.get("process_score"),
            "consistency_score": scores.get("consistency_score"), "accuracy": results.get("accuracy"),
            "total": results.get("total"), "gt_version": (lineage_of(results) or {}).get("version")}
