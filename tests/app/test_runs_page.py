"""Runs page through AppTest: pre-flight, launch with the offline model, live progress, completion,
cancel and resume (a background job per run, against the local OpenAI-compatible server)."""

from __future__ import annotations

import shutil
import time

import pytest

from core.jobs import list_jobs
from core.runs import run_status
from core.workspace import Workspace
from tests.helpers.llm_server import RUN_KEY_PATTERN, LLMServer, offline_responder

PAGE = "app_pages/runs.py"


@pytest.fixture()
def ws_copy(small_demo, tmp_path):
    target = tmp_path / "ws"
    shutil.copytree(small_demo, target, ignore=shutil.ignore_patterns("jobs", "cache"))
    return target


def _page(app_factory, root):
    at = app_factory(root).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def _wait_job(root, statuses, timeout=60.0):
    ws = Workspace(root)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = list_jobs(ws, "run")
        if jobs and jobs[0]["status"] in statuses:
            return jobs[0]
        time.sleep(0.1)
    raise AssertionError(f"job status {[j['status'] for j in list_jobs(ws, 'run')]}")


def test_launch_offline_run_shows_preflight_and_completes(app_factory, ws_copy):
    at = _page(app_factory, ws_copy)
    assert at.title[0].value == "Runs"
    at.selectbox(key="runs.method").set_value("amos").run()
    labels = {m.label: m.value for m in at.metric}
    assert labels["Samples to run"] == "12" and labels["LLM calls"] == "none: an offline model answers"
    before = {r["run_id"] for r in at.dataframe[0].value.to_dict("records")} if at.dataframe else set()
    at.button(key="runs.launch").click().run()
    assert not at.exception, at.exception
    job = _wait_job(ws_copy, ("finished", "failed"))
    assert job["status"] == "finished", job.get("error")
    at.run()
    rows = {r["run_id"]: r for r in at.dataframe[0].value.to_dict("records")}
    new = set(rows) - before
    assert len(new) == 1
    row = rows[new.pop()]
    assert row["status"] == "finished" and row["method"] == "amos" and row["done"] == 12
    assert row["results"] == f"/results?run={row['run_id']}"


def test_progress_cancel_and_resume(app_factory, ws_copy, monkeypatch):
    with LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN) as server:
        server.delay_all = 0.25
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("WORKBENCH_MODELS", "test-model")
        at = _page(app_factory, ws_copy)
        at.selectbox(key="runs.method").set_value("direct")
        at.selectbox(key="runs.model").set_value("test-model")
        at.number_input(key="runs.concurrency").set_value(1).run()
        labels = {m.label: m.value for m in at.metric}
        assert labels["Calls cached / new"] == "0 / 12"
        at.button(key="runs.launch").click().run()
        job = _wait_job(ws_copy, ("running",))
        run_id = job["args"]["config"]["run_id"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and int(run_status(Workspace(ws_copy), run_id).get("done") or 0) < 2:
            time.sleep(0.05)
        at.run()
        bars = [p for p in at.get("progress")]
        assert bars and run_id in bars[0].proto.text and "samples" in bars[0].proto.text
        cancel = [b for b in at.button if b.key.startswith("runs.cancel.")]
        cancel[0].click().run()
        assert _wait_job(ws_copy, ("cancelled", "finished", "failed"))["status"] == "cancelled"
        status = run_status(Workspace(ws_copy), run_id)
        assert status["status"] == "cancelled" and status["done"] < 12
        at.run()
        assert at.selectbox(key="runs.resume_choice").value == run_id
        at.button(key="runs.resume").click().run()
        assert _wait_job(ws_copy, ("finished", "failed"))["status"] == "finished"
        assert run_status(Workspace(ws_copy), run_id)["done"] == 12
        assert not server.repeated_keys()  # no restaurant was asked twice across cancel and resume


def test_hosted_demo_offers_only_the_offline_model_and_shows_prompts(app_factory, small_demo, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOSTED", "1")
    monkeypatch.setenv("WORKBENCH_ADMINS", "admin@example.org")
    at = _page(app_factory, small_demo)
    assert at.selectbox(key="runs.model").options == ["heuristic"]
    assert any("Hosted demo" in c.value for c in at.caption)
    at.selectbox(key="runs.method").set_value("cot").run()
    assert any("Prompt cot.v1" in e.label for e in at.expander)
    assert "reasoning" in at.code[0].value and "$policy_text" in at.code[0].value
