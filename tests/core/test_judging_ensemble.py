"""Ensembles: weighted majority per field, confidence = winning share, low-confidence listing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.judgments import read_log
from core.judgments.judges.ensemble import (
    EnsembleJudge,
    build_ensemble,
    low_confidence,
    parse_ensemble_spec,
    weighted_vote,
)
from core.judgments.judges.heuristic import HeuristicJudge
from core.judgments.judges.openai_judge import OpenAIJudge
from core.judgments.judges.runner import execute_judging, plan_judging
from core.tasks import get_task
from tests.helpers.llm_server import heuristic_responder, server_error

MODEL = "gpt-4o-mini"

SEVERITY = ["none", "mild", "moderate", "severe"]


def test_weighted_vote_hand_cases():
    # 2 of 3 equal votes: share 2/3
    assert weighted_vote(["mild", "none", "mild"], [1, 1, 1], SEVERITY) == ("mild", pytest.approx(2 / 3))
    # weight 3 beats two votes of 1: 3 / 5
    assert weighted_vote(["mild", "none", "severe"], [1, 3, 1], SEVERITY) == ("none", pytest.approx(0.6))
    # tie 1:1 goes to the earliest value
    assert weighted_vote(["severe", "none"], [1, 1], SEVERITY) == ("severe", 0.5)
    # an invalid vote counts in the denominator only: 1 / 2
    assert weighted_vote(["catastrophic", "mild"], [1, 1], SEVERITY) == ("mild", 0.5)
    assert weighted_vote([None, "oops"], [1, 1], SEVERITY) == (None, None)
    with pytest.raises(ValueError, match="2 values but 1 weights"):
        weighted_vote(["mild", "none"], [1], SEVERITY)


@given(st.lists(st.tuples(st.sampled_from(SEVERITY), st.floats(0.1, 10)), min_size=1, max_size=7))
def test_weighted_vote_properties(votes):
    values, weights = [v for v, _ in votes], [w for _, w in votes]
    winner, share = weighted_vote(values, weights, SEVERITY)
    totals = {v: sum(w for x, w in votes if x == v) for v in set(values)}
    assert totals[winner] == max(totals.values())
    assert share == pytest.approx(totals[winner] / sum(weights))
    assert 1 / len(totals) - 1e-9 <= share <= 1


def test_parse_ensemble_spec():
    name, members = parse_ensemble_spec("mix:openai:gpt-4o*2,openai:gpt-4o-mini#7,heuristic*0.5")
    assert name == "mix"
    assert [(m.kind, m.model, m.seed, m.weight) for m in members] == [
        ("openai", "gpt-4o", None, 2.0), ("openai", "gpt-4o-mini", 7, 1.0), ("heuristic", None, None, 0.5)]
    for bad, message in [("trio", "expected NAME:MEMBER"), ("x:heuristic", "at least 2 members"),
                         ("x:heuristic,claude", "bad member 'claude'"), ("x:heuristic,heuristic*0", "must be > 0"),
                         ("bad name:heuristic,heuristic", "invalid ensemble name")]:
        with pytest.raises(ValueError, match=message):
            parse_ensemble_spec(bad)
    with pytest.raises(ValueError, match="members must differ"):
        build_ensemble(get_task("G1a", None), "x:heuristic,heuristic")


def _seeded_responder(request, key):
    """Seeds 1 and 2 answer like heuristic-v1; seed 3 disagrees on severity for rev-*-0."""
    answer = heuristic_responder(request, key)
    if request.get("seed") == 3 and key and key.endswith("-0"):
        answer["incident_severity"] = "severe"
    return answer


def _trio(server):
    task = get_task("G1a", None)
    return build_ensemble(
        task, f"trio:openai:{MODEL}#1,openai:{MODEL}#2,openai:{MODEL}#3",
        openai_factory=lambda task, model, seed: OpenAIJudge(task, model=model, seed=seed, base_url=server.base_url,
                                                             timeout=5, max_retries=0),
    )


def test_three_seeds_vote_with_confidence_and_low_confidence_listing(workspace, judging_dataset, llm_server):
    judging_dataset()
    llm_server.responder = _seeded_responder
    judge = _trio(llm_server)
    assert judge.judge_id == "ensemble-trio" and judge.concurrent
    report = execute_judging(plan_judging(workspace, "d", "G1a", judge), judge, concurrency=3)
    assert report.judged == 12 and report.usage["calls"] == 36  # three members per review
    log = {r["review_id"]: r for r in read_log(workspace, "d", "G1a", "ensemble-trio").to_dicts()}
    disputed = log["rev-0-0"]
    assert disputed["fields"]["incident_severity"] == "moderate"  # seeds 1 and 2 win over seed 3
    assert disputed["confidence"] == {"incident_severity": pytest.approx(0.666667), "account_type": 1.0,
                                      "safety_interaction": 1.0}
    raw = json.loads(disputed["raw"])
    assert [m["judge"] for m in raw["members"]] == ["gpt-4o-mini.s1", "gpt-4o-mini.s2", "gpt-4o-mini.s3"]
    assert raw["members"][2]["fields"]["incident_severity"] == "severe"
    assert log["rev-0-1"]["confidence"]["incident_severity"] == 1.0
    assert disputed["usage"]["prompt_tokens"] > 300  # summed over the members
    listed = low_confidence(workspace, "d", "G1a", "ensemble-trio", threshold=0.67)
    assert sorted(listed["review_id"].to_list()) == ["rev-0-0", "rev-1-0"]
    assert listed["min_confidence"].to_list() == pytest.approx([2 / 3, 2 / 3], abs=1e-5)
    assert low_confidence(workspace, "d", "G1a", "ensemble-trio", threshold=0.5).height == 0
    with pytest.raises(ValueError, match="threshold"):
        low_confidence(workspace, "d", "G1a", "ensemble-trio", threshold=0)


def test_weights_and_a_failing_member(workspace, judging_dataset, llm_server):
    judging_dataset(restaurants=1)
    task = get_task("G1a", None)
    llm_server.responder = lambda request, key: {"incident_severity": "mild", "account_type": "firsthand",
                                                 "safety_interaction": "none", "excerpt": ""}
    model = OpenAIJudge(task, model=MODEL, base_url=llm_server.base_url, timeout=5, max_retries=0)
    judge = EnsembleJudge(task, name="mix", members=[(HeuristicJudge(task), 1.0), (model, 2.0)])
    assert judge.concurrent  # a model member makes the ensemble run review by review in threads
    llm_server.add_faults("rev-0-5", server_error())
    execute_judging(plan_judging(workspace, "d", "G1a", judge), judge, concurrency=2)
    log = {r["review_id"]: r for r in read_log(workspace, "d", "G1a", "ensemble-mix").to_dicts()}
    # rev-0-3 ("If you have a gluten allergy…"): heuristic none/hypothetical/none (1) vs model (2)
    assert log["rev-0-3"]["fields"]["incident_severity"] == "mild"
    assert log["rev-0-3"]["confidence"]["incident_severity"] == pytest.approx(2 / 3)
    # the model failed on rev-0-5: the heuristic alone answered, with full confidence
    assert log["rev-0-5"]["fields"]["safety_interaction"] == "negative"
    assert log["rev-0-5"]["confidence"]["safety_interaction"] == 1.0
    assert "error" in json.loads(log["rev-0-5"]["raw"])["members"][1]


def test_cli_ensemble_and_low_confidence(workspace, judging_dataset, llm_server, monkeypatch, capsys):
    from core.cli import main

    judging_dataset(restaurants=1)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm_server.responder = _seeded_responder
    spec = f"trio:openai:{MODEL}#1,openai:{MODEL}#2,openai:{MODEL}#3"
    base = ["--workspace", str(workspace.root), "--no-progress", "--json", "judge", "--dataset", "d"]
    assert main([*base, "--ensemble", spec]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["judge"] == "ensemble-trio" and out["judged"] == 6
    assert main([*base, "--ensemble", spec, "--low-confidence", "0.67"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 1 and out["judgments"][0]["review_id"] == "rev-0-0"
