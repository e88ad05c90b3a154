"""Page glue of the Runs page: choices, pre-flight, launching as a background job, live rows.

Nothing here runs a method in the page's own process: a launch starts a ``run`` job
(:mod:`core.jobs`), which keeps going when the tab closes; the page reads progress from the
run's ``status.json`` and the job records, which any session can read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from core.base.errors import WorkbenchError
from core.base.settings import env
from core.ground_truth.gt_listing import scan_gt_files
from core.ground_truth.policies.loader import list_policies
from core.jobs import cancel_job, list_jobs, read_job, resume_job, start_job
from core.llm import OFFLINE_MODEL, PRICES, endpoints, get_endpoint, price_for
from core.llm.models import served_models
from core.methods import METHODS, prompt_template
from core.runs import RunConfig, cancel_run, list_runs, owners, run_status
from core.runs.plan import new_run_id
from core.runs.preview import preview_run
from core.runs.records import spec_fallback
from core.runs.spend import check_price as check_price
from core.runs.spend import default_cap as default_cap
from core.tasks import task_ids
from core.ui import current_workspace, hosting
from core.ui.ownership import K_VISITOR as K_VISITOR
from core.ui.ownership import visible, who
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


SERVER_LAUNCHES = "20/60"  # launches per minute on the whole server (``$WORKBENCH_RATE_LIMIT_LAUNCH_SERVER``)


def launch_checked(ws: Workspace, plan: dict[str, Any]) -> tuple[str | None, str | None]:
    """Launch after the session's rate limit and, on a shared server, the server's (launches per
    minute, runs going at once); (None, the new run's id) when launched, else (why not, None)."""
    limited = hosting.take_token("launch")
    if limited:
        return limited, None
    if hosting.hosted():
        limited = (owners.concurrency_refusal(ws)
                   or hosting.take_shared_token("launch_server", SERVER_LAUNCHES, "run launches"))
        if limited:
            return limited, None
    try:
        job = launch(ws, plan, owner=who(ws))
    except WorkbenchError as exc:
        return str(exc), None
    return None, str(job["args"]["config"]["run_id"])


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


def preflight(root: str, config: dict[str, Any]) -> dict[str, Any]:
    """What a new run of ``config`` in the workspace at ``root`` will do (samples, GT reference,
    pre-flight figures, warnings; no run id), as :meth:`core.runs.RunPlan.as_dict` says it, from
    counts and lineage (:func:`core.runs.preview.preview_run`: kept while the data are as they were,
    never for a time)."""
    return preview_run(RunConfig.from_dict(config), Workspace(Path(root)))


def launch(ws: Workspace, plan: dict[str, Any], *, owner: str | None = None) -> dict[str, Any]:
    """Start the previewed run as a background job with a new run id (each launch its own, made
    here: a preview shown twice never hands one id to two runs), owned by ``owner``. The job plans
    the run in full and records its own pre-flight."""
    run_id = plan.get("run_id") or new_run_id(RunConfig.from_dict(plan["config"]))
    config = {**plan["config"], "run_id": run_id}
    label = f"{config['method']} · {config['model']} · K={config['k']}"
    return start_job(ws, "run", {"config": config, **({"owner": owner} if owner else {})}, label=label)


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


def control_refusal(ws: Workspace, job: dict[str, Any] | None, action: str) -> str | None:
    """Why this session may not ``action`` (cancel, resume) the run of ``job``, or None: only its
    owner or an admin may (anyone locally)."""
    return owners.control_refusal(job, who(ws), admin=hosting.is_admin(ws), action=action)


def cancel(ws: Workspace, job: dict[str, Any]) -> str | None:
    """Cancel the run of ``job``; None when asked, else why not (one line)."""
    refused = control_refusal(ws, read_job(ws, job["job_id"]), "cancel")  # the record on disk, not the page's
    if refused:
        return refused
    cancel_job(ws, job["job_id"])
    if job.get("run_id") and (ws.runs_dir / job["run_id"]).exists():
        cancel_run(ws, job["run_id"])
    return None


def resume(ws: Workspace, run_id: str, *, retry_errors: str | None = None) -> str | None:
    """Resume an interrupted or cancelled run as a background job (asking its failed samples again
    when ``retry_errors`` is transport, model or all); None when started, else why not."""
    job = owners.run_jobs(ws).get(run_id)
    refused = control_refusal(ws, job, "resume")
    if refused:
        return refused
    try:
        if job is not None and job["status"] in ("interrupted", "cancelled", "failed") and not retry_errors:
            resume_job(ws, job["job_id"])
            return None
        args = {"resume": run_id, **({"retry_errors": retry_errors} if retry_errors else {}),
                **({"owner": owners.owner_of(job)} if job is not None and owners.owner_of(job) else {})}
        start_job(ws, "run", args, label=f"resume {run_id}")
    except WorkbenchError as exc:
        return str(exc)
    return None


def expire(ws: Workspace) -> list[str]:
    """In the demo mode, delete visitors' runs stopped longer ago than ``$WORKBENCH_DEMO_RUN_TTL``."""
    return owners.expire_visitor_runs(ws) if hosting.mode() == "demo" else []


def runs_table(ws: Workspace) -> pl.DataFrame:
    """Past runs for the table: config, status, duration, tokens, calls cached / new, the cost beside
    its estimate, the GT each was scored against (its version and whether it is stale, with why), a
    link to the results. In the demo mode, other visitors' runs are left out."""
    shown = set(visible(ws, [r["run_id"] for r in list_runs(ws)]))
    rows = [r for r in list_runs(ws, with_gt=True) if r["run_id"] in shown]
    cols = ["run_id", "status", "method", "model", "policy", "k", "done", "errors", "tokens", "cost_usd", "elapsed_s"]
    frame = pl.DataFrame([{**{c: r.get(c) for c in cols}, "gt": _gt_cell(r["gt"]), "gt_stale": r["gt"]["stale"],
                           "gt_why": "; ".join(r["gt"]["stale_reasons"]) or None, "calls": calls_cached_new(r),
                           "estimate": estimate_cell(r),
                           "model": r.get("model") if r.get("method") not in METHODS or METHODS[r["method"]].uses_llm
                           else None} for r in rows], schema={
        "run_id": pl.Utf8, "status": pl.Utf8, "method": pl.Utf8, "model": pl.Utf8, "policy": pl.Utf8,
        "k": pl.Int64, "done": pl.Int64, "errors": pl.Int64, "tokens": pl.Int64, "cost_usd": pl.Float64,
        "elapsed_s": pl.Float64, "gt": pl.Utf8, "gt_stale": pl.Boolean, "gt_why": pl.Utf8, "calls": pl.Utf8,
        "estimate": pl.Utf8}, strict=False)
    order = ["run_id", "status", "method", "model", "policy", "k", "done", "errors", "calls", "tokens", "cost_usd",
             "estimate", "elapsed_s", "gt", "gt_stale", "gt_why"]  # cost beside its estimate, calls beside tokens
    frame = frame.select(order)
    notes = [_notes(ws, r["run_id"]) for r in rows]
    return frame.with_columns(("/results?run=" + pl.col("run_id")).alias("results"),  # the link stays in view;
                              pl.Series("notes", notes, dtype=pl.Utf8))  # notes come last, scrolled to when long


def calls_cached_new(row: dict[str, Any]) -> str | None:
    """ "N / M": LLM calls of a run's last start taken from the cache / made new (paid), or None (a
    baseline, which calls no model, or an imported run)."""
    if row.get("method") in METHODS and not METHODS[row["method"]].uses_llm:
        return None
    if row.get("calls_cached") is None and row.get("calls_new") is None:
        return None
    return f"{int(row.get('calls_cached') or 0):,} / {int(row.get('calls_new') or 0):,}"


def estimate_cell(row: dict[str, Any]) -> str | None:
    """The pre-flight cost range of a run, to read beside what it cost ("$0.0010–$0.0030"); None
    for a free one."""
    low, high = row.get("est_cost_usd_low"), row.get("est_cost_usd_high")
    if low is None or not high:  # no estimate, or a free run (the offline model, a baseline, a local server)
        return None
    return f"${float(low):.4f}–${float(high):.4f}"


def price_line(model: str, price: tuple[float, float] | None = None) -> str:
    """The model a run will use and its price, in words (the page shows it as text)."""
    known = price or price_for(model)
    if model == OFFLINE_MODEL:
        return f"Model used: {model} (offline, no cost)"
    if known is None:
        return f"Model used: {model} · no price: give one, or run it knowingly without one"
    return f"Model used: {model} · price ${known[0]:g} / ${known[1]:g} per million input / output tokens"


def is_local(endpoint: str | None) -> bool:
    """Whether ``endpoint`` (None: default) is a server on this machine (free: no price, no cap)."""
    return get_endpoint(endpoint).is_local


def list_models(endpoint: str | None) -> list[str]:
    """The models ``endpoint`` serves (its ``/models``); raises WorkbenchError with one line."""
    return served_models(get_endpoint(endpoint))


def confirm_key(plan: dict[str, Any]) -> str:
    """What a confirmation was given for: the run's configuration (a change asks again)."""
    return json.dumps({k: v for k, v in plan["config"].items() if k != "run_id"}, sort_keys=True, default=str)


def confirm_line(plan: dict[str, Any]) -> str | None:
    """What a run will spend, to confirm before launching; None when it calls no paid model."""
    f = plan["preflight"]
    if not f["uses_llm"] or f["offline"] or not f.get("new_calls") or is_local(plan["config"].get("endpoint")):
        return None
    about = f"about {f['new_calls']:,} (estimated from {f['sampled']:,} restaurants)" if f.get("sampled") \
        else f"{f['new_calls']:,}"
    if not f.get("priced"):
        return (f"{about} new calls to {plan['config']['model']}, which has no price: "
                "the cost is unknown and cannot be capped.")
    if not f.get("est_cost_usd_high"):
        return None
    cap = plan["config"].get("max_cost")
    return (f"{about} new calls to {plan['config']['model']}: estimated ${f['est_cost_usd_low']:.4f}–"
            f"${f['est_cost_usd_high']:.4f}" + (f", stopped at ${float(cap):.4f} at most" if cap else ", no cap"))


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
    """Runs this session may resume: interrupted or cancelled, its own (any, for an admin)."""
    jobs = owners.run_jobs(ws)
    return [r["run_id"] for r in list_runs(ws) if r["status"] in ("interrupted", "cancelled")
            and control_refusal(ws, jobs.get(r["run_id"]), "resume") is None]


def with_errors(ws: Workspace) -> list[str]:
    """Finished or stopped runs with failed samples this session may ask again (Retry failed samples)."""
    jobs = owners.run_jobs(ws)
    return [r["run_id"] for r in list_runs(ws) if (r.get("errors") or 0) > 0
            and r["status"] in ("finished", "interrupted", "cancelled")
            and control_refusal(ws, jobs.get(r["run_id"]), "resume") is None]


def prompt_text(name: str) -> str:
    """A method's versioned prompt template, as the model receives it before filling in."""
    return prompt_template(name)


def describe_error(exc: Exception) -> str:
    return str(exc) if isinstance(exc, WorkbenchError | ValueError) else f"{type(exc).__name__}: {exc}"
