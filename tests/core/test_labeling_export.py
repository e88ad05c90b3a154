"""Export and import of reviews and consensus (SPEC §6.5), including the shared AITA reviews."""

from __future__ import annotations

import json

import pytest

from core.base.errors import DataError
from core.labeling import assignment, consensus, export, items
from core.labeling.reports import ratings_frame
from core.labeling.store import LabelStore, integrity_problems

REVIEW_FIELDS = ["dataset", "llm_response_id", "identifier", "prompt_title", "prompt_body", "model_response_text",
                 "model_id", "run_id", "reviewer_code", "score", "notes", "review_created_at", "review_updated_at",
                 "metadata"]


def new_store(path):
    s = LabelStore(f"sqlite:///{path}")
    s.ensure_schema()
    return s


@pytest.fixture()
def store(tmp_path):
    s = new_store(tmp_path / "labels.sqlite")
    yield s
    s.dispose()


def seeded(store):
    p = items.create_project(store, "p")
    items.add_items(store, p, [
        {"dataset": "ds", "identifier": f"i{k}", "run_id": "r1", "prompt_title": f"T{k}", "prompt_body": "q",
         "response_text": f"answer {k}", "model_id": "m", "metadata": {"topic": k}} for k in range(1, 4)])
    assignment.submit(store, p, "a", 1, 0.5, notes="clear")
    assignment.submit(store, p, "b", 1, 0.25)
    assignment.submit(store, p, "a", 2, -0.5)
    assignment.submit(store, p, "b", 2, 0.5)
    assignment.submit(store, p, "a", 1, 0.75)  # a repeat
    return p


def test_reviews_export_in_the_spec_layout_and_import_back(store, tmp_path):
    p = seeded(store)
    result = export.export_project(store, p, tmp_path / "out")
    path = tmp_path / "out" / "ds_reviews.jsonl"
    assert result["reviews"] == {"ds": str(path)} and result["n_reviews"] == 5
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [list(line) for line in lines] == [REVIEW_FIELDS] * 5
    first = lines[0]
    assert (first["identifier"], first["reviewer_code"], first["score"], first["notes"]) == ("i1", "a", 0.5, "clear")
    assert first["model_response_text"] == "answer 1" and first["metadata"] == {"topic": 1}
    assert first["review_created_at"] == first["review_updated_at"]

    other = new_store(tmp_path / "copy.sqlite")
    q = items.create_project(other, "p")
    report = export.import_reviews(other, q, path, create_items=True)
    assert (report.added, report.skipped, report.details["items_created"]) == (5, 0, 2)
    assert export.import_reviews(other, q, path).as_dict()["skipped"] == 5  # idempotent
    assert export.review_rows(other, q) == lines  # items are created in the file's order: same ids
    assert integrity_problems(other) == []
    a = ratings_frame(store, p).drop("rating_id", "seconds_spent")
    b = ratings_frame(other, q).drop("rating_id", "seconds_spent")
    assert a.equals(b)  # repeats stay repeats
    other.dispose()


def test_consensus_export(store, tmp_path):
    p = seeded(store)
    export.export_project(store, p, tmp_path)
    rows = [json.loads(x) for x in (tmp_path / "p_consensus.jsonl").read_text(encoding="utf-8").splitlines()]
    by_id = {r["identifier"]: r for r in rows}
    assert set(by_id) == {"i1", "i2"}
    assert by_id["i1"]["consensus"] == pytest.approx(0.5) and by_id["i1"]["consensus_source"] == "calculated"
    assert by_id["i1"]["scores"] == [0.75, 0.25] and by_id["i1"]["raters"] == ["a", "b"]  # a's latest counts
    assert by_id["i2"]["consensus"] is None and by_id["i2"]["consensus_source"] == "needs_discussion"
    assert {"item_id", "response_text", "metadata", "n_ratings", "note", "adjudicator"} <= set(by_id["i1"])
    assert consensus.record_calculated(store, p) == 0  # the export recorded the snapshot


@pytest.mark.fixtures
def test_the_aita_reviews_import_onto_the_seed_items(store, fixtures_dir):
    p = items.create_project(store, "aita")
    items.import_items_file(store, p, fixtures_dir / "aita" / "seeds" / "aita_seed.jsonl")
    path = fixtures_dir / "aita" / "reviews" / "aita_reviews_slim.jsonl"
    report = export.import_reviews(store, p, path)
    assert (report.added, report.skipped, report.details["items_created"]) == (514, 0, 0)
    assert report.details["raters"] == ["llm:openai/gpt-oss-20b:free", "llm:tngtech/deepseek-r1t2-chimera:free",
                                        "rater_01", "rater_04"]
    assert export.import_reviews(store, p, path).added == 0
    assert integrity_problems(store) == []
    assert ratings_frame(store, p).height == 214  # humans only by default
    assert ratings_frame(store, p, include_models=True).height == 514


@pytest.mark.fixtures
def test_slim_reviews_need_their_items_unless_told(store, fixtures_dir):
    p = items.create_project(store, "aita")
    path = fixtures_dir / "aita" / "reviews" / "aita_reviews_slim.jsonl"
    with pytest.raises(DataError, match=r"aita_reviews_slim\.jsonl:1: field 'identifier': no item"):
        export.import_reviews(store, p, path)
    assert export.import_reviews(store, p, path, create_items=True).details["items_created"] == 150


def test_bad_review_lines_are_named(store, tmp_path):
    p = seeded(store)
    base = {"dataset": "ds", "identifier": "i1", "run_id": "r1", "reviewer_code": "z", "score": 0.1,
            "review_created_at": "2026-01-01 10:00:00"}
    cases = [({**base, "score": 2}, "field 'score': score must lie in"),
             ({**base, "reviewer_code": ""}, "field 'reviewer_code'"),
             ({**base, "review_created_at": None}, "field 'review_created_at': missing"),
             ({**base, "identifier": "nope"}, "field 'identifier': no item")]
    for line, message in cases:
        path = tmp_path / "r.jsonl"
        path.write_text(json.dumps(base) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=rf"r\.jsonl:2: {message}"):
            export.import_reviews(store, p, path)
    other = items.create_project(store, "other")
    path.write_text(json.dumps(base) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="belongs to another project"):
        export.import_reviews(store, other, path)
    assert len(export.review_rows(store, p)) == 5  # nothing half-imported
