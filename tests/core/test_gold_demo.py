"""The demo gold set, the offline retrieval answerer and the demo's reports."""

from __future__ import annotations

import pytest

from core.base.errors import DataError
from core.base.files import append_jsonl
from core.gold import store
from core.gold.demo import DEMO_SET, write_demo_gold
from core.gold.demo_set import ITEMS, PASSAGES
from core.gold.items import load_gold_files
from core.gold.offline import Passage, offline_answers, read_passages, retrieve
from core.gold.report import read_report
from core.gold.scoring import GoldConfig, find_citation
from tests.helpers.gold import write_jsonl


def test_demo_set_is_ours_and_cites_ns_4102_or_a_law():
    assert len(ITEMS) >= 20
    patterns = GoldConfig().compiled_patterns()
    for _, _, _, question, expected, must, cite in ITEMS:
        assert not cite or find_citation(expected, patterns), question
        assert all(k.lower() in expected.lower() for k in must), question  # the expected answer passes its own keywords
    assert {p[1] for p in PASSAGES}.isdisjoint({i[4] for i in ITEMS})  # the glossary is worded differently


def test_retrieval_answers_from_the_best_passage():
    passages = [Passage("Aksjekapital", "Minst 30 000 kroner. [§ 3-1 Lov om aksjeselskaper]"),
                Passage("Feriepenger", "10,2 prosent av grunnlaget. [§ 10 Lov om ferie]")]
    assert retrieve(["Hvor mye feriepenger får man?", "Hva er aksjekapitalen?"], passages) == [[1], [0]]
    assert retrieve(["Hva er aksjekapitalen?"], passages, top_k=2) == [[0, 1]]
    with pytest.raises(ValueError, match="at least one reference passage"):
        retrieve(["x"], [])


def test_bad_reference_line(tmp_path):
    path = write_jsonl(tmp_path / "reference.jsonl", [{"term": "a", "text": "b"}, {"term": "a"}], header=None)
    with pytest.raises(DataError, match=r"reference.jsonl:2: field 'text': missing or not a string"):
        read_passages(path)


def test_demo_gold_writes_set_answers_reports_and_history(workspace):
    append_jsonl(store.history_path(workspace), [{"report": "mine", "set": "other"}])  # a user's line is kept
    summary = write_demo_gold(workspace)
    first = {p.relative_to(workspace.root): p.read_bytes() for p in sorted(workspace.gold_dir.rglob("*")) if p.is_file()}
    write_demo_gold(workspace)
    again = {p.relative_to(workspace.root): p.read_bytes() for p in sorted(workspace.gold_dir.rglob("*")) if p.is_file()}
    assert first == again  # same code, same bytes
    assert store.list_sets(workspace) == [DEMO_SET]
    items = load_gold_files(store.set_files(workspace, DEMO_SET))
    assert len(items) == summary["items"] == len(ITEMS)
    assert store.list_answers(workspace, DEMO_SET) == ["offline-retrieval-top1", "offline-retrieval-top2"]
    hist = store.history(workspace, DEMO_SET)
    assert [h["report"] for h in hist] == summary["reports"]
    assert [h["model"].split(" (")[0] for h in hist] == ["expected_output", "offline-retrieval-top1",
                                                         "offline-retrieval-top2"]
    assert all("offline model" in h["model"] for h in hist[1:])
    top1 = read_report(store.report_path(workspace, hist[1]["report"]))
    statuses = {s["scores"]["status"] for s in top1["sample_results"]}
    assert {"fail", "acceptable"} <= statuses  # a real model: some answers miss
    assert all(s["predicted"] != s["expected"] for s in top1["sample_results"])
    passages = read_passages(store.set_dir(workspace, DEMO_SET) / "reference.jsonl")
    answers = offline_answers(items, passages)
    assert [answers[s["sample_id"]].predicted for s in top1["sample_results"]] == [s["predicted"] for s in top1["sample_results"]]
    assert '"report": "mine"' in store.history_path(workspace).read_text()
