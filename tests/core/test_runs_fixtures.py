"""amos on the shared dev-ADDM reviews: every evidence snippet is a verbatim substring of its review,
also when the model paraphrases its excerpts; the run scores against ADDM's own GT file."""

from __future__ import annotations

import json

import pytest

from core.datasets.importer import import_dataset
from core.llm import workspace_cache
from core.methods import make_model
from core.methods.offline import answer_for
from core.runs import RunConfig, execute_run, plan_run, validate_results
from tests.helpers.llm_server import RUN_KEY_PATTERN, LLMServer


def paraphrasing_responder(request, key=None):
    """The offline answer, with every excerpt lower-cased and re-spaced (no longer verbatim)."""
    answer = answer_for(request["messages"], request.get("response_format"))
    if isinstance(answer.get("excerpt"), str) and answer["excerpt"]:
        answer["excerpt"] = "  ".join(answer["excerpt"].lower().split()) + " (sic)"
    return answer


@pytest.mark.parametrize("model", ["heuristic", "test-model"])
def test_amos_snippets_are_verbatim_substrings_of_their_reviews(fixtures_dir, workspace, monkeypatch, model):
    source = fixtures_dir / "dev-ADDM" / "dataset_K25_subset.jsonl"
    import_dataset(workspace, "addm", source)
    gt_file = fixtures_dir / "dev-ADDM" / "answers" / "G1_allergy_V2_K25_groundtruth.json"
    texts = {}
    for line in source.read_text(encoding="utf-8").splitlines():
        for review in json.loads(line)["reviews"]:
            texts[review["review_id"]] = review["text"]
    with LLMServer(paraphrasing_responder, key_pattern=RUN_KEY_PATTERN) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        config = RunConfig(dataset="addm", task="G1a", policy="G1_allergy_V2", method="amos", model=model, k=25,
                           gt=str(gt_file))
        plan = plan_run(config, workspace)
        status = execute_run(plan, make_model(model, workspace, cache=workspace_cache(workspace)))
    assert status["status"] == "finished" and status["errors"] == 0
    results = json.loads((plan.run_dir / "results.json").read_text())
    validate_results(results)
    assert results["gt"]["file_sha256"] and results["total"] == 5
    snippets = [(e["review_id"], e["snippet"]) for s in results["results"] for e in s["parsed"]["evidences"]]
    assert snippets, "the fixture has allergy incidents: amos must cite them"
    for review_id, snippet in snippets:
        assert snippet and snippet in texts[review_id], (review_id, snippet)
    if model == "test-model":
        assert server.chat_requests > 5  # one compile call plus one extraction per kept review
