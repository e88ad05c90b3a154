"""Background jobs: a separate process per job, a job record in the workspace, cancel and resume.

``start_job(ws, kind, args)`` writes ``jobs/{job_id}.json`` and starts
``python -m core --workspace WS jobs work JOB_ID`` in its own session, so the job keeps going
when the page (or the terminal) that started it goes away. The worker runs the registered kind's
function with a ``report(progress_dict)`` callback that rewrites the record (atomic, throttled)
and a ``should_stop()`` that turns true once ``jobs/{job_id}.cancel`` exists. Any session reads
progress from the record; a record that says ``running`` while its process is gone reads as
``interrupted`` and can be resumed (a new worker for the same record; the job's own resume log
makes sure nothing finished is repeated).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.base.errors import DataError, WorkbenchError
from core.base.files import (
    make_dirs,
    open_append,
    read_json,
    remove_file,
    write_json_atomic,
    write_text_atomic,
)
from core.base.registry import Registry
from core.base.settings import PROJECT_ROOT
from core.workspace import Workspace, check_name
from core.workspace.locks import hold, lock_path, pid_alive

Report = Callable[[dict[str, Any]], None]
ShouldStop = Callable[[], bool]
REPORT_EVERY = 0.3  # seconds between record rewrites
FINAL = ("finished", "failed", "cancelled")


@dataclass(frozen=True)
class JobKind:
    """A kind of job: ``run(ws, args, report, should_stop)`` returns the job's result (JSON)."""

    name: str
    description: str
    run: Callable[[Workspace, dict[str, Any], Report, ShouldStop], dict[str, Any]]
    # raises before anything is written when the deployment does not allow these args (demo mode)
    admit: Callable[[Workspace, dict[str, Any]], None] | None = None


JOB_KINDS: Registry[JobKind] = Registry("job kind")


def jobs_dir(ws: Workspace) -> Path:
    return ws.jobs_dir


def job_path(ws: Workspace, job_id: str) -> Path:
    return jobs_dir(ws) / f"{check_name('job', job_id)}.json"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_job(ws: Workspace, job_id: str) -> dict[str, Any]:
    """The job record; ``running``/``starting`` with no live process reads as ``interrupted``, a
    running job asked to stop as ``cancelling``."""
    path = job_path(ws, job_id)
    if not path.exists():
        raise WorkbenchError(f"no job {job_id!r} in {jobs_dir(ws)}")
    record = read_json(path)
    if record.get("status") in ("running", "starting") and not pid_alive(record.get("pid")):
        started = record.get("spawned_at_monotonic_wall")
        if record.get("status") != "starting" or not started or time.time() - float(started) > 30:
            record["status"] = "interrupted"
    if record.get("status") == "running" and (jobs_dir(ws) / f"{job_id}.cancel").exists():
        record["status"] = "cancelling"  # asked to stop; the worker finishes the items in flight
    return dict(record)


def list_jobs(ws: Workspace, kind: str | None = None) -> list[dict[str, Any]]:
    """Every job record, newest first."""
    folder = jobs_dir(ws)
    if not folder.exists():
        return []
    out = []
    for path in folder.glob("*.json"):
        if path.name.startswith("."):
            continue
        try:
            record = read_job(ws, path.stem)
        except (DataError, WorkbenchError, ValueError):
            continue
        if kind is None or record.get("kind") == kind:
            out.append(record)
    return sorted(out, key=lambda r: (str(r.get("created_at")), r["job_id"]), reverse=True)


def _spawn(ws: Workspace, job_id: str) -> int:
    log = open_append(jobs_dir(ws) / f"{job_id}.log")  # handed to the child process; never through a link
    try:
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module, no shell
            [sys.executable, "-m", "core", "--workspace", str(ws.root), "--no-progress", "jobs", "work", job_id],
            cwd=str(PROJECT_ROOT), stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True,
        )
    finally:
        log.close()
    return proc.pid


def start_job(ws: Workspace, kind: str, args: dict[str, Any], *, label: str = "") -> dict[str, Any]:
    """Write the record of a new job and start its worker process; returns the record."""
    spec = JOB_KINDS[kind]  # unknown kinds list the valid ones
    if spec.admit is not None:
        spec.admit(ws, args)
    job_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{kind}-{secrets.token_hex(3)}"
    make_dirs(jobs_dir(ws))
    record = {"job_id": job_id, "kind": kind, "label": label, "args": args, "status": "starting", "pid": None,
              "created_at": _now(), "updated_at": _now(), "progress": {}, "result": None, "error": None,
              "spawned_at_monotonic_wall": time.time()}
    write_json_atomic(job_path(ws, job_id), record)
    record["pid"] = _spawn(ws, job_id)
    return record


def resume_job(ws: Workspace, job_id: str) -> dict[str, Any]:
    """Start a new worker for an interrupted, failed or cancelled job."""
    record = read_job(ws, job_id)
    spec = JOB_KINDS[record["kind"]]
    if spec.admit is not None:
        spec.admit(ws, record.get("args") or {})
    if record["status"] in ("running", "starting", "finished"):
        raise WorkbenchError(f"job {job_id} is {record['status']}: nothing to resume")
    remove_file(jobs_dir(ws) / f"{job_id}.cancel")
    record.update(status="starting", error=None, updated_at=_now(), spawned_at_monotonic_wall=time.time())
    write_json_atomic(job_path(ws, job_id), record)
    record["pid"] = _spawn(ws, job_id)
    return record


def cancel_job(ws: Workspace, job_id: str) -> dict[str, Any]:
    """Ask the job to stop (its worker checks between items); returns the record."""
    record = read_job(ws, job_id)
    if record["status"] in FINAL or record["status"] == "interrupted":
        return record
    write_text_atomic(jobs_dir(ws) / f"{job_id}.cancel", "cancel\n")
    return {**record, "status": "cancelling"}


def work(ws: Workspace, job_id: str) -> int:
    """The worker: run the job in this process, keeping its record up to date; exit code.

    One worker per job at a time (:func:`core.workspace.locks.hold`): a second ``jobs work JOB`` fails at
    once and leaves the record alone.
    """
    with hold(lock_path(ws, "job", job_id), f"job {job_id}"):
        return _work(ws, job_id)


def _work(ws: Workspace, job_id: str) -> int:
    record = read_job(ws, job_id)
    record.update(status="running", pid=os.getpid(), updated_at=_now())
    write_json_atomic(job_path(ws, job_id), record)
    cancel_flag = jobs_dir(ws) / f"{job_id}.cancel"
    last = [0.0]

    def report(progress: dict[str, Any]) -> None:
        now = time.monotonic()
        if now - last[0] >= REPORT_EVERY or progress.get("final"):
            last[0] = now
            record.update(progress=progress, updated_at=_now())
            write_json_atomic(job_path(ws, job_id), record)

    def should_stop() -> bool:
        return cancel_flag.exists()

    try:
        result = JOB_KINDS[record["kind"]].run(ws, record["args"], report, should_stop)
    except Exception as exc:  # noqa: BLE001 - the record says why the job failed
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}", updated_at=_now(),
                      traceback=traceback.format_exc()[-4000:] if not isinstance(exc, WorkbenchError) else None)
        write_json_atomic(job_path(ws, job_id), record)
        return 1
    record.update(status="cancelled" if should_stop() or result.get("status") == "cancelled" else "finished",
                  result=result, updated_at=_now())
    remove_file(cancel_flag)
    write_json_atomic(job_path(ws, job_id), record)
    return 0
