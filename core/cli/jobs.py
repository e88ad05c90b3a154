"""``python -m core jobs``: background jobs of every kind (a process each; started by pages).

    python -m core jobs list [--kind run|judge]
    python -m core jobs show JOB_ID
    python -m core jobs cancel JOB_ID
    python -m core jobs resume JOB_ID
    python -m core jobs work JOB_ID        (the worker process itself; started by core.jobs)
"""

from __future__ import annotations

import argparse
from typing import Any

import core.judgments.judges.job  # noqa: F401 - registers the "judge" job kind
import core.runs  # noqa: F401 - registers the "run" job kind
from core.cli import emit
from core.jobs import JOB_KINDS, cancel_job, list_jobs, read_job, resume_job, work

ACTIONS = ("list", "show", "cancel", "resume", "work")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("jobs", help="background jobs (method runs, judging): list, show, cancel, resume",
                       description="Background jobs (jobs/{job_id}.json): method runs started on the Runs page and "
                                   "judging started on the Ground truth page.")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("job_id", nargs="?", help="JOB_ID (show, cancel, resume, work)")
    p.add_argument("--kind", choices=JOB_KINDS.names(), help="list only jobs of this kind")
    p.set_defaults(func=run)


def progress_text(record: dict[str, Any]) -> str:
    """``done/total`` of a job's last progress report, or ``-``.

    >>> progress_text({"progress": {"done": 3, "total": 12}})
    '3/12'
    >>> progress_text({"progress": {}})
    '-'
    """
    p = record.get("progress") or {}
    return f"{p['done']}/{p['total']}" if p.get("total") is not None and p.get("done") is not None else "-"


def run(args: argparse.Namespace) -> int:
    ws = args.workspace
    if args.action == "list":
        rows = list_jobs(ws, args.kind)
        lines = [f"{'job_id':<40} {'kind':<6} {'status':<12} {'progress':>11}  label"]
        lines += [f"{r['job_id']:<40} {r['kind']:<6} {r['status']:<12} {progress_text(r):>11}  {r.get('label') or ''}"
                  for r in rows]
        emit(args, rows, "\n".join(lines) if rows else "no jobs")
        return 0
    if not args.job_id:
        raise ValueError(f"jobs {args.action} needs a JOB_ID")
    if args.action == "work":
        return work(ws, args.job_id)
    if args.action == "show":
        record = read_job(ws, args.job_id)
        message = (record.get("progress") or {}).get("message") or ""
        emit(args, record, f"job {record['job_id']} ({record['kind']}, {record.get('label') or ''}): {record['status']}, "
                           f"{progress_text(record)} {message}".rstrip()
                           + (f"\nerror: {record['error']}" if record.get("error") else ""))
        return 0
    record = cancel_job(ws, args.job_id) if args.action == "cancel" else resume_job(ws, args.job_id)
    emit(args, record, f"job {record['job_id']}: {record['status']}")
    return 0
