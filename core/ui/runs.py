"""Page glue of the Runs page: choices, pre-flight, launching as a background job, live rows.

Nothing here runs a method in the page's own process: a launch starts a ``run`` job
(:mod:`core.jobs`), which keeps going when the tab closes; the page reads progress from the
run's ``status.json`` and the job records, which any session can read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from core.base.errors import WorkbenchError
from core.base.settings import env
from core.ground_truth.gt_files import scan_gt_files
from core.ground_truth.policies.loader import list_policies
from core.jobs import cancel_job, list_jobs, resume_job, start_job
from core.llm import OFFLINE_MODEL, PRICES, endpoints
from core.methods import METHODS, prompt_template
from core.runs import RunConfig, cancel_run, list_runs, plan_run, run_status
from core.runs.records import spec_fallback
from core.tasks import task_ids
from core.ui import current_workspace, hosting
from core.workspace import Workspace

ACTIVE = ("starting", "running", "cancelling")


def hosted_locked(ws: Workspace | None = None) -> bool:
    """Whether this session may launch only the offline model and the no-LLM baselines: always in
    the demo mode (``WORKBENCH_MODE=demo``, alias ``WORKBENCH_HOSTED=1``), for non-admins in the
    team mode (:func:`core.ui.hosting.is_admin`)."""
    return hosting.admin_refusal(ws or current_workspace(), "launch paid models") is not None


def lock_line(ws: Workspace) -> str:
    """Why only the offline model is offered (one line for the page)."""
    if hosting.mode() == "demo":
        return "Hosted demo: only the offline model and the no-LLM baselines can be launched."
    return hosting.admin_refusal(ws, "launch paid models") or ""


def launch_checked(ws: Workspace, plan: dict[str, Any]) -> str | None:
    """Launch after the session's rate limit; None when launched, else why not (one line)."""
    limited = hosting.take_token("launch")
    if limited:
        return limited
    try:
        launch(ws, plan)
    except WorkbenchError as exc:
        return str(exc)
    return None


def model_choices(locked: bool) -> list[str]:
    """The offline model first, then the models of ``WORKBENCH_MODELS`` and the priced ones."""
    if locked:
        return [OFFLINE_MODEL]
    extra = [m.strip() for m in (env("WORKBENCH_MODELS") or "").split(",") if m.strip()]
    return list(dict.fromkeys([OFFLINE_MODEL, *extra, *PRICES]))


def method_choices(locked: bool) -> list[str]:
    return METHODS.names()


def endpoint_choices() -> list[str]:
    return list(endpoints())


def policy_choices(ws: Workspace, task: str) -> list[str]:
    """The policies of ``task`` in force in ``ws`` (the workspace the page acts on)."""
    return [p.policy_id for p in list_policies(ws, task)]


def task_choices(ws: Workspace) -> list[str]:
    """The tasks of ``ws``: the built-in ones and the workspace's own."""
    return task_ids(ws)


@st.cache_data(ttl=20, show_spinner=False)
def preflight(root: str, config: dict[str, Any]) -> dict[str, Any]:
    """The plan of ``config`` in the workspace at ``root`` (run id, samples, GT reference,
    pre-flight figures, warnings)."""
    return plan_run(RunConfig.from_dict(config), Workspace(Path(root))).as_dict()


def launch(ws: Workspace, plan: dict[str, Any]) -> dict[str, Any]:
    """Start the planned run as a background job (its run id fixed by the plan)."""
    config = {**plan["config"], "run_id": plan["run_id"]}
    label = f"{config['method']} · {config['model']} · K={config['k']}"
    return start_job(ws, "run", {"config": config}, label=label)


def run_id_of(job: dict[str, Any]) -> str | None:
    args = job.get("args") or {}
    return args.get("resume") or (args.get("config") or {}).get("run_id")


def active_jobs(ws: Workspace) -> list[dict[str, Any]]:
    """Run jobs still going, each with its run's live status."""
    out = []
    for job in list_jobs(ws, "run"):
        rid = run_id_of(job)
        if job["status"] in ACTIVE and rid:
            status = run_status(ws, rid) if (ws.runs_dir / rid).exists() else {"status": job["status"]}
            out.append({**job, "run_id": rid, "run": status})
    return out


