"""Projects and item imports: item JSONL (the AITA seeds), results.json, run.jsonl and a dataset's
reviews; idempotent re-imports and errors that name file, line and field."""

from __future__ import annotations

import json
from datetime import datetime

import polars as pl
import pytest

from core.base.errors import DataError, UnknownNameError
from core.labeling import assignment, items, sources
from core.labeling.reports import items_frame


def test_projects_are_created_found_and_updated(store):
    p = items.create_project(store, "aita", guidelines="# Rate", scale_labels=("no", "meh", "yes"))
    assert (p.target_raters, p.scale_labels, p.visible_fields) == (3, ("no", "meh", "yes"), ("prompt_title",))
    assert items.create_project(store, "aita", exist_ok=True) == p
    with pytest.raises(ValueError, match="exists already"):
        items.create_project(store, "aita")
    with pytest.raises(UnknownNameError, match="unknown labeling project 'nope'; valid: aita"):
        items.get_project(store, "nope")
    q = items.update_project(store, "aita", target_raters=5, visible_fields=["topic"])
    assert (q.target_raters, q.visible_fields, q.guidelines) == (5, ("topic",), "# Rate")
    with pytest.raises(ValueError, match="target_raters"):
        items.update_project(store, "aita", target_raters=0)
    with pytest.raises(ValueError, match="three non-blank labels"):
        items.create_project(store, "other", scale_labels=("a", ""))
    with pytest.raises(ValueError, match="invalid project name"):
        items.create_project(store, "no spaces")
    assert [x.name for x in items.list_projects(store)] == ["aita"]


@pytest.mark.fixtures
def test_the_aita_seed_imports_once(store, fixtures_dir):
    project = items.create_project(store, "aita")
    seed = fixtures_dir / "aita" / "seeds" / "aita_seed.jsonl"
    report = items.import_items_file(store, project, seed)
    assert report.as_dict() == {"added": 300, "skipped": 0, "format": "items"}
    assert items.import_items_file(store, project, seed).as_dict() == {"added": 0, "skipped": 300, "format": "items"}
    frame = items_frame(store, project)
    first = json.loads(seed.read_text(encoding="utf-8").splitlines()[0])
    row = frame.row(0, named=True)
    assert (row["dataset"], row["identifier"], row["run_id"]) == ("aita", first["identifier"], first["run_id"])
    assert row["response_text"] == first["model_response_text"] and row["prompt_body"] == first["prompt_body"]
    assert json.loads(row["metadata"]) == first["metadata"]


@pytest.mark.fixtures
def test_the_scenario_seed_keeps_perspective_hidden(store, fixtures_dir):
    project = items.create_project(store, "scenario")
    items.import_items_file(store, project, fixtures_dir / "aita" / "seeds" / "scenario_seed.jsonl")
    frame = items_frame(store, project)
    assert frame["identifier"].to_list() == ["002:neutral", "104:landlord"]
    assert json.loads(frame["metadata"][0])["perspective"] == "neutral"
    view = assignment.next_item(store, project, "rater")
    assert view.fields == {} and "perspective" not in repr(view)  # the metadata stays hidden


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_bad_item_lines_name_file_line_and_field(store, tmp_path):
    project = items.create_project(store, "p")
    good = json.dumps({"identifier": "a", "prompt_body": "q", "response_text": "r"})
    cases = [
        ([good, "{not json"], r"bad\.jsonl:2: not valid JSON"),
        ([good, json.dumps({"prompt_body": "q", "response_text": "r"})], r":2: field 'identifier': missing"),
        ([json.dumps({"identifier": "a", "prompt_body": "q", "response_text": 3})], r":1: field 'response_text'"),
        ([json.dumps({"identifier": "a", "prompt_body": "q", "response_text": "r", "metadata": [1]})],
         r":1: field 'metadata': expected an object"),
        ([json.dumps({"identifier": "a", "prompt_body": "q", "response_text": "r", "created_at": "soon"})],
         r":1: field 'created_at': not a timestamp"),
    ]
    for lines, message in cases:
        with pytest.raises(DataError, match=message):
            items.import_items_file(store, project, _write(tmp_path / "bad.jsonl", lines))
    assert items.item_count(store, project) == 0  # nothing half-imported


