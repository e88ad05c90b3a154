"""The ``run`` background job kind: plan and execute a run in a worker process (core.jobs)."""

from __future__ import annotations

from typing import Any

from core.base.errors import ReadOnlyError
from core.base.settings import read_only
from core.jobs import JOB_KINDS, JobKind, Report, ShouldStop
from core.llm import OFFLINE_MODEL, workspace_cache
from core.methods import make_model
from core.runs.execute import execute_run
from core.runs.plan import RunConfig, plan_run
from core.runs.store import resume_config
from core.workspace import Workspace


def run_job(ws: Workspace, args: dict[str, Any], report: Report, should_stop: ShouldStop) -> dict[str, Any]:
    """args: ``{"config": RunConfig dict}`` (with its run_id) or ``{"resume": run_id}``."""
    admit_run(ws, args)
    if args.get("resume"):
        config = resume_config(ws, str(args["resume"]))
    else:
        config = RunConfig.from_dict(args["config"])
    plan = plan_run(config, ws, resume=bool(config.run_id))
    llm = make_model(config.model, ws, endpoint=config.endpoint, cache=workspace_cache(ws),
                     concurrency=config.concurrency, seed=None)
    report({"run_id": plan.run_id, "done": 0, "total": len(plan.restaurants)})
    status = execute_run(plan, llm, stop=should_stop, on_status=report)
    report({**status, "final": True})
    return status


def admit_run(ws: Workspace, args: dict[str, Any]) -> None:
    """In a read-only demo only the offline model runs (the no-LLM baselines run on it too).

    Raises:
        ReadOnlyError: another model asked for in demo mode.
    """
    if not read_only():
        return
    model = resume_config(ws, str(args["resume"])).model if args.get("resume") else (args.get("config") or {}).get("model")
    if model != OFFLINE_MODEL:
        raise ReadOnlyError(f"this is a read-only demo: only the offline model {OFFLINE_MODEL!r} runs, not {model!r}")


JOB_KINDS.add(JobKind("run", "plan and execute a method run", run_job, admit=admit_run))
