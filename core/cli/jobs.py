"""``python -m core jobs``: background jobs (a process each; started by pages).

    python -m core jobs list
    python -m core jobs cancel JOB_ID
    python -m core jobs resume JOB_ID
    python -m core jobs work JOB_ID        (the worker process itself; started by core.jobs)
"""

from __future__ import annotations

import argparse

import core.runs  # noqa: F401 - registers the "run" job kind
from core.cli import emit
from core.jobs import cancel_job, list_jobs, resume_job, work

ACTIONS = ("list", "cancel", "resume", "work")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("jobs", help="background jobs: list, cancel, resume", description="Background jobs (jobs/{job_id}.json).")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("job_id", nargs="?", help="JOB_ID (cancel, resume, work)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ws = args.workspace
    if args.action == "list":
        rows = list_jobs(ws)
        lines = [f"{r['job_id']:<40} {r['kind']:<6} {r['status']:<12} {r.get('label') or ''}" for r in rows]
        emit(args, rows, "\n".join(lines) if rows else "no jobs")
        return 0
    if not args.job_id:
        raise ValueError(f"jobs {args.action} needs a JOB_ID")
    if args.action == "work":
        return work(ws, args.job_id)
    record = cancel_job(ws, args.job_id) if args.action == "cancel" else resume_job(ws, args.job_id)
    emit(args, record, f"job {record['job_id']}: {record['status']}")
    return 0
