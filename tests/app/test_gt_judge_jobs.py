"""AppTest: the Ground truth page shows a judging job started elsewhere (another session, the CLI) from its record.

The job is a real worker process; the OpenAI-compatible judge talks to tests/helpers/llm_server.py, slowed down so
the page can be drawn while the job runs.
"""

from __future__ import annotations

import time

import pytest

from core.jobs import read_job, start_job
from core.judgments.judges.job import JOB_KIND
from tests.helpers.gt_pages import _gt
from tests.helpers.jobs import slow_judge_llm, wait_for_job
from tests.helpers.judging_dataset import build_judging_dataset


def _progress_texts(at) -> list[str]:
    return [p.proto.text.replace("\\", "") for p in at.get("progress")]


def _plain(elements) -> str:
    return "\n".join(e.value.replace("\\", "") for e in elements)  # markdown-escaped values, as text


def _wait_for_judging(workspace, job_id: str, total: int, timeout: float = 90.0) -> None:
    """Until the job reports judging progress out of ``total`` (it imports openai and plans first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (read_job(workspace, job_id).get("progress") or {}).get("total") == total:
            return
        time.sleep(0.05)
    raise AssertionError(f"the job reported no progress out of {total} after {timeout} s")


@pytest.fixture()
def slow_llm(monkeypatch):
    yield from slow_judge_llm(monkeypatch, 0.4)


def test_gt_page_follows_a_running_judging_job_then_cancel_resume_and_finish(app_factory, workspace, slow_llm):
    build_judging_dataset(workspace, "d", restaurants=8)  # 48 keyword-matched reviews
    job = start_job(workspace, JOB_KIND, {"dataset": "d", "task": "G1a", "use_openai": True}, label="d/G1a · LLM")
    wait_for_job(workspace.root, JOB_KIND, ("running",))
    _wait_for_judging(workspace, job["job_id"], 48)
    at = _gt(app_factory, workspace.root)  # a session that did not start the job
    texts = _progress_texts(at)
    assert len(texts) == 1 and texts[0].startswith("Judging job d/G1a · LLM: running — ") and "/48" in texts[0], texts
    assert at.button(key="gt.run").disabled  # one judging job per dataset/task at a time
    at.button(key="gt.job.cancel").click().run()
    assert not at.exception, at.exception
    assert read_job(workspace, job["job_id"])["status"] in ("cancelling", "cancelled")
    stopped = wait_for_job(workspace.root, JOB_KIND, ("cancelled",))
    at.run()
    assert "was cancelled" in _plain(at.warning) and f"after {stopped['result']['judged']} of 48 reviews" in _plain(at.warning)
    assert not at.get("progress") and not at.button(key="gt.run").disabled
    at.button(key="gt.job.resume").click().run()  # a paid job: the remaining cost first, nothing sent yet
    confirm = _plain(at.markdown)
    assert "Confirm resuming a paid run" in confirm and f"{48 - stopped['result']['judged']} reviews to judge" in confirm
    assert read_job(workspace, job["job_id"])["status"] == "cancelled"
    at.button(key="gt.job.resume_confirm").click().run()
    assert not at.exception, at.exception
    assert read_job(workspace, job["job_id"])["status"] in ("starting", "running", "finished")
    done = wait_for_job(workspace.root, JOB_KIND, ("finished", "failed"))
    assert done["status"] == "finished", done.get("error")
    at.run()
    assert "gpt-4o-mini: judged " in _plain(at.success) and "job finished" in _plain(at.success)
    assert not slow_llm.repeated_keys() and sum(slow_llm.requests_by_key.values()) == 48


def test_gt_page_shows_a_failed_judging_job_with_its_reason_and_resume(app_factory, workspace):
    build_judging_dataset(workspace, "d", restaurants=1)
    (workspace.root / "datasets" / "d" / "reviews.parquet").rename(workspace.root / "reviews.parquet.away")
    start_job(workspace, JOB_KIND, {"dataset": "d", "task": "G1a", "use_openai": False}, label="d/G1a · offline")
    failed = wait_for_job(workspace.root, JOB_KIND, ("finished", "failed"))
    assert failed["status"] == "failed"
    (workspace.root / "reviews.parquet.away").rename(workspace.root / "datasets" / "d" / "reviews.parquet")
    at = _gt(app_factory, workspace.root)
    assert "Judging job d/G1a · offline failed" in _plain(at.error)
    at.button(key="gt.job.resume").click().run()  # an offline job resumes at once
    assert not at.exception, at.exception
    done = wait_for_job(workspace.root, JOB_KIND, ("finished", "failed"))
    assert done["status"] == "finished", done.get("error")
    at.run()
    assert "heuristic-v2: judged 6 reviews" in _plain(at.success)
