"""Accuracy methods: tfidf against a plain-Python reference, embeddings and the LLM judge through
the local OpenAI-compatible server, and model answers with failures recorded on their samples."""

from __future__ import annotations

import json
import random

import numpy as np
import openai
import pytest

from core.base.errors import UnknownNameError, WorkbenchError
from core.gold.accuracy import (
    ACCURACY_METHODS,
    AccuracyContext,
    LocalEmbedder,
    OpenAIEmbedder,
    char_wb_ngrams,
    tfidf_similarity,
    tfidf_similarity_python,
    tfidf_similarity_sklearn,
    tfidf_vectorizer,
)
from core.gold.answers import model_answers
from core.gold.evaluation import EvalRequest, make_llm, run_evaluation
from core.gold.items import load_gold_files
from core.llm import AsyncLLM, ResponseCache, SyncLLM, endpoint_options
from tests.helpers.gold import write_small_set
from tests.helpers.llm_server import LLMServer, llm_server, server_error, word_hash_embedding  # noqa: F401

WORDS = ["konto", "1500", "kundefordringer", "gjeld", "leverandørgjeld", "egenkapital", "avskrivning", "§", "3-1",
         "Lov", "om", "aksjeselskaper", "[NS", "4102]", "æøå", "er", "skal", "føres", "på", "x"]


def _random_text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))


def test_char_wb_ngrams_match_scikit_learn():
    analyzer = tfidf_vectorizer().build_analyzer()
    for text in ("Konto 1500 er  KUNDEFORDRINGER [NS 4102]", "a bb ccc", "", "§ 3-1 æøå"):
        assert char_wb_ngrams(text) == analyzer(text)


def test_tfidf_matches_the_plain_python_reference_on_random_inputs():
    rng = random.Random(3)
    expected = [_random_text(rng) for _ in range(60)]
    predicted = [_random_text(rng) for _ in range(60)]
    predicted[:5] = expected[:5]  # some identical pairs
    fast = tfidf_similarity(predicted, expected)
    slow = tfidf_similarity_python(predicted, expected)
    assert np.allclose(fast, slow, atol=1e-9)
    assert np.allclose(fast, tfidf_similarity_sklearn(predicted, expected), atol=1e-9)  # scikit-learn end to end
    fit_on = [_random_text(rng) for _ in range(30)]
    assert np.allclose(tfidf_similarity(predicted, expected, fit_on=fit_on),
                       tfidf_similarity_python(predicted, expected, fit_on=fit_on), atol=1e-9)
    for i in range(5):
        assert fast[i] == (1.0 if expected[i].strip() else 0.0)


def test_tfidf_hand_checked_properties():
    exp = ["Kundefordringer føres på konto 1500. [NS 4102]"]
    same, paraphrase, other = tfidf_similarity(
        ["Kundefordringer føres på konto 1500. [NS 4102]", "Konto 1500 brukes til kundefordringer [NS 4102]",
         "Aksjekapitalen er minst 30 000 kroner"], exp * 3)
    assert same == 1.0 and 0.3 < paraphrase < 0.95 and other < 0.2
    # the IDF is fitted on the set's expected answers only: another answer in the batch changes nothing
    alone = tfidf_similarity(["Konto 1500 brukes til kundefordringer [NS 4102]"], exp)
    assert alone[0] == paraphrase
    assert tfidf_similarity([""], exp)[0] == 0.0 and tfidf_similarity([], []).size == 0
    with pytest.raises(ValueError, match="differ in length"):
        tfidf_similarity(["a"], [])


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(UnknownNameError, match="unknown accuracy method 'bleu'; valid: embedding, jaccard, llm-judge, tfidf"):
        ACCURACY_METHODS["bleu"]


def test_embedding_through_the_endpoint(llm_server, tmp_path):  # noqa: F811
    client = openai.OpenAI(base_url=llm_server.base_url, api_key="test", max_retries=0)
    embedder = OpenAIEmbedder(client, "test-embedding")
    pred, exp = ["konto 1500 kundefordringer", "helt annet svar", ""], ["kundefordringer konto 1500", "konto 2400", "x"]
    result = ACCURACY_METHODS["embedding"].fn(pred, exp, AccuracyContext(embedder=embedder))
    # same words in another order → the same bag-of-words vector → cosine 1; no shared word → the hashed
    # vectors share no bucket unless two words collide; an empty answer scores 0
    manual = [float(np.dot(word_hash_embedding(p), word_hash_embedding(e))
                    / (np.linalg.norm(word_hash_embedding(p)) * np.linalg.norm(word_hash_embedding(e)) or 1))
              for p, e in zip(pred[:2], exp[:2], strict=True)]
    assert result.scores[0] == pytest.approx(1.0) and result.scores[1] == pytest.approx(manual[1])
    assert result.scores[2] == 0.0
    assert llm_server.embedding_inputs[:3] == pred[:2] + [" "]  # empty texts are sent as one space