def cancel(ws: Workspace, job: dict[str, Any]) -> None:
    cancel_job(ws, job["job_id"])
    if job.get("run_id") and (ws.runs_dir / job["run_id"]).exists():
        cancel_run(ws, job["run_id"])


def resume(ws: Workspace, run_id: str) -> dict[str, Any]:
    """Resume an interrupted or cancelled run as a new background job."""
    for job in list_jobs(ws, "run"):
        if run_id_of(job) == run_id and job["status"] in ("interrupted", "cancelled", "failed"):
            return resume_job(ws, job["job_id"])
    return start_job(ws, "run", {"resume": run_id}, label=f"resume {run_id}")


def runs_table(ws: Workspace) -> pl.DataFrame:
    """Past runs for the table: config, status, duration, tokens, cost, the GT each was scored
    against (its version and whether it is stale, with why), a link to the results."""
    rows = list_runs(ws, with_gt=True)
    cols = ["run_id", "status", "method", "model", "policy", "k", "done", "errors", "tokens", "cost_usd", "elapsed_s"]
    frame = pl.DataFrame([{**{c: r.get(c) for c in cols}, "gt": _gt_cell(r["gt"]), "gt_stale": r["gt"]["stale"],
                           "gt_why": "; ".join(r["gt"]["stale_reasons"]) or None,
                           "model": r.get("model") if r.get("method") not in METHODS or METHODS[r["method"]].uses_llm
                           else None} for r in rows], schema={
        "run_id": pl.Utf8, "status": pl.Utf8, "method": pl.Utf8, "model": pl.Utf8, "policy": pl.Utf8,
        "k": pl.Int64, "done": pl.Int64, "errors": pl.Int64, "tokens": pl.Int64, "cost_usd": pl.Float64,
        "elapsed_s": pl.Float64, "gt": pl.Utf8, "gt_stale": pl.Boolean, "gt_why": pl.Utf8}, strict=False)
    notes = [_notes(ws, r["run_id"]) for r in rows]
    return frame.with_columns(("/results?run=" + pl.col("run_id")).alias("results"),  # the link stays in view;
                              pl.Series("notes", notes, dtype=pl.Utf8))  # notes come last, scrolled to when long


def _notes(ws: Workspace, run_id: str) -> str:
    """What the run's figures do not say by themselves (an amos spec fallback: the run did not use
    the spec it compiled)."""
    reason = spec_fallback(ws.runs_dir / run_id)
    return f"⚠ spec fallback: {reason}" if reason else ""


def _gt_cell(gt: dict[str, Any]) -> str:
    """A GT in a table cell: its origin, short version and staleness ("computed 4ed33a8d", "file
    1a2b3c4d stale"); the page's Results names it in full, with why it is stale."""
    if not gt.get("origin"):
        return "none"
    return f"{gt['origin']} {str(gt.get('version') or '')[:8]}{' stale' if gt.get('stale') else ''}".strip()


def gt_choices(ws: Workspace, task: str, policy: str, k: int) -> dict[str, str | None]:
    """Label → GT source of a run: computed from the judgments now (the default, None), or any GT
    file of the workspace (imported or exported) of the same policy or task and the same K."""
    out: dict[str, str | None] = {"computed from the judgments and overrides now": None}
    files, _ = scan_gt_files(ws)
    for f in files:
        if f.get("k") == k and (f.get("definition") == policy or f.get("task") == task):
            out[f"GT file gt/{f['name']}" + (" (imported)" if f.get("imported") else "")] = f["path"]
    return out


def resumable(ws: Workspace) -> list[str]:
    return [r["run_id"] for r in list_runs(ws) if r["status"] in ("interrupted", "cancelled")]


def prompt_text(name: str) -> str:
    """A method's versioned prompt template, as the model receives it before filling in."""
    return prompt_template(name)


def describe_error(exc: Exception) -> str:
    return str(exc) if isinstance(exc, WorkbenchError | ValueError) else f"{type(exc).__name__}: {exc}"
