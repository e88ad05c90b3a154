"""``runs import`` (xnot detailed_results.json, ADDM results.json) and runs as background jobs."""

from __future__ import annotations

import json
import time

import pytest

from core.base.errors import DataError, WorkbenchError
from core.jobs import cancel_job, list_jobs, resume_job, start_job
from core.runs import RunConfig, import_run_file, list_runs, plan_run, run_status, show_run
from tests.helpers.jobs import wait_for_status
from tests.helpers.llm_server import RUN_KEY_PATTERN, LLMServer, offline_responder


def _xnot_file(tmp_path):
    records = [
        {"restaurant": "Vetri Cucina", "verdict": {"predicted": "Low Risk", "ground_truth": "Low Risk"},
         "final_risk_score": {"predicted": 1.5, "ground_truth": 0.0},
         "n_total_incidents": {"predicted": 0, "ground_truth": 0}},
        {"restaurant": "Bliss", "verdict": {"predicted": "Low Risk", "ground_truth": "High Risk"},
         "final_risk_score": {"predicted": None, "ground_truth": 6.0}},
    ]
    path = tmp_path / "detailed_results.json"
    path.write_text(json.dumps(records))
    return path


def test_import_xnot_detailed_results_keeps_origin(workspace, tmp_path):
    path = _xnot_file(tmp_path)
    out = import_run_file(workspace, path)
    assert out["format"] == "xnot" and out["n"] == 2
    shown = show_run(workspace, out["run_id"])
    assert shown["results"]["config"]["origin"]["format"] == "xnot"
    assert len(shown["results"]["config"]["origin"]["sha256"]) == 64
    results = json.loads((workspace.runs_dir / out["run_id"] / "results.json").read_text())
    assert [s["risk_score"] for s in results["results"]] == [1.5, 0.0]  # missing → 0.0 as xnot scores it
    assert results["accuracy"] == 0.5 and results["correct"] == 1 and results["total"] == 2
    assert json.loads(results["results"][0]["response"])["n_total_incidents"]["predicted"] == 0
    assert list_runs(workspace)[0]["run_id"] == out["run_id"]
    with pytest.raises(WorkbenchError, match="exists already"):
        import_run_file(workspace, path, run_id=out["run_id"])


def test_import_addm_results_and_bad_files(workspace, tmp_path):
    addm = {"run_id": "addm run #1", "task_id": "G1a", "policy_id": "G1_allergy_V2", "method": "amos", "model": "gpt-5-nano",
            "k": 25, "n": 1, "timestamp": "2025-01-01T00:00:00", "config": {"seed": 1}, "accuracy": 1.0, "correct": 1,
            "total": 1, "results": [{"business_id": "b1", "name": "A", "verdict": "Low Risk", "risk_score": 0,
                                     "gt_verdict": "Low Risk", "correct": True, "parsed": {"verdict": "Low Risk"},
                                     "response": "{}", "prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.0,
                                     "latency_ms": 5.0, "llm_calls": 1}]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(addm))
    out = import_run_file(workspace, path)
    assert out == {"run_id": "addm-run-1", "format": "addm", "n": 1, "path": str(workspace.runs_dir / "addm-run-1" / "results.json")}
    assert show_run(workspace, "addm-run-1")["results"]["config"] == {"seed": 1, "origin": show_run(workspace, "addm-run-1")["results"]["config"]["origin"]}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"verdict": "Low Risk"}]))
    with pytest.raises(DataError, match=r"bad.json: field '\[0\]'"):
        import_run_file(workspace, bad)
    addm["results"][0]["prompt_tokens"] = -1
    path.write_text(json.dumps(addm))
    with pytest.raises(DataError, match=r"field 'results\[0\]\.prompt_tokens': expected a whole number"):
        import_run_file(workspace, path, run_id="other")
    assert not (workspace.runs_dir / "other").exists()


def test_run_job_in_its_own_process_finishes_with_progress(demo_ws):
    config = RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method="direct", k=25, run_id="job-run")
    record = start_job(demo_ws, "run", {"config": config.as_dict()}, label="direct K=25")
    assert record["pid"] and record["status"] == "starting"
    done = wait_for_status(demo_ws, record["job_id"], ("finished", "failed"))
    assert done["status"] == "finished", done.get("error")
    assert done["progress"]["done"] == done["progress"]["total"] == 12
    assert run_status(demo_ws, "job-run")["status"] == "finished"
    assert [j["job_id"] for j in list_jobs(demo_ws, "run")] == [record["job_id"]]


def test_run_job_cancel_then_resume(demo_ws, monkeypatch):
    with LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN) as server:
        server.delay_all = 0.2
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        config = RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method="direct", model="test-model",
                           k=25, concurrency=1, run_id="cancelled-run")
        plan_run(config, demo_ws)  # a valid plan before launching
        record = start_job(demo_ws, "run", {"config": config.as_dict()})
        wait_for_status(demo_ws, record["job_id"], ("running",))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (demo_ws.runs_dir / "cancelled-run" / "samples.jsonl").exists():
            time.sleep(0.05)
        assert cancel_job(demo_ws, record["job_id"])["status"] == "cancelling"
        stopped = wait_for_status(demo_ws, record["job_id"], ("cancelled", "finished", "failed"))
        assert stopped["status"] == "cancelled"
        assert run_status(demo_ws, "cancelled-run")["status"] == "cancelled"
        assert run_status(demo_ws, "cancelled-run")["done"] < 12
        resume_job(demo_ws, record["job_id"])
        assert wait_for_status(demo_ws, record["job_id"], ("finished", "failed"))["status"] == "finished"
        assert run_status(demo_ws, "cancelled-run")["done"] == 12
        assert not server.repeated_keys()  # no restaurant asked twice across cancel and resume


def test_import_xnot_explore_layout_reproduces_its_stored_auprc(workspace, tmp_path):
    runs = [{"restaurant": f"R{i}", "results": {"verdict": {"expected": gt, "predicted": pred},
                                                "final_risk_score": {"expected": 0, "predicted": score}},
             "ground_truth": {"verdict": gt}, "parsed": {}}
            for i, (gt, pred, score) in enumerate([("Low Risk", "Low Risk", 1.0), ("High Risk", "High Risk", 6.0),
                                                   ("Critical Risk", "High Risk", 9.0), ("Low Risk", "High Risk", 5.0)])]
    payload = {"timestamp": "20250101_000000", "task": "G1a", "k": 25, "n_restaurants": 4,
               "metrics": {"auprc_ge_1": 1.0, "auprc_ge_2": 1.0, "ordinal_auprc": 1.0}, "runs": runs}
    path = tmp_path / "detailed_results.json"
    path.write_text(json.dumps(payload))
    out = import_run_file(workspace, path)
    results = json.loads((workspace.runs_dir / out["run_id"] / "results.json").read_text())
    assert results["config"]["origin"]["format"] == "xnot" and results["config"]["stored_metrics"]["ordinal_auprc"] == 1.0
    assert results["auprc"]["auprc_ge_critical"] == pytest.approx(1.0)  # R2 ranks first: the only Critical
    assert results["accuracy"] == 0.5 and results["n"] == 4
