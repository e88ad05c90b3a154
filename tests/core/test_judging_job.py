"""Judging as a background job (``judge`` kind of core.jobs): start, progress record, cancel, resume.

The worker is a real ``python -m core jobs work`` process; the OpenAI-compatible judge talks to the
local server tests/helpers/llm_server.py, which counts every request per review, so the test can prove that a
cancelled and resumed job asked no review twice.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from core.base.errors import WorkbenchError
from core.cli import main
from core.jobs import cancel_job, list_jobs, read_job, resume_job, start_job
from core.judgments import judged_keys
from core.judgments.judges.job import JOB_KIND
from tests.helpers.jobs import slow_judge_llm, wait_for_status
from tests.helpers.judging_dataset import build_judging_dataset


def _wait_judged(ws, job_id, n, timeout=60.0):
    """The record once its progress says at least ``n`` reviews are judged."""
    deadline = time.monotonic() + timeout
    record = read_job(ws, job_id)
    while time.monotonic() < deadline and (record["progress"].get("done") or 0) < n:
        time.sleep(0.05)
        record = read_job(ws, job_id)
    return record


def test_offline_judge_job_finishes_in_its_own_process(workspace):
    matched = build_judging_dataset(workspace, "d", restaurants=2)  # 2 restaurants × 6 allergy reviews
    record = start_job(workspace, JOB_KIND, {"dataset": "d", "task": "G1a", "use_openai": False}, label="d/G1a")
    assert record["status"] == "starting" and record["pid"]
    done = wait_for_status(workspace, record["job_id"], ("finished", "failed"))
    assert done["status"] == "finished", done.get("error")
    assert done["result"]["judge"] == "heuristic-v2" and done["result"]["judged"] == len(matched) == 12
    assert done["progress"] == {"done": 12, "total": 12, "message": "finished", "final": True}
    assert len(judged_keys(workspace, "d", "G1a", "heuristic-v2")) == 12
    assert [j["job_id"] for j in list_jobs(workspace, "judge")] == [record["job_id"]]
    assert list_jobs(workspace, "run") == []
    again = start_job(workspace, JOB_KIND, {"dataset": "d", "task": "G1a", "use_openai": False})
    assert wait_for_status(workspace, again["job_id"], ("finished", "failed"))["result"]["skipped_already_judged"] == 12
    with pytest.raises(WorkbenchError, match="is finished: nothing to resume"):
        resume_job(workspace, again["job_id"])


def test_judge_job_with_a_bad_task_fails_with_the_reason(workspace):
    build_judging_dataset(workspace, "d", restaurants=1)
    record = start_job(workspace, JOB_KIND, {"dataset": "d", "task": "NoSuchTask", "use_openai": False})
    failed = wait_for_status(workspace, record["job_id"], ("finished", "failed"))
    assert failed["status"] == "failed" and "NoSuchTask" in failed["error"]
    assert list_jobs(workspace, "judge")[0]["error"] == failed["error"]
    assert not (workspace.root / "judgments" / "d" / "NoSuchTask").exists()


@pytest.fixture()
def slow_llm(monkeypatch):
    yield from slow_judge_llm(monkeypatch, 0.25)


def test_openai_judge_job_reports_progress_cancels_and_resumes_without_repeating_a_call(workspace, slow_llm):
    build_judging_dataset(workspace, "d", restaurants=8)  # 48 keyword-matched reviews
    record = start_job(workspace, JOB_KIND, {"dataset": "d", "task": "G1a", "use_openai": True})
    job_id = record["job_id"]
    running = _wait_judged(workspace, job_id, 4)
    assert running["status"] == "running" and running["progress"]["total"] == 48  # progress from the record
    assert 4 <= running["progress"]["done"] < 48 and "judging" in running["progress"]["message"]
    assert cancel_job(workspace, job_id)["status"] == "cancelling"
    assert read_job(workspace, job_id)["status"] in ("cancelling", "cancelled")
    stopped = wait_for_status(workspace, job_id, ("cancelled", "finished", "failed"))
    assert stopped["status"] == "cancelled" and stopped["result"]["cancelled"]
    first = stopped["result"]["judged"]
    assert 4 <= first < 48
    asked = sum(slow_llm.requests_by_key.values())
    assert asked == first  # every call in flight at the cancel was waited for and stored
    assert len(judged_keys(workspace, "d", "G1a", "gpt-4o-mini")) == first

    assert resume_job(workspace, job_id)["status"] == "starting"
    finished = wait_for_status(workspace, job_id, ("finished", "failed", "cancelled"))
    assert finished["status"] == "finished", finished.get("error")
    assert finished["result"]["judged"] == 48 - first and finished["result"]["skipped_already_judged"] == first
    assert not slow_llm.repeated_keys()  # no review asked twice across cancel and resume
    assert sum(slow_llm.requests_by_key.values()) == 48
    assert len(judged_keys(workspace, "d", "G1a", "gpt-4o-mini")) == 48


def test_cli_lists_shows_cancels_and_resumes_jobs_of_both_kinds(workspace, slow_llm, capsys):
    build_judging_dataset(workspace, "d", restaurants=8)  # 48 keyword-matched reviews
    root = str(workspace.root)
    assert main(["--workspace", root, "jobs", "list"]) == 0  # imports every command module before the clock runs
    assert capsys.readouterr().out.strip() == "no jobs"
    record = start_job(workspace, JOB_KIND, {"dataset": "d", "task": "G1a", "use_openai": True}, label="d/G1a · LLM")
    job_id = record["job_id"]
    assert _wait_judged(workspace, job_id, 1)["status"] == "running"
    assert main(["--workspace", root, "jobs", "cancel", job_id]) == 0
    assert f"job {job_id}: cancelling" in capsys.readouterr().out
    wait_for_status(workspace, job_id, ("cancelled",))
    assert main(["--workspace", root, "jobs", "list", "--kind", "judge"]) == 0
    out = capsys.readouterr().out
    assert job_id in out and "judge" in out and "cancelled" in out and "d/G1a · LLM" in out
    assert main(["--workspace", root, "jobs", "list", "--kind", "run"]) == 0
    assert capsys.readouterr().out.strip() == "no jobs"
    assert main(["--workspace", root, "--json", "jobs", "show", job_id]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["kind"] == "judge" and shown["status"] == "cancelled" and shown["args"]["use_openai"] is True
    assert main(["--workspace", root, "jobs", "resume", job_id]) == 0
    assert f"job {job_id}: starting" in capsys.readouterr().out
    assert wait_for_status(workspace, job_id, ("finished", "failed"))["status"] == "finished"
    assert not slow_llm.repeated_keys()
    assert main(["--workspace", root, "jobs", "resume", job_id]) == 1
    assert "nothing to resume" in capsys.readouterr().err


def test_killed_judge_worker_reads_as_interrupted_and_its_resume_asks_only_what_was_not_stored(workspace, slow_llm):
    build_judging_dataset(workspace, "d", restaurants=8)  # 48 keyword-matched reviews
    record = start_job(workspace, JOB_KIND, {"dataset": "d", "task": "G1a", "use_openai": True})
    running = _wait_judged(workspace, record["job_id"], 4)
    os.kill(running["pid"], signal.SIGKILL)  # no clean-up at all: the calls in flight are lost
    interrupted = wait_for_status(workspace, record["job_id"], ("interrupted",))
    stored = len(judged_keys(workspace, "d", "G1a", "gpt-4o-mini"))
    assert 4 <= stored < 48 and interrupted["progress"]["done"] <= stored  # every answer received was stored
    asked_before = sum(slow_llm.requests_by_key.values())
    resume_job(workspace, record["job_id"])
    done = wait_for_status(workspace, record["job_id"], ("finished", "failed"))
    assert done["status"] == "finished", done.get("error")
    assert done["result"]["skipped_already_judged"] == stored and done["result"]["judged"] == 48 - stored
    # the resume asked at most the reviews without a stored judgment: no finished call again. A call in
    # flight at the kill is asked again, unless its answer reached the response cache before the kill
    # (then the resume takes it from there), so a few fewer may be asked, never more.
    asked_by_resume = sum(slow_llm.requests_by_key.values()) - asked_before
    assert 48 - stored - 8 <= asked_by_resume <= 48 - stored
    assert len(judged_keys(workspace, "d", "G1a", "gpt-4o-mini")) == 48
