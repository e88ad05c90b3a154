"""Batch mode against the local server: submit, poll, collect, resume; same judgments as on-demand."""

from __future__ import annotations

import json

import pytest

from core.base.errors import DataError, WorkbenchError
from core.judgments import judged_keys, read_log
from core.judgments.judges.batch import collect_batch, submit_batch
from core.judgments.judges.batch_records import find_batch, pending_batch_keys, read_batches
from core.judgments.judges.openai_judge import OpenAIJudge
from core.judgments.judges.runner import execute_judging, plan_judging
from core.judgments.xnot_files import read_extraction_log
from core.llm import ResponseCache
from core.tasks import get_task
from tests.helpers.llm_server import heuristic_responder, server_error

MODEL = "gpt-4o-mini"


def _judge(server, cache=None, judge_id=None, seed=None):
    return OpenAIJudge(get_task("G1a", None), model=MODEL, base_url=server.base_url, timeout=5, max_retries=0,
                       cache=cache, judge_id=judge_id, seed=seed)


def _factory(server, cache=None):
    def make(task_id, entry):
        return _judge(server, cache, judge_id=entry["judge"], seed=entry.get("seed"))

    return make


def test_batch_and_on_demand_store_identical_fields(workspace, judging_dataset, llm_server):
    rows = judging_dataset("d")
    judging_dataset("e")  # the same reviews in a second dataset, judged on demand
    llm_server.responder = heuristic_responder
    judge = _judge(llm_server)
    plan = plan_judging(workspace, "d", "G1a", judge)
    report = submit_batch(plan, judge)
    batch_id = report.batch["batch_id"]
    assert report.mode == "batch" and report.batch["submitted"][0]["requests"] == 12
    assert llm_server.requests_by_key == {}  # nothing answered before the batch runs
    entry = read_batches(workspace, "d", "G1a")[0]
    assert entry["batch_id"] == batch_id and entry["judge"] == MODEL and not entry["collected"]
    assert [r["custom_id"] for r in entry["requests"]][:2] == ["biz0:0", "biz0:1"]
    uploaded = llm_server.files[entry["input_file_id"]]["data"].decode().splitlines()
    first = json.loads(uploaded[0])
    assert first["custom_id"] == "biz0:0" and first["url"] == "/v1/chat/completions"
    assert first["body"]["response_format"] == get_task("G1a", None).response_format()
    assert find_batch(workspace, batch_id)[:2] == ("d", "G1a")

    # a new plan leaves the reviews of the running batch out: nothing is asked twice
    again = plan_judging(workspace, "d", "G1a", judge)
    assert again.rows == () and again.in_pending_batches == 12
    assert len(pending_batch_keys(workspace, "d", "G1a", MODEL)) == 12

    running = collect_batch(workspace, batch_id, _factory(llm_server))
    assert running.batch["status"] == "in_progress" and running.judged == 0
    done = collect_batch(workspace, batch_id, _factory(llm_server))
    assert done.batch == {"batch_id": batch_id, "status": "completed", "collected": True}
    assert done.judged == 12 and not done.failures
    assert collect_batch(workspace, batch_id, _factory(llm_server)).judged == 0  # collected once only
    assert pending_batch_keys(workspace, "d", "G1a", MODEL) == set()
    assert llm_server.batch_requests_by_key == {r["review_id"]: 1 for r in rows}

    on_demand = _judge(llm_server)
    execute_judging(plan_judging(workspace, "e", "G1a", on_demand), on_demand)
    batch_log = {(r["business_id"], r["idx"]): r for r in read_log(workspace, "d", "G1a", MODEL).to_dicts()}
    demand_log = {(r["business_id"], r["idx"]): r for r in read_log(workspace, "e", "G1a", MODEL).to_dicts()}
    assert batch_log.keys() == demand_log.keys() and len(batch_log) == 12
    for key, rec in batch_log.items():
        other = demand_log[key]
        assert (rec["fields"], rec["excerpt"], rec["raw"], rec["parse_error"]) == (
            other["fields"], other["excerpt"], other["raw"], other["parse_error"])
        assert rec["batch_id"] == batch_id and other["batch_id"] is None
        assert rec["usage"]["cost_usd"] == pytest.approx(other["usage"]["cost_usd"] / 2)  # Batch API: half price
    assert done.usage["cost_usd"] == pytest.approx(sum(r["usage"]["cost_usd"] for r in batch_log.values()))
    log = read_extraction_log(workspace, "d", "G1a", MODEL)
    assert log["progress"]["reviews_extracted"] == 12


