"""The dollar cap of LLM judging (issue 26): ``judge --max-cost``, the workspace default, refusals."""

from __future__ import annotations

import json

import pytest

from core.base.errors import WorkbenchError
from core.judgments import judged_keys
from core.judgments.judges.openai_judge import OpenAIJudge
from core.judgments.judges.runner import execute_judging, plan_judging
from core.judgments.judges.spend import COMPLETION_TOKENS_PER_REVIEW, judging_budget
from core.llm.budget import request_bound
from core.tasks import get_task
from tests.helpers.llm_server import (
    heuristic_responder,
    llm_server,  # noqa: F401 - fixture
)

MODEL = "gpt-4o-mini"  # a listed price: the local server answers any model name


def _judge(server, model: str = MODEL) -> OpenAIJudge:
    return OpenAIJudge(get_task("G1a", None), model=model, base_url=server.base_url, timeout=5.0, max_retries=0)


def test_a_capped_run_stops_before_the_cap_and_resume_finishes_without_asking_twice(
        workspace, judging_dataset, llm_server):  # noqa: F811
    rows = judging_dataset()
    llm_server.responder = heuristic_responder
    judge = _judge(llm_server)
    plan = plan_judging(workspace, "d", "G1a", judge, resume=True)
    bounds = [request_bound(MODEL, judge.messages(r), COMPLETION_TOKENS_PER_REVIEW) for r in plan.rows]
    # room for about three reviews at their upper bound (with concurrency 2, up to 2 more are reserved
    # while in flight: the real cost, about a quarter of the bound, lets a few more through, not all 12)
    cap = sum(bounds[:3]) * 1.01
    report = execute_judging(plan, judge, concurrency=2, max_cost=cap)
    assert report.stopped_at_cap and report.cancelled and report.max_cost_usd == cap
    assert 3 <= report.judged < len(rows)  # the real cost is below the bound: at least the three it had room for
    assert report.usage["cost_usd"] <= cap  # never past the cap
    assert "stopped at the cap" in report.summary_text()
    first = dict(llm_server.requests_by_key)
    assert len(first) == len(judged_keys(workspace, "d", "G1a", MODEL)) == report.judged
    assert set(first.values()) == {1}

    again = _judge(llm_server)
    rest = execute_judging(plan_judging(workspace, "d", "G1a", again, resume=True), again, concurrency=2)
    assert not rest.stopped_at_cap and rest.judged == len(rows) - report.judged
    assert llm_server.requests_by_key == {r["review_id"]: 1 for r in rows}  # nothing asked twice


def test_a_cap_of_zero_sends_nothing(workspace, judging_dataset, llm_server):  # noqa: F811
    judging_dataset()
    llm_server.responder = heuristic_responder
    judge = _judge(llm_server)
    report = execute_judging(plan_judging(workspace, "d", "G1a", judge, resume=True), judge, max_cost=0.0)
    assert report.stopped_at_cap and report.judged == 0 and llm_server.requests_by_key == {}


def test_a_remote_model_without_a_price_cannot_be_capped(llm_server, monkeypatch):  # noqa: F811
    local = _judge(llm_server, model="my-own-model")
    assert judging_budget(local, 1.0) is None  # a model on this machine costs nothing
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    remote = OpenAIJudge(get_task("G1a", None), model="my-own-model", base_url="https://llm.example.org/v1")
    with pytest.raises(WorkbenchError, match="has no known price, so --max-cost cannot be kept"):
        judging_budget(remote, 1.0)
    assert judging_budget(remote, None) is None


def test_the_cli_keeps_the_workspace_default_cap_and_refuses_a_batch_over_it(
        workspace, judging_dataset, llm_server, monkeypatch, capsys):  # noqa: F811
    from core.cli import main

    judging_dataset()
    llm_server.responder = heuristic_responder
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    meta = workspace.root / "workspace.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "max_cost_usd": 0.0}))
    base = ["--workspace", str(workspace.root), "--no-progress", "--json", "judge", "--dataset", "d", "--judge",
            "openai", "--model", MODEL]
    main(base)
    out = json.loads(capsys.readouterr().out)
    assert out["stopped_at_cap"] and out["max_cost_usd"] == 0.0 and out["judged"] == 0
    assert llm_server.requests_by_key == {}
    assert main([*base, "--mode", "batch", "--max-cost", "0.000001"]) == 1
    err = capsys.readouterr().err
    assert "may cost up to $0.00" in err and "over the cap of $0.000001" in err and llm_server.requests_by_key == {}
