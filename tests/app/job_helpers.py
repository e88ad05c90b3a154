"""Waiting for a background job started by a page (it runs in its own process)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from core.jobs import list_jobs
from core.workspace import Workspace


def wait_for_job(root: Path, kind: str, statuses: tuple[str, ...] = ("finished", "failed", "cancelled"),
                 timeout: float = 90.0) -> dict[str, Any]:
    """The newest ``kind`` job of the workspace at ``root`` once its status is one of ``statuses``."""
    ws = Workspace(Path(root))
    deadline = time.monotonic() + timeout
    jobs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        jobs = list_jobs(ws, kind)
        if jobs and jobs[0]["status"] in statuses:
            return jobs[0]
        time.sleep(0.1)
    raise AssertionError(f"{kind} job still {[j['status'] for j in jobs]} after {timeout} s")