def test_local_embedding_model_needs_sentence_transformers():
    pytest.importorskip("numpy")
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(WorkbenchError, match="needs the sentence-transformers package"):
            LocalEmbedder("all-MiniLM-L6-v2")
    else:  # installed: the model must load offline from a package (not exercised here)
        assert callable(LocalEmbedder)


def _judge_responder(request, key=None):
    """A deterministic judge: word overlap of the reference and the answer, with its reasoning."""
    text = request["messages"][-1]["content"]
    ref = text.split("Reference answer:\n")[1].split("\n\nAnswer to grade:")[0]
    ans = text.split("Answer to grade:\n")[1]
    a, b = set(ref.lower().split()), set(ans.lower().split())
    score = len(a & b) / len(a | b) if a and b else 0.0
    return {"score": score, "reasoning": f"{len(a & b)} shared words"}


def test_llm_judge_records_reasoning_and_failures(tmp_path):
    items = load_gold_files(write_small_set(tmp_path / "set"))
    with LLMServer(_judge_responder) as server:
        server.add_faults(None, server_error(500))  # the first call fails (no retries): recorded, not fatal
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        llm = SyncLLM(AsyncLLM("judge-model", cache=ResponseCache(tmp_path / "cache.jsonl"), **endpoint_options(client)))
        pred = [i.expected_output for i in items]
        result = ACCURACY_METHODS["llm-judge"].fn(pred, [i.expected_output for i in items],
                                                  AccuracyContext(questions=[i.question for i in items], llm=llm))
        assert result.errors[0].startswith("judge failed: InternalServerError 500")
        assert result.scores[1:] == [1.0, 1.0] and result.reasoning[1] == "6 shared words"
        first_request = server.last_request
        assert first_request is not None
        calls = len(server.log)
        # a second run answers from the cache: no new call for the two that succeeded
        again = ACCURACY_METHODS["llm-judge"].fn(pred, [i.expected_output for i in items],
                                                 AccuracyContext(questions=[i.question for i in items], llm=llm))
        assert len(server.log) == calls + 1 and again.scores == [1.0, 1.0, 1.0]


def test_model_answers_with_a_failure_recorded_on_the_sample(tmp_path):
    files = write_small_set(tmp_path / "set")
    items = load_gold_files(files)

    def responder(request, key=None):
        return "Svar på: " + request["messages"][-1]["content"] + " [NS 4102]"

    with LLMServer(responder) as server:
        server.add_faults(None, server_error(503))
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        seen = []
        answers = model_answers(items, make_llm(None, "answer-model", client), progress=lambda d, t, m: seen.append(d))
        assert answers["glossary_define_0"].predicted == "" and "503" in answers["glossary_define_0"].error
        assert answers["glossary_define_1"].predicted == "Svar på: Hva er konto 2400? [NS 4102]"
        assert seen == [1, 2, 3]
        sent = [r for r in server.log if r["status"] == 200]
        assert len(sent) == 2
        report = run_evaluation(None, EvalRequest(files, source="model", model="answer-model", accuracy="jaccard"),
                                client=client)
        assert report["metadata"]["model"] == "answer-model"
        assert all("error" not in s for s in report["sample_results"])
        body = json.dumps(server.log)
        assert "EXPECTED_ANSWER" not in body


def test_endpoint_embeddings_are_kept_in_the_response_cache(llm_server, tmp_path):  # noqa: F811
    from core.llm import ResponseCache

    client = openai.OpenAI(base_url=llm_server.base_url, api_key="test", max_retries=0)
    texts = ["konto 1500 kundefordringer", "konto 2400", ""]
    path = tmp_path / "cache" / "llm.jsonl"
    first = OpenAIEmbedder(client, "test-embedding", ResponseCache(path)).embed(texts)
    assert llm_server.embedding_inputs == ["konto 1500 kundefordringer", "konto 2400", " "]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1  # the batch, on disk once it arrived
    again = OpenAIEmbedder(client, "test-embedding", ResponseCache(path)).embed(texts)  # a rerun (a new process)
    assert llm_server.embedding_inputs == ["konto 1500 kundefordringer", "konto 2400", " "]  # nothing asked again
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(first[0], word_hash_embedding(texts[0]), rtol=1e-6)