def test_batch_errors_are_failures_and_resume_resubmits_them(workspace, judging_dataset, llm_server, monkeypatch,
                                                             capsys):
    from core.cli import main

    judging_dataset(restaurants=1)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm_server.add_faults("rev-0-2", server_error())
    base = ["--workspace", str(workspace.root), "--no-progress", "--json"]
    judge = ["judge", "--dataset", "d", "--judge", "openai", "--model", MODEL]
    assert main([*base, *judge, "--mode", "batch"]) == 0
    batch_id = json.loads(capsys.readouterr().out)["batch"]["batch_id"]
    assert main([*base, "judge", "--collect", batch_id, "--wait", "5", "--poll", "0.01"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["judged"] == 5 and out["failures"] == 1 and out["failed_reviews"][0]["idx"] == 2
    assert ("biz0", 2) not in judged_keys(workspace, "d", "G1a", MODEL)
    # --resume in batch mode submits only the failed review
    assert main([*base, *judge, "--mode", "batch", "--resume"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["plan"]["to_judge"] == 1 and out["batch"]["submitted"][0]["requests"] == 1
    second = out["batch"]["batch_id"]
    # a later --resume (on demand) collects the finished batch instead of asking again
    llm_server.batch_polls_before_done = 0
    assert main([*base, *judge, "--resume"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["collected_batches"][0]["batch"]["batch_id"] == second
    assert out["collected_batches"][0]["judged"] == 1 and out["judged"] == 0
    assert len(judged_keys(workspace, "d", "G1a", MODEL)) == 6
    assert llm_server.requests_by_key["rev-0-2"] == 2 and llm_server.answered_by_key["rev-0-2"] == 1


def test_batch_skips_cached_requests(workspace, judging_dataset, llm_server):
    judging_dataset(restaurants=1)
    cache = ResponseCache(workspace.cache_dir / "llm.jsonl")
    first = _judge(llm_server, cache)
    execute_judging(plan_judging(workspace, "d", "G1a", first, limit=4), first)
    # judging everything again in batch mode: the 4 cached answers are stored at once, 2 are sent
    judge = _judge(llm_server, ResponseCache(workspace.cache_dir / "llm.jsonl"))
    report = submit_batch(plan_judging(workspace, "d", "G1a", judge, resume=False), judge)
    assert report.batch["answered_from_cache"] == 4 and report.batch["submitted"][0]["requests"] == 2
    assert report.judged == 4 and report.usage["cached_calls"] == 4


def test_collect_unknown_batch(workspace):
    with pytest.raises(WorkbenchError, match="batch 'batch_nope' is not recorded"):
        collect_batch(workspace, "batch_nope", lambda task, entry: None)


def test_batch_mode_needs_a_single_model(workspace, judging_dataset, capsys):
    from core.cli import main

    judging_dataset(restaurants=1)
    code = main(["--workspace", str(workspace.root), "judge", "--dataset", "d", "--judge", "heuristic",
                 "--mode", "batch"])
    assert code == 1 and "--mode batch needs --judge openai" in capsys.readouterr().err


def test_collect_surfaces_a_broken_judgment_log(workspace, judging_dataset, llm_server):
    judging_dataset("d")
    llm_server.responder = heuristic_responder
    judge = _judge(llm_server)
    batch_id = submit_batch(plan_judging(workspace, "d", "G1a", judge), judge).batch["batch_id"]
    assert collect_batch(workspace, batch_id, _factory(llm_server)).judged == 0  # still in progress
    log = workspace.judgments_dir("d", "G1a") / f"{MODEL}.jsonl"
    log.write_text("{broken\n", encoding="utf-8")  # damage before the results are appended
    with pytest.raises(DataError, match=rf"{log.name}:1: not valid JSON"):
        collect_batch(workspace, batch_id, _factory(llm_server))  # not a silent success
    assert not read_batches(workspace, "d", "G1a")[0]["collected"]  # a later collect, once repaired, stores them
