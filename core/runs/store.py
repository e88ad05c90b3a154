"""Runs in a workspace: list, show, status (with dead processes detected), cancel, resume config."""

from __future__ import annotations

from typing import Any

from core.base.errors import WorkbenchError
from core.base.files import write_text_atomic
from core.jobs.execution import read_log
from core.metrics.badges import headline_report
from core.runs.plan import RunConfig
from core.runs.records import (
    CANCEL_FILE,
    CONFIG_FILE,
    RESULTS_FILE,
    SAMPLES_FILE,
    STATUS_FILE,
    read_record,
    recorded_gt,
    run_dir,
    spec_fallback,
)
from core.runs.rescore import gt_status
from core.workspace import Workspace
from core.workspace.locks import pid_alive


def run_status(ws: Workspace, run_id: str) -> dict[str, Any]:
    """The run's status record; ``running`` with a dead process reads as ``interrupted``."""
    folder = run_dir(ws, run_id)
    status = read_record(folder / STATUS_FILE) or {}
    if (folder / RESULTS_FILE).exists() and status.get("status") in (None, "running"):
        status["status"] = "finished"
    if status.get("status") == "running" and not pid_alive(status.get("pid")):
        status["status"] = "interrupted"
    status.setdefault("status", "imported" if (folder / RESULTS_FILE).exists() else "planned")
    return status


def list_runs(ws: Workspace, *, with_gt: bool = False) -> list[dict[str, Any]]:
    """One row per run, newest first: id, config, status, duration, tokens, cost, errors; with
    ``with_gt`` also the GT it was scored (or planned) against: ``gt`` (a :func:`gt_status`)."""
    if not ws.runs_dir.exists():
        return []
    rows: list[dict[str, Any]] = []
    cache: dict[Any, Any] = {}  # the current GT of each (dataset, task, definition, K), computed once
    for folder in ws.runs_dir.iterdir():
        if not folder.is_dir() or folder.name.startswith((".", "_")):
            continue
        config = (read_record(folder / CONFIG_FILE) or {}).get("config") or {}
        results = None
        if not config:
            results = read_record(folder / RESULTS_FILE) or {}
            config = results.get("config") or {}
        status = run_status(ws, folder.name)
        rows.append({
            "run_id": folder.name, "status": status.get("status"), "dataset": config.get("dataset"),
            "task": config.get("task") or (results or {}).get("task_id"), "policy": config.get("policy") or (results or {}).get("policy_id"),
            "method": config.get("method") or (results or {}).get("method"), "model": config.get("model") or (results or {}).get("model"),
            "k": config.get("k") or (results or {}).get("k"), "done": status.get("done"), "total": status.get("total"),
            "errors": status.get("errors"), "elapsed_s": status.get("elapsed_s"),
            "tokens": int(status.get("prompt_tokens") or 0) + int(status.get("completion_tokens") or 0),
            "cost_usd": status.get("cost_usd"), "calls_cached": status.get("calls_cached"),
            "calls_new": status.get("calls_new"), "est_cost_usd_low": status.get("est_cost_usd_low"),
            "est_cost_usd_high": status.get("est_cost_usd_high"), "started_at": status.get("started_at") or config.get("created_at"),
            "origin": config.get("origin"),
            **({"gt": gt_status(ws, {"gt": recorded_gt(folder), "config": config}, folder, cache=cache)}
               if with_gt else {}),
        })
    return sorted(rows, key=lambda r: (str(r.get("started_at") or ""), r["run_id"]), reverse=True)


def show_run(ws: Workspace, run_id: str) -> dict[str, Any]:
    """Config, status, the GT it is scored against (``gt``: file, sha256, origin, description,
    stale, stale_reasons) and (when finished) the results summary of one run."""
    folder = run_dir(ws, run_id)
    if not folder.exists():
        raise WorkbenchError(f"no run {run_id!r} in {ws.runs_dir}; see `python -m core runs list`")
    config = read_record(folder / CONFIG_FILE)
    out: dict[str, Any] = {"run_id": run_id, "run_dir": str(folder), "status": run_status(ws, run_id), "config": config}
    results = read_record(folder / RESULTS_FILE)
    if results is not None:
        out["gt"] = gt_status(ws, results, folder)
        out["results"] = {k: v for k, v in results.items() if k != "results"}
        # what the scores need beside them not to flatter the run (core.metrics.badges)
        out["headline"] = headline_report(results, spec_fallback(folder, results))
    else:  # not scored yet: the GT it was planned against
        out["gt"] = gt_status(ws, {"gt": (config or {}).get("gt")})
    return out


def cancel_run(ws: Workspace, run_id: str) -> dict[str, Any]:
    """Ask a running run to stop (it finishes the samples in flight and starts no new one)."""
    folder = run_dir(ws, run_id)
    if not folder.exists():
        raise WorkbenchError(f"no run {run_id!r} in {ws.runs_dir}")
    status = run_status(ws, run_id)
    if status.get("status") != "running":
        return {"run_id": run_id, "status": status.get("status"), "cancelled": False,
                "message": f"run {run_id} is {status.get('status')}, nothing to cancel"}
    write_text_atomic(folder / CANCEL_FILE, "cancel\n")
    return {"run_id": run_id, "status": "cancelling", "cancelled": True,
            "message": f"cancel requested for run {run_id}; samples in flight finish first"}


def resume_config(ws: Workspace, run_id: str) -> RunConfig:
    """The configuration of an unfinished run, to plan its resumption."""
    folder = run_dir(ws, run_id)
    config = (read_record(folder / CONFIG_FILE) or {}).get("config")
    if not config:
        raise WorkbenchError(f"run {run_id!r} has no {CONFIG_FILE} in {folder}: it cannot be resumed")
    return RunConfig.from_dict({**config, "run_id": run_id})


def read_samples(ws: Workspace, run_id: str) -> list[dict[str, Any]]:
    return read_log(run_dir(ws, run_id) / SAMPLES_FILE)
