"""Runs page through AppTest: pre-flight, launch with the offline model, live progress, completion,
cancel and resume (a background job per run, against the local OpenAI-compatible server)."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from core.base.files import write_json_atomic
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
    assert row["status"] == "finished" and row["method"] == "amos" and row["done"] == "12"  # done and failed share a cell
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


# -- issue 26: shared servers and spend ---------------------------------------------------------------
def _running_job(root, job_id: str, run_id: str, owner: str) -> None:
    """A run job going (this test process's pid stands for its worker), launched by ``owner``."""
    ws = Workspace(root)
    ws.jobs_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(ws.jobs_dir / f"{job_id}.json", {
        "job_id": job_id, "kind": "run", "label": "", "args": {"config": {"run_id": run_id}, "owner": owner},
        "status": "running", "pid": os.getpid(), "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00", "progress": {}, "result": None, "error": None})
    (ws.runs_dir / run_id).mkdir(parents=True, exist_ok=True)
    write_json_atomic(ws.runs_dir / run_id / "status.json", {"run_id": run_id, "status": "running", "done": 3,
                                                             "total": 12, "pid": os.getpid()})


def test_demo_visitor_cannot_cancel_another_visitors_run(app_factory, ws_copy, monkeypatch):
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    _running_job(ws_copy, "job-a", "run-of-a", "visitor:aaaa")
    _running_job(ws_copy, "job-b", "run-of-b", "visitor:bbbb")
    at = app_factory(ws_copy)
    at.session_state["runs.visitor"] = "bbbb"  # this session is visitor B
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    theirs, mine = at.button(key="runs.cancel.job-a"), at.button(key="runs.cancel.job-b")
    assert theirs.disabled and not mine.disabled
    assert any("launched by another visitor: only they (or an admin) may cancel it" in c.value for c in at.caption)
    assert "another visitor" in theirs.help  # a forged click is refused by glue.cancel too (test_runs_owners)
    at.button(key="runs.cancel.job-b").click().run()
    assert (Workspace(ws_copy).jobs_dir / "job-b.cancel").exists()
    ids = {r["run_id"] for r in at.dataframe[0].value.to_dict("records")}
    assert "run-of-b" in ids and "run-of-a" not in ids  # other visitors' runs are not listed


def test_server_cap_on_runs_going_refuses_a_launch_at_once(app_factory, ws_copy, monkeypatch):
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    monkeypatch.setenv("WORKBENCH_MAX_RUNS", "1")
    _running_job(ws_copy, "job-a", "run-of-a", "visitor:aaaa")
    at = _page(app_factory, ws_copy)
    at.button(key="runs.launch").click().run()
    assert [e.value for e in at.error] == ["This server runs at most 1 runs at once and 1 are going: "
                                           "try again when one has finished."]
    assert [j["job_id"] for j in list_jobs(Workspace(ws_copy), "run")] == ["job-a"]


def test_a_model_not_built_in_is_the_model_used_with_its_price_and_a_paid_run_is_confirmed(app_factory, ws_copy,
                                                                                      monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://llm.example.invalid/v1")  # remote: priced, never called here
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    at = _page(app_factory, ws_copy)
    at.selectbox(key="runs.method").set_value("direct").run()
    at.session_state["runs.listed_models"] = ["my-own-model"]  # as listed from /models (AppTest cannot type)
    at.run()
    at.selectbox(key="runs.model").set_value("my-own-model").run()
    assert "Model used: my-own-model · no price: give one, or run it knowingly without one" in [t.value for t in at.text]
    assert any(e.value.startswith("unknown model 'my-own-model'") and "it has no price: give its price" in e.value
               for e in at.error)  # nothing launches yet
    assert all(b.key != "runs.launch" for b in at.button)
    at.text_input(key="runs.price").set_value("1,2").run()
    assert "Model used: my-own-model · price $1 / $2 per million input / output tokens" in [t.value for t in at.text]
    cost = {m.label: m.value for m in at.metric}["Estimated cost, at most"]
    at.button(key="runs.launch").click().run()
    warning = at.warning[-1].value
    assert warning.startswith("Paid run: 12 new calls to my-own-model: estimated $") and ", no cap" in warning
    assert f"–{cost}, no cap" in warning and not list_jobs(Workspace(ws_copy), "run")  # nothing sent yet
    at.button(key="runs.launch_back").click().run()
    assert not at.warning or not at.warning[-1].value.startswith("Paid run")


def test_models_listed_from_the_endpoint_and_failed_samples_retried(app_factory, ws_copy, monkeypatch):
    from core.llm import workspace_cache
    from core.methods import make_model
    from core.runs import RunConfig, execute_run, plan_run
    from tests.helpers.llm_server import raw_content

    with LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        ws = Workspace(ws_copy)
        config = RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method="direct", model="test-model",
                           n=3, run_id="with-errors", concurrency=1, price=(1.0, 2.0))  # priced: an estimate
        bid = plan_run(config, ws).restaurants[0].business_id
        server.add_faults(bid, raw_content("not json"))
        execute_run(plan_run(config, ws), make_model("test-model", ws, cache=workspace_cache(ws), price=config.price))
        at = _page(app_factory, ws_copy)
        assert "test-model" not in at.selectbox(key="runs.model").options
        at.selectbox(key="runs.method").set_value("direct").run()
        at.button(key="runs.list_models").click().run()
        assert "test-model" in at.selectbox(key="runs.model").options  # the local server's /models
        row = {r["run_id"]: r for r in at.dataframe[0].value.to_dict("records")}["with-errors"]
        low, high = (float(x) for x in row["estimate"].replace("$", "").split("–"))
        assert row["errors"] == 1 and row["calls"] == "0 / 3" and 0 < low < high and 0 < row["cost_usd"] <= high
        at.selectbox(key="runs.retry_choice").set_value("with-errors")
        at.selectbox(key="runs.retry_kind").set_value("model")
        at.button(key="runs.retry").click().run()
        assert not at.exception and not at.error
        assert _wait_job(ws_copy, ("finished", "failed"))["status"] == "finished"
        assert run_status(ws, "with-errors")["errors"] == 0 and server.requests_by_key[bid] == 2
        assert not {k: n for k, n in server.requests_by_key.items() if k != bid and n > 1}  # only the failed one
