"""Who may steer a run on a shared server, how many may run at once, and when visitors' runs go.

A run launched from the app carries its owner in its job's args (``owner``): ``visitor:TOKEN``
for a session of the demo mode (a random token per browser session), ``user:EMAIL`` or
``team:ROLE`` in the team mode, ``local`` on a workstation. Only the owner or an admin cancels or
resumes it (:func:`control_refusal`); runs with no owner (the CLI, runs made before owners) are
an admin's. The server caps the runs going at once (:func:`concurrency_refusal`,
``$WORKBENCH_MAX_RUNS``), and in the demo mode a visitor's run is deleted some time after it
stopped (:func:`expire_visitor_runs`, ``$WORKBENCH_DEMO_RUN_TTL`` seconds).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.base.files import remove_file, remove_tree
from core.base.settings import env
from core.jobs import list_jobs
from core.runs.job import job_run_id
from core.workspace import Workspace, is_valid_name

ACTIVE = ("starting", "running", "cancelling")
VISITOR = "visitor:"
MAX_RUNS = 4  # runs going at once on a shared server (``$WORKBENCH_MAX_RUNS``)
DEMO_RUN_TTL = 3600.0  # seconds a visitor's stopped run stays in the demo (``$WORKBENCH_DEMO_RUN_TTL``)


def owner_of(job: dict[str, Any]) -> str | None:
    """The owner recorded in a run job's args, or None (the CLI, an older run)."""
    owner = (job.get("args") or {}).get("owner")
    return str(owner) if owner else None


def may_control(job: dict[str, Any], who: str, *, admin: bool) -> bool:
    """Whether ``who`` may cancel or resume the run of ``job``: an admin, or its owner."""
    return admin or (owner_of(job) is not None and owner_of(job) == who)


def control_refusal(job: dict[str, Any] | None, who: str, *, admin: bool, action: str) -> str | None:
    """One line saying why ``who`` may not ``action`` (cancel, resume) the run of ``job``, or None."""
    if job is None:
        return None if admin else f"Only an admin may {action} a run launched outside this app."
    if may_control(job, who, admin=admin):
        return None
    whose = "another visitor" if (owner_of(job) or "").startswith(VISITOR) else "someone else"
    return f"This run was launched by {whose}: only they (or an admin) may {action} it."


def visible_runs(ws: Workspace, run_ids: list[str], who: str, *, admin: bool) -> list[str]:
    """The runs of ``run_ids`` that ``who`` is shown on a shared demo server, in the same order: runs
    of no visitor (shipped with the workspace, the CLI's, an admin's) and ``who``'s own; all of them
    for an admin. Every page that lists method runs filters through this one rule."""
    if admin:
        return list(run_ids)
    jobs = run_jobs(ws)
    out = []
    for rid in run_ids:
        owner = owner_of(jobs.get(rid) or {}) or ""
        if not owner.startswith(VISITOR) or owner == who:
            out.append(rid)
    return out


def run_jobs(ws: Workspace) -> dict[str, dict[str, Any]]:
    """The latest job of each run (by run id) among the workspace's run jobs."""
    out: dict[str, dict[str, Any]] = {}
    for job in list_jobs(ws, "run"):  # oldest first: a later job of a run (a resume) wins
        rid = job_run_id(job.get("args") or {})
        if rid:
            out[rid] = job
    return out


def max_runs() -> int:
    """Runs allowed at once on a shared server (``$WORKBENCH_MAX_RUNS``, default :data:`MAX_RUNS`)."""
    raw = env("WORKBENCH_MAX_RUNS")
    try:
        return max(1, int(raw)) if raw else MAX_RUNS
    except ValueError:
        raise ValueError(f"$WORKBENCH_MAX_RUNS must be a whole number ≥ 1, got {raw!r}") from None


def concurrency_refusal(ws: Workspace, limit: int | None = None) -> str | None:
    """Why no other run may start now (``limit`` runs are going already), or None."""
    limit = limit or max_runs()
    going = sum(1 for job in list_jobs(ws, "run") if job.get("status") in ACTIVE)
    if going >= limit:
        return (f"This server runs at most {limit} runs at once and {going} are going: "
                "try again when one has finished.")
    return None


def demo_ttl() -> float:
    raw = env("WORKBENCH_DEMO_RUN_TTL")
    try:
        return float(raw) if raw else DEMO_RUN_TTL
    except ValueError:
        raise ValueError(f"$WORKBENCH_DEMO_RUN_TTL must be a number of seconds, got {raw!r}") from None


def expire_visitor_runs(ws: Workspace, *, ttl_s: float | None = None, now: datetime | None = None) -> list[str]:
    """Delete visitors' runs (and their job records) stopped more than ``ttl_s`` seconds ago;
    returns their run ids. Runs still going, and runs of no visitor, are left alone."""
    ttl = demo_ttl() if ttl_s is None else ttl_s
    now = now or datetime.now(UTC)
    gone = []
    for job in list_jobs(ws, "run"):
        rid = job_run_id(job.get("args") or {})
        if not (owner_of(job) or "").startswith(VISITOR) or job.get("status") in ACTIVE:
            continue
        try:
            age = (now - datetime.fromisoformat(str(job.get("updated_at")))).total_seconds()
        except ValueError:
            continue
        if age < ttl:
            continue
        if rid and is_valid_name(rid) and (ws.runs_dir / rid).is_dir() and not (ws.runs_dir / rid).is_symlink():
            remove_tree(ws.runs_dir / rid)
            gone.append(rid)
        for suffix in (".json", ".cancel"):
            remove_file(ws.jobs_dir / f"{job['job_id']}{suffix}")
    return gone
