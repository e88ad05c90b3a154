"""Loading gold sets: the konto files, sample ids, and bad lines named by file, line and field."""

from __future__ import annotations

import json

import pytest

from core.base.errors import DataError
from core.gold.items import eval_files_in, load_gold_files, resolve_eval_files
from tests.helpers.gold import SMALL_SET, gold_item, write_jsonl, write_small_set


def test_konto_files_load_49_items_and_placeholders_give_none(fixtures_dir):
    folder = fixtures_dir / "konto" / "gold" / "eval"
    files = eval_files_in(folder)
    assert [f.name for f in files] == ["accounting_glossary_eval.jsonl", "conversation_eval.jsonl",
                                       "rule_application_eval.jsonl", "tax_glossary_eval.jsonl"]
    items = load_gold_files(files)
    assert len(items) == 49
    assert load_gold_files([folder / "conversation_eval.jsonl", folder / "rule_application_eval.jsonl"]) == []
    assert sum(i.domain == "tax" for i in items) == 29 and sum(i.domain == "accounting" for i in items) == 20
    first = items[0]
    assert first.sample_id == "glossary_define_0" and first.question == "Hva er konto 1000?"
    assert [m["role"] for m in first.prompt_messages] == ["system", "user"]  # the placeholder answer is not sent
    assert items[-1].sample_id == "glossary_define_48"


def test_sample_ids_count_over_all_files_in_the_given_order(tmp_path):
    a, b = write_small_set(tmp_path)
    assert [i.sample_id for i in load_gold_files([a, b])] == ["glossary_define_0", "glossary_define_1", "law_reference_2"]
    assert [i.sample_id for i in load_gold_files([b, a])] == ["law_reference_0", "glossary_define_1", "glossary_define_2"]
    assert resolve_eval_files(folder=tmp_path) == [a, b]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no eval files"):
        resolve_eval_files(folder=tmp_path / "empty")


def test_optional_fields_get_the_reference_defaults(tmp_path):
    item = gold_item("Hva?", "Svar.")
    del item["eval_criteria"]
    del item["metadata"]["source_ids"]
    (loaded,) = load_gold_files([write_jsonl(tmp_path / "x_eval.jsonl", [item])])
    assert loaded.citation_required is True and loaded.max_tokens == 300 and loaded.must_include == ()


def _bad(tmp_path, mutate):
    rows = [SMALL_SET[0], json.loads(json.dumps(SMALL_SET[1]))]
    rows[1] = mutate(rows[1])
    return write_jsonl(tmp_path / "bad_eval.jsonl", rows)  # header comment is line 1: the bad item is line 3


def _drop(path):
    def go(obj):
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
        return obj
    return go


def _set(path, value):
    def go(obj):
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
        return obj
    return go


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda o: '{"messages": [', r"bad_eval.jsonl:3: not valid JSON"),
    (lambda o: "[1, 2]", r"bad_eval.jsonl:3: expected a JSON object, got list"),
    (_drop(["expected_output"]), r"bad_eval.jsonl:3: field 'expected_output': missing"),
    (_drop(["metadata", "task"]), r"bad_eval.jsonl:3: field 'metadata.task': missing"),
    (_set(["metadata", "domain"], 7), r"bad_eval.jsonl:3: field 'metadata.domain': expected a string, got int"),
    (_set(["messages"], "hi"), r"bad_eval.jsonl:3: field 'messages': expected a list, got str"),
    (_set(["messages", 1, "role"], "robot"), r"field 'messages\[1\].role': unknown role 'robot'"),
    (_set(["messages", 1, "content"], None), r"field 'messages\[1\].content': missing"),
    (_set(["eval_criteria", "must_include"], ["ok", 3]), r"field 'eval_criteria.must_include\[1\]': expected a string"),
    (_set(["eval_criteria", "citation_required"], "yes"), r"field 'eval_criteria.citation_required': expected a boolean"),
    (_set(["eval_criteria", "max_tokens"], True), r"field 'eval_criteria.max_tokens': expected an integer, got bool"),
    (_set(["eval_criteria", "max_tokens"], 0), r"field 'eval_criteria.max_tokens': must be a positive integer"),
    (_set(["messages"], [{"role": "system", "content": "x"}]), r"field 'messages': no user message"),
])
def test_bad_lines_name_file_line_and_field(tmp_path, mutate, message):
    path = _bad(tmp_path, mutate)
    with pytest.raises(DataError, match=message):
        load_gold_files([path])


def test_bad_line_in_a_later_file_returns_nothing(tmp_path):
    good = write_jsonl(tmp_path / "a_eval.jsonl", SMALL_SET)
    bad = write_jsonl(tmp_path / "b_eval.jsonl", [SMALL_SET[0], "not json"], header=None)
    with pytest.raises(DataError, match=r"b_eval.jsonl:2: not valid JSON"):
        load_gold_files([good, bad])
    with pytest.raises(FileNotFoundError, match="gold file not found"):
        load_gold_files([tmp_path / "missing_eval.jsonl"])
