"""Runs against the local OpenAI-compatible server: faults, resume after SIGKILL, cache, concurrency,
bad input, every method's results.json against SPEC §4.2."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.base.errors import UnknownNameError, WorkbenchError
from core.llm import EndpointAuthError, workspace_cache
from core.methods import METHODS, make_model
from core.runs import RunConfig, execute_run, list_runs, plan_run, run_status, validate_results
from core.workspace import Workspace
from tests.helpers.llm_server import (
    run_server,  # noqa: F401 - the fixture
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def server(run_server):
    return run_server


def _run(ws: Workspace, method: str = "direct", *, model: str = "test-model", k: int = 25, concurrency: int = 4,
         run_id: str | None = None, timeout: float | None = None, max_retries: int | None = None, **kw):
    config = RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method=method, model=model, k=k,
                       concurrency=concurrency, run_id=run_id, **kw)
    plan = plan_run(config, ws)
    llm = make_model(model, ws, cache=workspace_cache(ws), concurrency=concurrency, timeout=timeout, max_retries=max_retries)
    return plan, execute_run(plan, llm)


def _samples(plan) -> list[dict]:
    return [json.loads(line) for line in (plan.run_dir / "samples.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("method", ["direct", "amos"])
def test_faulty_endpoint_every_sample_answered_or_carrying_its_error(demo_ws, server, method):
    server.fault_rate = 0.30
    server.fault_timeout = 1.5
    plan, status = _run(demo_ws, method, timeout=0.8, max_retries=3)
    samples = _samples(plan)
    assert status["status"] == "finished"
    assert sorted(s["business_id"] for s in samples) == sorted(r.business_id for r in plan.restaurants)
    for s in samples:
        assert s.get("error") or s["verdict"] in ("Low Risk", "High Risk", "Critical Risk"), s
    results = json.loads((plan.run_dir / "results.json").read_text())
    validate_results(results)
    assert results["n"] == 12
    # the faults were real: some calls were retried or failed for good
    assert any(e["status"] != 200 for e in server.log)
    if method == "direct":  # invalid JSON and out-of-contract answers are not retried: they stay on the sample
        errors = [s["error"] for s in samples if s.get("error")]
        assert all(e.startswith(("parse error", "out of contract", "LLM call failed")) for e in errors)


def test_cached_rerun_makes_zero_requests(demo_ws, server):
    plan, _ = _run(demo_ws, "direct")
    first = server.chat_requests
    assert first == 12
    config = RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method="direct", model="test-model", k=25)
    again = plan_run(config, demo_ws)
    assert again.preflight["cached_calls"] == 12 and again.preflight["new_calls"] == 0
    again_plan, _ = _run(demo_ws, "direct", run_id="again")
    assert server.chat_requests == first  # nothing new reached the server
    results = json.loads((again_plan.run_dir / "results.json").read_text())
    assert results["usage"]["cached_calls"] == 12


def test_never_more_than_c_requests_in_flight(demo_ws, server):
    server.delay_all = 0.05
    _run(demo_ws, "amos", concurrency=3)
    assert server.max_in_flight <= 3
    assert server.max_in_flight == 3  # and the bound is used


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_sigkill_half_way_then_resume_repeats_no_finished_sample(demo_ws, server):
    server.delay_all = 0.2
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key"}
    cmd = [sys.executable, "-m", "core", "--workspace", str(demo_ws.root), "--no-progress", "run", "--dataset", "demo",
           "--method", "direct", "--model", "test-model", "--k", "25", "--concurrency", "2", "--run-id", "killed"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log = demo_ws.runs_dir / "killed" / "samples.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 4):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = {json.loads(line)["business_id"] for line in log.read_text().splitlines() if line.strip()}
    assert 4 <= len(finished) < 12
    assert run_status(demo_ws, "killed")["status"] == "interrupted"
    (demo_ws.cache_dir / "llm.jsonl").unlink()  # skipping must come from the run's log, not the cache
    before = dict(server.requests_by_key)
    resume_cmd = [*cmd[:6], "run", "--resume", "killed"]
    resumed = subprocess.run(resume_cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    for business_id in finished:
        assert server.requests_by_key[business_id] == before[business_id] == 1
    samples = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert len(samples) == len({s["business_id"] for s in samples}) == 12
    assert run_status(demo_ws, "killed")["status"] == "finished"


def test_endpoint_refusing_the_key_fails_fast_and_writes_no_run(demo_ws, server, monkeypatch):
    server.required_key = "the-right-key"
    monkeypatch.setenv("OPENAI_API_KEY", "a-wrong-key")
    with pytest.raises(EndpointAuthError, match="refused the key"):
        _run(demo_ws, "direct", run_id="refused")
    assert not (demo_ws.runs_dir / "refused").exists()
    cli = subprocess.run(
        [sys.executable, "-m", "core", "--workspace", str(demo_ws.root), "run", "--dataset", "demo", "--method", "direct",
         "--model", "test-model", "--run-id", "refused2"],
        cwd=ROOT, env={**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "a-wrong-key"},
        capture_output=True, text=True, timeout=60)
    assert cli.returncode == 1
    error_lines = [ln for ln in cli.stderr.splitlines() if ln.startswith("error:")]
    assert len(error_lines) == 1 and "refused the key" in error_lines[0] and "a-wrong-key" not in cli.stderr
    assert not (demo_ws.runs_dir / "refused2").exists()
    assert server.chat_requests == 0


@pytest.mark.parametrize(("field", "value", "kind"), [
    ("dataset", "nope", "dataset"), ("task", "G9z", "task"), ("policy", "G1_allergy_V9", "policy"),
    ("method", "magic", "method"), ("model", "gpt-9-ultra", "model"),
])
def test_unknown_names_list_the_valid_ones(demo_ws, monkeypatch, field, value, kind):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    values = {"dataset": "demo", "task": "G1a", "policy": "G1_allergy_V2", "method": "direct", "model": "gpt-4o-mini"}
    values[field] = value
    with pytest.raises(UnknownNameError) as info:
        plan_run(RunConfig(**values), demo_ws)
    assert info.value.kind == kind and "valid:" in str(info.value)
    assert not demo_ws.runs_dir.exists() or not any(demo_ws.runs_dir.iterdir())


def test_k_above_reviews_stored_warns(demo_ws):
    plan = plan_run(RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method="keyword", k=500), demo_ws)
    assert any("above the reviews stored for 12 of 12" in w for w in plan.warnings)


@pytest.mark.parametrize("method", METHODS.names())
def test_every_method_results_validate_against_spec(demo_ws, method):
    plan, status = _run(demo_ws, method, model="heuristic", k=50)
    assert status["status"] == "finished" and status["errors"] == 0
    results = json.loads((plan.run_dir / "results.json").read_text())
    validate_results(results)
    assert results["method"] == method and results["n"] == 12 and results["total"] == 12
    gt = results["gt"]  # computed from the demo's judgments now (the default), kept with the run as gt.json
    assert (gt["origin"], gt["judge"], gt["k"], gt["definition"]["name"]) == ("computed", "heuristic-v2", 50, "G1_allergy_V2")
    kept = (plan.run_dir / "gt.json").read_bytes()
    assert gt["snapshot"] == "gt.json" and gt["snapshot_sha256"] == hashlib.sha256(kept).hexdigest()
    exported = json.loads((demo_ws.gt_dir / "demo/G1a/G1_allergy_V2_K50_groundtruth.json").read_text())
    assert json.loads(kept)["restaurants"] == exported["restaurants"]  # the demo's exported file: same inputs
    assert all(s["gt_verdict"] in ("Low Risk", "High Risk", "Critical Risk") for s in results["results"])
    if METHODS[method].uses_llm:  # the offline model says so on every sample
        assert results["offline"] is True
        assert all(s["offline"] and "offline" in s["model_note"] for s in results["results"])
    assert set(results["unified_scores"]) == {"auprc", "process_score", "consistency_score"}
    if method in ("direct", "amos"):  # the offline model cites verbatim snippets and scores with the policy
        components = results["unified_metrics_full"]["process_components"]
        assert components["snippet_validity"] == 1.0 and results["unified_scores"]["consistency_score"] == 100.0
    rows = {r["run_id"]: r for r in list_runs(demo_ws)}
    assert rows[plan.run_id]["status"] == "finished"


def test_schema_check_names_the_broken_field(demo_ws):
    plan, _ = _run(demo_ws, "random", model="heuristic")
    results = json.loads((plan.run_dir / "results.json").read_text())
    results["results"][3]["prompt_tokens"] = "many"
    with pytest.raises(WorkbenchError, match="results/3/prompt_tokens"):
        validate_results(results)


def test_random_baseline_is_seeded_and_independent_of_the_other_samples(demo_ws):
    a, _ = _run(demo_ws, "random", model="heuristic", seed=7)
    b, _ = _run(demo_ws, "random", model="heuristic", seed=7, n=5)
    by_a = {s["business_id"]: s["risk_score"] for s in _samples(a)}
    assert all(by_a[s["business_id"]] == s["risk_score"] for s in _samples(b))
    c, _ = _run(demo_ws, "random", model="heuristic", seed=8)
    assert {s["business_id"]: s["risk_score"] for s in _samples(c)} != by_a


def test_amos_extractions_share_the_cache_with_the_openai_judge(demo_ws, server):
    from core.judgments.judges import execute_judging, make_judge, plan_judging
    from core.tasks import get_task

    judge = make_judge("openai", get_task("G1a", None), model="test-model", cache=workspace_cache(demo_ws))
    execute_judging(plan_judging(demo_ws, "demo", "G1a", judge, resume=False), judge)
    judged = server.chat_requests
    config = RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method="amos", model="test-model", k=200)
    plan = plan_run(config, demo_ws)
    assert plan.preflight["cached_calls"] == judged and plan.preflight["new_calls"] == 1  # only the compile call
    execute_run(plan, make_model("test-model", demo_ws, cache=workspace_cache(demo_ws)))
    assert server.chat_requests == judged + 1


def test_rag_with_embeddings_retrieves_by_similarity_and_caches(demo_ws, server):
    plan, status = _run(demo_ws, "rag", k=100, options={"embedding_model": "test-embed", "rag_top": 5})
    assert status["status"] == "finished" and status["errors"] == 0
    assert server.embedding_requests == 12  # one per restaurant (query and reviews together)
    for s in _samples(plan):
        prompt = server.last_request[s["business_id"]]["messages"][-1]["content"]
        assert prompt.count("[Review ID: ") == 5
    _run(demo_ws, "rag", k=100, options={"embedding_model": "test-embed", "rag_top": 5})
    assert server.embedding_requests == 12  # the re-run's embeddings come from the cache


def test_a_run_answered_by_the_cache_reaches_no_endpoint_and_never_imports_openai(demo_ws, server):
    first, status = _run(demo_ws, "direct", run_id="first")
    assert status["status"] == "finished" and server.chat_requests > 0
    asked = server.chat_requests
    code = ("import sys; from core.cli import main; code = main(['--workspace', sys.argv[1], '--json', '--no-progress', "
            "'run', '--dataset', 'demo', '--method', 'direct', '--model', 'test-model', '--k', '25', "
            "'--run-id', 'again']); print(code, 'openai' in sys.modules, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(demo_ws.root)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.stderr.strip().splitlines()[-1] == "0 False", proc.stderr
    info = json.loads(proc.stdout)
    assert info["preflight"]["new_calls"] == 0 and info["status"]["calls_new"] == 0
    assert server.chat_requests == asked  # and no key check: that would have imported openai
    again = json.loads((demo_ws.runs_dir / "again" / "results.json").read_text())
    before = json.loads((first.run_dir / "results.json").read_text())["results"]
    assert [(r["business_id"], r["verdict"], r["risk_score"]) for r in again["results"]] == [
        (r["business_id"], r["verdict"], r["risk_score"]) for r in before]
