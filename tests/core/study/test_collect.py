"""Response collection: a real openai client against the local server, the offline advisor,
resume without repeats, failures recorded on their record, the LLM cache."""

from __future__ import annotations

from core.base.files import read_jsonl_log
from core.llm import AsyncLLM, Endpoint, ResponseCache, SyncLLM
from core.study import grid
from core.study.collect import collect_responses, plan_collection
from core.study.responders import OFFLINE_MODELS, LLMResponder, make_responder, read_scenario
from core.study.runs import read_run
from tests.helpers.llm_server import LLMServer, server_error


def _prompts():
    return grid.build_grid(grid.read_templates(), grid.read_factors(), template_ids=["raise"],
                           levels={"base_rent": [600, 1200], "amount": [100], "relationship_quality": ["good"]})


def _offline_answer(request, key=None):
    # the server answers like the balanced offline advisor (a deterministic model)
    return OFFLINE_MODELS["offline:advisor-balanced"].respond(request["messages"]).text


def test_collect_resume_failures_and_cache(tmp_path):
    prompts = _prompts()
    run = tmp_path / "run.jsonl"
    with LLMServer(_offline_answer, key_pattern=r"(.*€.*)") as server:
        cache = ResponseCache(tmp_path / "cache.jsonl")
        llm = LLMResponder(SyncLLM(AsyncLLM("served-model", endpoint=Endpoint("default", server.base_url), max_retries=0,
                                            timeout=10, cache=cache, temperature=0.0, seed=0)))
        offline = make_responder("offline:advisor-agreeable")
        failing_key = grid.user_text(prompts[1])
        server.add_faults(failing_key, server_error(500))
        plan = plan_collection(prompts, [llm, offline], run, run_id="r1")
        assert len(plan.todo) == 12 and plan.done == 0
        seen = []
        summary = collect_responses(plan, progress=lambda d, t, m: seen.append((d, t)))
        assert summary["answered"] == 11 and summary["failed"] == 1
        assert seen[-1] == (12, 12)
        failed = [r for r in read_jsonl_log(run) if r["response_text"] is None]
        assert len(failed) == 1 and "500" in failed[0]["error"] and failed[0]["prompt_id"] == prompts[1]["prompt_id"]

        resumed = plan_collection(prompts, [llm, offline], run, run_id="r1")
        assert [(r.model_id, p["prompt_id"]) for r, p in resumed.todo] == [("served-model", prompts[1]["prompt_id"])]
        assert resumed.failed_before == 1
        collect_responses(resumed)
        assert collect_responses(plan_collection(prompts, [llm, offline], run, run_id="r1"))["requested"] == 0
        # every prompt asked once, the failed one twice (its failure was not a finished call)
        assert server.repeated_keys() == {failing_key: 2}
        assert sum(server.answered_by_key.values()) == 6

        # a new run with the same cache pays for nothing
        other = tmp_path / "run2.jsonl"
        collect_responses(plan_collection(prompts, [llm], other, run_id="r2"))
        assert sum(server.answered_by_key.values()) == 6
        assert all(r["cached"] for r in read_jsonl_log(other))

    records = read_run(run)
    assert len(records) == 12 and all(r["response_text"] for r in records)
    for rec in records:
        assert set(rec) >= {"run_id", "timestamp_iso", "model_id", "provider", "prompt_id", "perspective",
                            "factors", "messages", "response_text"}
        assert rec["offline"] is rec["model_id"].startswith("offline:")
        if rec["offline"]:
            assert rec["provider"] == "offline"
        else:
            assert rec["response_text"] == _offline_answer({"messages": rec["messages"]})


def test_offline_advisor_is_deterministic_reads_the_prompt_and_leans_to_the_asker():
    prompts = _prompts()
    balanced, agreeable = OFFLINE_MODELS["offline:advisor-balanced"], OFFLINE_MODELS["offline:advisor-agreeable"]
    for p in prompts:
        text = grid.user_text(p)
        s = read_scenario(text)
        assert (s["base_rent"], s["amount"]) == (p["factors"]["base_rent"], p["factors"]["amount"])
        assert s["asker"] == p["perspective"]
        assert balanced.respond(p["messages"]) == balanced.respond(p["messages"])
        # stance = clip(0.55 - 5 * share + 0.1 (good) + lean * asker)
        asker = {"landlord": 1, "tenant": -1, "neutral": 0}[p["perspective"]]
        expected = max(-1.0, min(1.0, 0.55 - 5 * s["amount"] / s["base_rent"] + 0.1 + 0.5 * asker))
        assert abs(agreeable.stance(text) - expected) < 1e-4
    landlord, tenant = grid.user_text(prompts[0]), grid.user_text(prompts[1])
    assert agreeable.stance(landlord) - agreeable.stance(tenant) > balanced.stance(landlord) - balanced.stance(tenant)
