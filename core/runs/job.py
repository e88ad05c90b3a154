"""The ``run`` background job kind: plan and execute a run in a worker process (core.jobs)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.base.errors import ReadOnlyError
from core.base.settings import read_only
from core.jobs import JOB_KINDS, JobKind, Report, ShouldStop
from core.llm import OFFLINE_MODEL, workspace_cache
from core.methods import make_model
from core.runs.execute import execute_run
from core.runs.plan import RunConfig, plan_run
from core.runs.spend import check_cap
from core.runs.store import resume_config
from core.workspace import Workspace, is_valid_name
from core.workspace.locks import LockBusyError, is_held, lock_holder, run_lock_path


def run_job(ws: Workspace, args: dict[str, Any], report: Report, should_stop: ShouldStop) -> dict[str, Any]:
    """args: ``{"config": RunConfig dict}`` (with its run_id) or ``{"resume": run_id}``, and
    optionally ``retry_errors`` (transport, model, all) and ``max_cost`` (a new cap for a resume)."""
    admit_run(ws, args)
    if args.get("resume"):
        config = resume_config(ws, str(args["resume"]))
        if args.get("max_cost") is not None:
            config = replace(config, max_cost=check_cap(args["max_cost"]))
    else:
        config = RunConfig.from_dict(args["config"])
    plan = plan_run(config, ws, resume=bool(config.run_id), retry_errors=args.get("retry_errors") if args.get("resume") else None)
    llm = make_model(config.model, ws, endpoint=config.endpoint, cache=workspace_cache(ws),
                     concurrency=config.concurrency, seed=None, price=config.price)
    report({"run_id": plan.run_id, "done": 0, "total": len(plan.restaurants)})
    status = execute_run(plan, llm, stop=should_stop, on_status=report)
    report({**status, "final": True})
    return status


def job_run_id(args: dict[str, Any]) -> str | None:
    """The run a ``run`` job's args execute (resumed, or planned with its id)."""
    rid = args.get("resume") or (args.get("config") or {}).get("run_id")
    return str(rid) if rid else None


def admit_run(ws: Workspace, args: dict[str, Any]) -> None:
    """Refuse at once a run another process is executing; in a read-only demo only the offline
    model runs (the no-LLM baselines run on it too).

    Raises:
        LockBusyError: the run is executing (another job, a terminal).
        ReadOnlyError: another model asked for in demo mode.
    """
    rid = job_run_id(args)
    if rid and is_valid_name(rid) and is_held(run_lock_path(ws, rid)):
        raise LockBusyError(f"run {rid!r} is already running{lock_holder(run_lock_path(ws, rid))}; wait for it to finish")
    if not read_only():
        return
    model = resume_config(ws, str(args["resume"])).model if args.get("resume") else (args.get("config") or {}).get("model")
    if model != OFFLINE_MODEL:
        raise ReadOnlyError(f"this is a read-only demo: only the offline model {OFFLINE_MODEL!r} runs, not {model!r}")


JOB_KINDS.add(JobKind("run", "plan and execute a method run", run_job, admit=admit_run))