def test_results_json_samples_become_items(store, tmp_path):
    doc = {"run_id": "run-7", "task_id": "G1a", "policy_id": "V2", "method": "cot", "model": "gpt-x", "k": 25,
           "config": {"dataset": "yelp"},
           "results": [
               {"business_id": "b1", "name": "Cafe One", "verdict": "High Risk", "risk_score": 6.0,
                "response": "The reviews report one moderate incident.", "gt_verdict": "Low Risk", "correct": False},
               {"business_id": "b2", "name": "Bar Two", "verdict": "Low Risk", "response": {"verdict": "Low Risk"}},
               {"business_id": "b3", "name": "Failed", "response": None, "error": "timeout"},
           ]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    project = items.create_project(store, "runs", visible_fields=["method"])
    report = items.import_items_file(store, project, path)
    assert report.as_dict() == {"added": 2, "skipped": 0, "format": "results"}
    frame = items_frame(store, project)
    row = frame.row(0, named=True)
    assert (row["dataset"], row["identifier"], row["run_id"], row["model_id"]) == ("yelp", "b1", "run-7", "gpt-x")
    assert row["prompt_title"] == "Cafe One" and "Task G1a" in row["prompt_body"]
    assert json.loads(frame["response_text"][1]) == {"verdict": "Low Risk"}
    view = assignment.next_item(store, project, "rater")
    assert view.fields == {"method": "cot"} and "High Risk" not in repr(view)


def test_run_jsonl_responses_become_items(store, tmp_path):
    def record(model, perspective):
        return json.dumps({
            "run_id": 17, "timestamp_iso": "2025-10-11T04:52:38Z", "model_id": model, "provider": "local",
            "prompt_id": "002", "perspective": perspective, "factors": {"perspective": perspective, "amount": 50},
            "messages": [{"role": "system", "content": "Be helpful."}, {"role": "user", "content": "Is €50 fair?"}],
            "response_text": f"{model} says maybe."})

    path = _write(tmp_path / "run.jsonl", [record("m1", "tenant"), record("m2", "tenant"), record("m1", "landlord")])
    project = items.create_project(store, "scenario")
    assert items.import_items_file(store, project, path, dataset="rent").added == 3
    frame = items_frame(store, project)
    assert frame["identifier"].to_list() == ["002:tenant@m1", "002:tenant@m2", "002:landlord@m1"]
    row = frame.row(0, named=True)
    assert (row["run_id"], row["prompt_title"], row["prompt_body"]) == ("17", "Scenario 002", "Is €50 fair?")
    assert row["created_at"] == datetime(2025, 10, 11, 4, 52, 38)
    assert json.loads(row["metadata"])["perspective"] == "tenant"


@pytest.mark.fixtures
def test_the_scored_run_imports_with_its_scores_hidden(store, fixtures_dir):
    project = items.create_project(store, "audit", visible_fields=["provider"])
    path = fixtures_dir / "aita" / "runs" / "1760158358" / "run_scored.jsonl"
    assert items.import_items_file(store, project, path).as_dict() == {"added": 216, "skipped": 0, "format": "run"}
    meta = json.loads(items_frame(store, project)["metadata"][0])
    assert {"score", "scorer_model", "perspective", "factors"} <= set(meta)
    assert assignment.next_item(store, project, "rater").fields == {"provider": "Chutes"}


def _workspace_with_dataset(workspace):
    from core.datasets import write_dataset

    restaurants = pl.DataFrame({"business_id": ["b1", "b2"], "name": ["Pho Place", "Taco Spot"], "city": ["X", "Y"]})
    reviews = pl.DataFrame({
        "business_id": ["b1", "b1", "b2", "b2", "b2"], "review_id": [f"r{i}" for i in range(5)],
        "idx": pl.Series([0, 1, 0, 1, 2], dtype=pl.Int32), "date": ["2024-01-01 10:00:00"] * 5,
        "stars": [5.0, 1.0, 4.0, 2.0, 3.0], "useful": [0] * 5, "funny": [0] * 5, "cool": [0] * 5,
        "text": ["peanut free!", "got sick", None, "nut allergy ok", "great tacos"], "user_id": ["u"] * 5,
    })
    # written (and locked) like an import: reading a dataset checks its lock (issue 9)
    write_dataset(workspace, "tiny", restaurants, reviews, sources=[], layout="test")
    return workspace


def test_a_datasets_reviews_become_items(store, workspace):
    ws = _workspace_with_dataset(workspace)
    project = items.create_project(store, "reviews")
    report = items.import_dataset_reviews(store, project, ws, "tiny")
    assert report.added == 4  # the review without text is left out
    frame = items_frame(store, project)
    assert frame["identifier"].to_list() == ["r0", "r1", "r3", "r4"]
    assert frame["prompt_title"].to_list() == ["Pho Place", "Pho Place", "Taco Spot", "Taco Spot"]
    assert json.loads(frame["metadata"][2]) == {"business_id": "b2", "idx": 1, "date": "2024-01-01 10:00:00",
                                                "stars": 2.0, "city": "Y"}
    nuts = sources.dataset_review_items(ws, "tiny", contains="NUT")
    assert [r["identifier"] for r in nuts] == ["r0", "r3"]
    sample = [r["identifier"] for r in sources.dataset_review_items(ws, "tiny", limit=2, seed=3)]
    assert len(sample) == 2 and sample == [r["identifier"] for r in sources.dataset_review_items(
        ws, "tiny", limit=2, seed=3)]
    other = items.create_project(store, "again")
    assert items.import_dataset_reviews(store, other, ws, "tiny").as_dict() == {"added": 0, "skipped": 4}
    with pytest.raises(UnknownNameError, match="unknown dataset 'missing'; valid: tiny"):  # checked (lock) first
        items.import_dataset_reviews(store, project, ws, "missing")
