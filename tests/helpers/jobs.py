"""Waiting for background jobs (each runs in its own process) and the slow local LLM they judge with."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.jobs import list_jobs, read_job
from core.workspace import Workspace
from tests.helpers.llm_server import LLMServer, heuristic_responder


def wait_for_status(ws: Workspace, job_id: str, statuses: tuple[str, ...], timeout: float = 90.0) -> dict[str, Any]:
    """The record of job ``job_id`` once its status is one of ``statuses``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = read_job(ws, job_id)
        if record["status"] in statuses:
            return record
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {read_job(ws, job_id)['status']} after {timeout} s")


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


def slow_judge_llm(monkeypatch: Any, delay: float) -> Iterator[LLMServer]:
    """A local server answering G1a judging prompts after ``delay`` s, set as the judge's endpoint
    (the job processes inherit the environment); ``yield from`` it in a fixture."""
    with LLMServer(heuristic_responder) as server:
        server.delay_all = delay
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("WORKBENCH_JUDGE_MODEL", "gpt-4o-mini")
        yield server
