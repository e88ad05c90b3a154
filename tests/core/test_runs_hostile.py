"""Issue 26, runs half: one process per run, endpoints that stall or flood a run, answers that are
not what they seem. Each test fails on main c01970d."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from core.jobs import start_job
from core.llm import ResponseCache, parse_json_loose, workspace_cache
from core.methods import make_model
from core.runs import RunConfig, cancel_run, execute_run, plan_run, run_status
from core.workspace import Workspace
from core.workspace.locks import LockBusyError
from tests.helpers.llm_server import (
    LLMServer,
    drip,
    huge_answer,
    raw_content,
    retry_after,
    run_server,  # noqa: F401 - the fixture
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def server(run_server):
    return run_server


def _config(**kw) -> RunConfig:
    values = {"dataset": "demo", "task": "G1a", "policy": "G1_allergy_V2", "method": "direct", "model": "test-model",
              "k": 25, "concurrency": 2, **kw}
    return RunConfig(**values)


def _execute(ws: Workspace, config: RunConfig, *, timeout: float | None = None, max_retries: int | None = None,
             resume: bool = False, retry_errors: str | None = None):
    plan = plan_run(config, ws, resume=resume, retry_errors=retry_errors)
    llm = make_model(config.model, ws, cache=workspace_cache(ws), concurrency=config.concurrency, timeout=timeout,
                     max_retries=max_retries, price=config.price)
    return plan, execute_run(plan, llm)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _cli(ws: Workspace, server: LLMServer, *args: str, wait: bool = True, **env: str):
    cmd = [sys.executable, "-m", "core", "--workspace", str(ws.root), "--no-progress", "run", *args]
    full_env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key", **env}
    if not wait:
        return subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=180)


def _wait_for(predicate, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached within {timeout} s")


# -- Medium 3: one process per run -----------------------------------------------------------------
def test_a_second_start_of_a_running_run_fails_at_once_and_nothing_is_paid_twice(demo_ws, server):
    server.close_gate()  # the first run waits on its first answer until the others have been refused
    run = ["--dataset", "demo", "--method", "direct", "--model", "test-model", "--concurrency", "1", "-n", "6",
           "--run-id", "x"]
    # the gate holds its first call while the others start (minutes on a loaded machine): no timeout retry meanwhile
    first = _cli(demo_ws, server, *run, wait=False, WORKBENCH_LLM_TIMEOUT="900")
    log = demo_ws.runs_dir / "x" / "samples.jsonl"
    _wait_for(lambda: run_status(demo_ws, "x").get("status") == "running", timeout=120, what="the first run running")
    others = [_cli(demo_ws, server, *run, wait=False), _cli(demo_ws, server, "--resume", "x", wait=False)]
    for second in others:
        assert second.wait(timeout=120) == 1, second.stdout.read()
        assert f"run 'x' is already running (pid {first.pid})" in second.stderr.read()
    with pytest.raises(LockBusyError, match="already running"):  # the Runs page's Resume and `jobs work`
        start_job(demo_ws, "run", {"resume": "x"})
    server.open_gate()
    assert first.wait(timeout=120) == 0, first.stderr.read()
    samples = _lines(log)
    assert len(samples) == len({s["business_id"] for s in samples}) == 6  # no duplicate line
    assert server.repeated_keys() == {}  # every sample asked (and paid) once


def test_the_same_configuration_running_is_said_before_launching(demo_ws, server):
    server.close_gate()
    proc = _cli(demo_ws, server, "--dataset", "demo", "--method", "direct", "--model", "test-model", "--concurrency", "1",
                "--run-id", "first", wait=False)
    try:
        _wait_for(lambda: run_status(demo_ws, "first").get("status") == "running", timeout=120, what="the first run running")
        plan = plan_run(_config(concurrency=4), demo_ws)
        assert any("run first with the same configuration is in progress" in w for w in plan.warnings)
        assert not any("same configuration" in w for w in plan_run(_config(k=50), demo_ws).warnings)
    finally:
        proc.kill()
        proc.wait()
        server.open_gate()


def test_two_workers_of_one_job_the_second_fails_and_leaves_the_record(demo_ws, server):
    from core.jobs import read_job, work

    server.close_gate()
    record = start_job(demo_ws, "run", {"config": {**_config(concurrency=1).as_dict(), "run_id": "jobrun"}})
    _wait_for(lambda: read_job(demo_ws, record["job_id"])["status"] == "running", timeout=120, what="the job running")
    with pytest.raises(LockBusyError, match="already running"):
        work(demo_ws, record["job_id"])
    assert read_job(demo_ws, record["job_id"])["pid"] == record["pid"]
    server.open_gate()
    _wait_for(lambda: read_job(demo_ws, record["job_id"])["status"] == "finished", timeout=120, what="the job finished")


# -- Medium 4: an endpoint cannot stall or flood a run ----------------------------------------------
def test_retry_after_inf_or_an_hour_is_capped(demo_ws, server, monkeypatch):
    monkeypatch.setenv("WORKBENCH_LLM_MAX_RETRY_AFTER", "0.5")
    bid = plan_run(_config(n=1), demo_ws).restaurants[0].business_id
    server.add_faults(bid, retry_after("inf"), retry_after("3600"))
    started = time.monotonic()
    plan, status = _execute(demo_ws, _config(n=1), max_retries=3)
    assert time.monotonic() - started < 20
    assert status["status"] == "finished" and status["errors"] == 0
    assert server.requests_by_key[bid] == 3


def test_a_run_stalled_on_retry_after_is_cancelled(demo_ws, server, monkeypatch):
    monkeypatch.setenv("WORKBENCH_LLM_MAX_RETRY_AFTER", "3600")  # honoured: only the cancel can end it
    monkeypatch.setenv("WORKBENCH_CANCEL_GRACE", "0.5")
    server.add_faults(None, *[retry_after("3600")] * 4)
    config = _config(n=2, run_id="stalled")
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(status=_execute(demo_ws, config, max_retries=5)[1]))
    thread.start()
    _wait_for(lambda: len(server.log) >= 2, what="both samples waiting on retry-after")
    _wait_for(lambda: run_status(demo_ws, "stalled").get("status") == "running", what="status running")
    asked = time.monotonic()
    assert cancel_run(demo_ws, "stalled")["cancelled"]
    thread.join(timeout=30)
    assert not thread.is_alive(), "the cancel did not stop a run waiting on retry-after: 3600"
    assert time.monotonic() - asked < 10
    assert out["status"]["status"] == "cancelled"
    assert not (demo_ws.runs_dir / "stalled" / "samples.jsonl").exists()  # nothing answered, nothing recorded


def test_an_endpoint_dripping_bytes_hits_the_overall_deadline(demo_ws, server):
    bid = plan_run(_config(n=1), demo_ws).restaurants[0].business_id
    server.add_faults(bid, drip(0.5))  # one byte every 0.5 s: never 2 s between two bytes
    started = time.monotonic()
    plan, status = _execute(demo_ws, _config(n=1), timeout=2.0, max_retries=0)
    assert time.monotonic() - started < 10
    sample = _lines(plan.run_dir / "samples.jsonl")[0]
    assert "deadline" in sample["error"] and sample["error_kind"] == "transport"


def test_a_huge_answer_is_an_error_and_nothing_huge_is_stored(demo_ws, server):
    bid = plan_run(_config(n=1), demo_ws).restaurants[0].business_id
    server.add_faults(bid, huge_answer(3_000_000))
    plan, status = _execute(demo_ws, _config(n=1), max_retries=0)
    sample = _lines(plan.run_dir / "samples.jsonl")[0]
    assert "larger than 1,000,000 bytes" in sample["error"] and sample["error_kind"] == "model"
    cache = demo_ws.cache_dir / "llm.jsonl"
    assert not cache.exists() or cache.stat().st_size < 100_000
    assert sum(p.stat().st_size for p in plan.run_dir.rglob("*") if p.is_file()) < 200_000
    assert server.requests_by_key[bid] == 1  # not retried: it would be paid again


def test_the_cache_is_read_by_line_not_loaded_whole(tmp_path):
    path = tmp_path / "llm.jsonl"
    writer = ResponseCache(path)
    for i in range(300):
        writer.put(f"k{i}", {"content": f"{i}:" + "y" * 20_000})  # 6 MB of answers
    reader = ResponseCache(path)
    tracemalloc.start()
    try:
        assert reader.get("k7")["content"].startswith("7:") and reader.get("k299")["content"].startswith("299:")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak  # an index and two answers, not 6 MB
    other = ResponseCache(path)
    assert other.get("late") is None
    writer.put("late", {"content": "z"})  # another process's answer, stored after this one looked
    assert other.get("late")["content"] == "z"


# -- Low: a truncated answer is an error, retried, and counted the same everywhere -------------------
def test_a_truncated_answer_is_not_parsed_into_its_first_inner_object():
    truncated = '{"verdict": "High Risk", "risk_score": 4, "evidences": [{"review_id": "r1", "snippet": "nut"}, {"revi'
    parsed, error = parse_json_loose(truncated)
    assert parsed is None and error.startswith("truncated JSON")
    assert parse_json_loose('{"risk_score": NaN, "verdict": "Low Risk"}')[0] is None


def test_a_truncated_answer_is_not_cached_and_a_resume_retrying_model_errors_asks_again(demo_ws, server):
    config = _config(n=3, run_id="trunc")
    bid = plan_run(config, demo_ws).restaurants[1].business_id
    server.add_faults(bid, raw_content('{"verdict": "High Risk", "evidences": [{"review_id": "x", "snippet": "a"}, {"rev'))
    plan, status = _execute(demo_ws, config)
    assert status["errors"] == status["errors_model"] == 1
    results = json.loads((plan.run_dir / "results.json").read_text())
    assert results["errors"] == 1
    again = plan_run(config, demo_ws, resume=True)
    assert again.preflight["to_run"] == 0  # a plain resume keeps it
    plan, status = _execute(demo_ws, config, resume=True)
    assert status["errors"] == 1 == json.loads((plan.run_dir / "results.json").read_text())["errors"]
    plan, status = _execute(demo_ws, config, resume=True, retry_errors="model")
    assert status["errors"] == 0 and server.requests_by_key[bid] == 2
    assert json.loads((plan.run_dir / "results.json").read_text())["errors"] == 0


def test_a_nan_risk_score_from_the_model_is_an_error_and_every_file_is_json(demo_ws, server):
    config = _config(n=2, run_id="nan")
    bid = plan_run(config, demo_ws).restaurants[0].business_id
    server.add_faults(bid, raw_content('{"verdict": "Low Risk", "risk_score": NaN, "evidences": []}'))
    plan, status = _execute(demo_ws, config)
    sample = {s["business_id"]: s for s in _lines(plan.run_dir / "samples.jsonl")}[bid]
    assert sample["error"].startswith("parse error") and sample["risk_score"] is None
    def strict(name: str) -> None:
        raise AssertionError(f"{name} written into a JSON file")

    for name in ("samples.jsonl", "results.json", "status.json", "summary.json"):
        text = (plan.run_dir / name).read_text()
        for document in text.splitlines() if name.endswith(".jsonl") else [text]:
            if document.strip():
                json.loads(document, parse_constant=strict)


def test_every_sample_failing_exits_3_like_judge(demo_ws, server):
    server.add_faults(None, *[raw_content("not json")] * 12)
    out = _cli(demo_ws, server, "--dataset", "demo", "--method", "direct", "--model", "test-model", "-n", "2")
    assert out.returncode == 3, out.stderr
    assert "2 with an error (0 transport, 2 model)" in out.stdout


# -- Spend: a hard cap per run ----------------------------------------------------------------------
def test_max_cost_stops_at_the_cap_resumes_and_never_exceeds_it(demo_ws, server):
    """Priced at $2 / $4 per million tokens a sample costs about half a cent (bounded above at about
    1.4 cents before it starts): a 2-cent cap stops the run part-way as a resumable cancelled run;
    a resume under the same cap stays under it; one under 10 cents finishes, repeating nothing."""
    def spent() -> float:
        return sum(s["cost_usd"] for s in _lines(demo_ws.runs_dir / "capped" / "samples.jsonl"))

    base = ("--dataset", "demo", "--method", "direct", "--model", "test-model", "-n", "6", "--run-id", "capped",
            "--price", "2,4", "--concurrency", "2")
    out = _cli(demo_ws, server, *base, "--max-cost", "0.02")
    assert out.returncode == 3, out.stderr
    status = run_status(demo_ws, "capped")
    assert status["status"] == "cancelled" and status["stopped_at_cap"] and 0 < status["done"] < 6, status
    assert 0 < spent() <= 0.02 and "stopped at the spending cap $0.0200" in out.stdout
    out = _cli(demo_ws, server, "--resume", "capped", "--max-cost", "0.02")
    assert out.returncode == 3 and spent() <= 0.02 and run_status(demo_ws, "capped")["done"] < 6
    out = _cli(demo_ws, server, "--resume", "capped", "--max-cost", "0.10")
    assert out.returncode == 0, out.stdout + out.stderr
    samples = _lines(demo_ws.runs_dir / "capped" / "samples.jsonl")
    assert len({s["business_id"] for s in samples}) == len(samples) == 6
    assert spent() <= 0.10 and server.repeated_keys() == {}
