"""xnot judgment files: import (with and without texts), export round trip, extraction log, CLIs."""

from __future__ import annotations

import json

import polars as pl
import pytest

from core.base.errors import DataError
from core.cli import main
from core.datasets import require_verified
from core.datasets.importer import import_dataset
from core.judgments import judged_keys, list_judges, load_judgments
from core.judgments.overrides import add_override
from core.judgments.xnot_files import (
    export_xnot_judgments,
    import_xnot_judgments,
    mark_restaurant_done,
    new_extraction_log,
    read_extraction_log,
    synthetic_id,
    write_extraction_log,
)
from core.tasks.keyword_index import build_index, matched_reviews

XNOT_JUDGMENTS = "xnot/semantic_gt/task_G1a/judgments.json"


@pytest.fixture()
def xnot_file(fixtures_dir):
    return fixtures_dir / XNOT_JUDGMENTS


def reviews_ids_synthetic(workspace) -> bool:
    reviews = pl.read_parquet(workspace.dataset_dir("xnot") / "reviews.parquet")
    return bool(reviews["review_id"].str.starts_with("synthetic:").all()
                and reviews["business_id"].str.starts_with("synthetic:").all())


def test_import_creates_dataset_from_judgments(workspace, xnot_file):
    report = import_xnot_judgments(workspace, xnot_file, task="G1a", dataset="xnot")
    assert report == {"task": "G1a", "dataset": "xnot", "judge": "xnot-import-v1", "prompt_version": "v1",
                      "dataset_created": True, "restaurants": 100, "judgments": 2173, "matched": 2173,
                      "unmatched": 0, "unmatched_restaurants": [], "unmatched_by_reason": {},
                      "unmatched_examples": [], "appended": 2173, "unchanged": 0, "parse_errors": 0}
    lock = require_verified(workspace, "xnot")
    assert lock["counts"] == {"restaurants": 100, "reviews": 2173} and lock["layout"] == "judgments"
    rest = pl.read_parquet(workspace.dataset_dir("xnot") / "restaurants.parquet")
    vetri = rest.filter(pl.col("name") == "Vetri Cucina").row(0, named=True)
    # visibly synthetic: never shaped like the real Yelp id (wUnLSg…)
    assert vetri["business_id"] == synthetic_id("Vetri Cucina") and vetri["business_id"].startswith("synthetic:")
    assert reviews_ids_synthetic(workspace)
    assert rest.filter(pl.col("name") == "Thin & Crispy")["n_reviews"].item() == 0  # listed without judgments
    reviews = pl.read_parquet(workspace.dataset_dir("xnot") / "reviews.parquet")
    assert reviews["text"].null_count() == 2173 and reviews["review_id"].n_unique() == 2173
    df = load_judgments(workspace, "xnot", "G1a")
    assert df.height == 2173 and df["parse_error"].null_count() == 2173
    # the xnot file holds 3 mild, 3 moderate, 2 severe; 13 firsthand; 27 positive, 14 negative, 2 betrayal
    counts = {f: dict(df[f].value_counts().rows()) for f in ("incident_severity", "account_type", "safety_interaction")}
    assert counts["incident_severity"] == {"none": 2165, "mild": 3, "moderate": 3, "severe": 2}
    assert counts["account_type"]["firsthand"] == 13
    assert (counts["safety_interaction"]["positive"], counts["safety_interaction"]["betrayal"]) == (27, 2)
    row = df.filter((pl.col("name") == "Aladdin Pizzeria & Eatery") & (pl.col("idx") == 4)).row(0, named=True)
    assert (row["date"], row["stars"], row["useful"], row["prompt_version"]) == ("2017-09-23 01:18:47", 1.0, 0, "v1")
    assert row["created_at"] == "2026-01-10T05:32:12.035498"  # the file's extracted_at
    # re-import: nothing new
    again = import_xnot_judgments(workspace, xnot_file, task="G1a", dataset="xnot")
    assert (again["appended"], again["unchanged"], again["dataset_created"]) == (0, 2173, False)
    assert list_judges(workspace, "xnot", "G1a")[0]["n"] == 2173


def test_round_trip(workspace, xnot_file, tmp_path):
    import_xnot_judgments(workspace, xnot_file, task="G1a", dataset="xnot")
    out = tmp_path / "out.json"
    report = export_xnot_judgments(workspace, "xnot", "G1a", "xnot-import-v1", out)
    assert (report["restaurants"], report["judgments"], report["skipped_parse_errors"]) == (100, 2173, 0)
    original, exported = json.loads(xnot_file.read_text()), json.loads(out.read_text())
    original.pop("extracted_at"), exported.pop("extracted_at")
    assert exported == original


def test_import_into_dataset_with_texts_matches_keyword_index(workspace, fixtures_dir, tmp_path):
    import_dataset(workspace, "k25", fixtures_dir / "xnot/dataset_K25_subset.jsonl")
    names = pl.read_parquet(workspace.dataset_dir("k25") / "restaurants.parquet")["name"].to_list()
    data = json.loads((fixtures_dir / XNOT_JUDGMENTS).read_text())
    data["judgments"] = {n: {**data["judgments"][n], "reviews": [r for r in data["judgments"][n]["reviews"]
                                                                  if r["idx"] < 25]} for n in names}
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(data))
    report = import_xnot_judgments(workspace, sub, task="G1a", dataset="k25", judge="gpt-5-nano")
    assert not report["dataset_created"] and report["judgments"] == 25
    judged = load_judgments(workspace, "k25", "G1a")
    assert judged["review_id"].null_count() == 0 and judged["name"].null_count() == 0
    # xnot judged exactly its keyword-matched reviews: the same (business_id, idx) as our index
    build_index(workspace, "k25")
    matched = matched_reviews(workspace, "k25", "G1a")
    assert set(zip(matched["business_id"], matched["idx"], strict=True)) == judged_keys(workspace, "k25", "G1a", "gpt-5-nano")
    # a date that disagrees with the dataset, or an unknown restaurant: reported, not stored
    first = names[0]
    data["judgments"][first]["reviews"][0]["date"] = "1999-01-01 00:00:00"
    data["judgments"]["Nowhere Diner"] = {"restaurant_meta": {"categories": ""}, "reviews": [
        {"idx": 0, "date": "2020-01-01 00:00:00", "stars": 3.0, "useful": 0, "incident_severity": "none",
         "account_type": "none", "safety_interaction": "none", "excerpt": ""}]}
    sub.write_text(json.dumps(data))
    report = import_xnot_judgments(workspace, sub, task="G1a", dataset="k25", judge="other")
    assert (report["matched"], report["unmatched"]) == (24, 2)
    assert report["unmatched_restaurants"] == ["Nowhere Diner"]
    assert report["unmatched_by_reason"] == {"date differs": 1, "restaurant not in dataset": 1}
    [bad] = report["unmatched_examples"]
    assert bad["name"] == first and "date 1999-01-01 00:00:00 != dataset's" in bad["reason"]
    assert len(judged_keys(workspace, "k25", "G1a", "other")) == 24


def _one(review: dict, **top) -> dict:
    base = {"idx": 0, "date": "2020-01-01 00:00:00", "stars": 4.0, "useful": 1, "incident_severity": "none",
            "account_type": "none", "safety_interaction": "none", "excerpt": ""}
    return {"task_id": "G1a", "extraction_prompt_version": "v7", "extracted_at": "2026-01-01T00:00:00",
            "judgments": {"Café Ü": {"restaurant_meta": {"categories": "Thai"}, "reviews": [{**base, **review}]}},
            **top}


def test_out_of_enum_is_a_parse_error(workspace, tmp_path):
    path = tmp_path / "j.json"
    path.write_text(json.dumps(_one({"incident_severity": "catastrophic"})))
    report = import_xnot_judgments(workspace, path, task="G1a", dataset="tiny")
    assert report["parse_errors"] == 1 and report["judge"] == "xnot-import-v7"
    row = load_judgments(workspace, "tiny", "G1a").row(0, named=True)
    assert row["incident_severity"] == "catastrophic"
    assert "'catastrophic' not in [none, mild, moderate, severe]" in row["parse_error"]
    out = tmp_path / "o.json"
    assert export_xnot_judgments(workspace, "tiny", "G1a", "xnot-import-v7", out)["skipped_parse_errors"] == 1
    assert json.loads(out.read_text())["judgments"]["Café Ü"]["reviews"] == []


@pytest.mark.parametrize(
    ("doc", "match"),
    [(_one({"idx": "3"}), r"field \"judgments\['Café Ü'\].reviews\[0\].idx\": expected an int"),
     (_one({"stars": "four"}), r"reviews\[0\].stars"),
     (_one({}, task_id="G2b"), "file is for task 'G2b'"),
     ({"judgments": []}, "'judgments'")],
)
def test_bad_files_name_the_field(workspace, tmp_path, doc, match):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc, ensure_ascii=False))
    with pytest.raises(DataError, match=match):
        import_xnot_judgments(workspace, path, task="G1a", dataset="tiny")
    assert not workspace.dataset_dir("tiny").exists()


def test_export_with_overrides(workspace, xnot_file, tmp_path):
    import_xnot_judgments(workspace, xnot_file, task="G1a", dataset="xnot")
    bid = synthetic_id("Vetri Cucina")
    add_override(workspace, "xnot", "G1a", business_id=bid, idx=39, corrected={"incident_severity": "severe"},
                 reason="test", author="t")
    out = tmp_path / "o.json"
    export_xnot_judgments(workspace, "xnot", "G1a", "xnot-import-v1", out, apply_overrides=True)
    [r39] = [r for r in json.loads(out.read_text())["judgments"]["Vetri Cucina"]["reviews"] if r["idx"] == 39]
    assert r39["incident_severity"] == "severe"


def test_extraction_log(workspace, fixtures_dir):
    assert read_extraction_log(workspace, "d", "G1a", "gpt-x") is None
    log = new_extraction_log("G1a", 3)
    mark_restaurant_done(log, "Vetri Cucina", 12)
    mark_restaurant_done(log, "Vetri Cucina", 12)  # idempotent
    mark_restaurant_done(log, "Union Trust", 5)
    path = write_extraction_log(workspace, "d", "G1a", "gpt-x", log)
    assert path.name == "gpt-x.extraction_log.json"
    back = read_extraction_log(workspace, "d", "G1a", "gpt-x")
    assert back["completed_restaurants"] == ["Vetri Cucina", "Union Trust"]
    assert back["progress"] == {"restaurants_processed": 2, "restaurants_total": 3, "reviews_extracted": 17}
    assert list_judges(workspace, "d", "G1a") == []  # the log is not a judge
    reference = json.loads((fixtures_dir / "xnot/semantic_gt/task_G1a/extraction_log.json").read_text())
    assert set(reference) == set(log) and set(reference["progress"]) == set(log["progress"])
    write_extraction_log(workspace, "d", "G1a", "xnot", reference)
    assert read_extraction_log(workspace, "d", "G1a", "xnot")["progress"]["reviews_extracted"] == 2173
    path.write_text(json.dumps({**log, "progress": {"restaurants_processed": "2"}}))
    with pytest.raises(DataError, match="extraction_log.json: field 'progress'"):
        read_extraction_log(workspace, "d", "G1a", "gpt-x")


def test_cli_judgments_and_overrides(workspace, xnot_file, fixtures_dir, tmp_path, capsys):
    ws = ["--workspace", str(workspace.root), "--no-progress"]
    assert main([*ws, "judgments", "import", str(xnot_file), "--task", "G1a", "--dataset", "xnot"]) == 0
    assert ("matched 2,173 of 2,173 judgments of 100 restaurants to xnot/G1a as xnot-import-v1 (dataset created "
            "from the file: synthetic ids, no review texts)") in capsys.readouterr().out
    assert main([*ws, "--json", "judgments", "list", "--dataset", "xnot", "--task", "G1a"]) == 0
    [info] = json.loads(capsys.readouterr().out)
    assert (info["judge"], info["n"], info["is_gt_judge"]) == ("xnot-import-v1", 2173, True)
    out = tmp_path / "e.json"
    assert main([*ws, "judgments", "export", "--dataset", "xnot", "--task", "G1a", "--judge", "xnot-import-v1",
                 "--out", str(out)]) == 0
    assert json.loads(out.read_text())["judgments"].keys() == json.loads(xnot_file.read_text())["judgments"].keys()
    assert main([*ws, "judgments", "set-gt", "--dataset", "xnot", "--task", "G1a", "--judge", "nobody"]) == 1
    assert "unknown judge of xnot/G1a 'nobody'; valid: xnot-import-v1" in capsys.readouterr().err
    bid = synthetic_id("Vetri Cucina")
    assert main([*ws, "--json", "overrides", "add", "--dataset", "xnot", "--business-id", bid, "--idx", "39",
                 "--set", "incident_severity=none", "--reason", "checked", "--author", "ana"]) == 0
    oid = json.loads(capsys.readouterr().out)["override_id"]
    assert main([*ws, "overrides", "add", "--dataset", "xnot", "--business-id", bid, "--idx", "39",
                 "--set", "incident_severity=huge", "--reason", "x"]) == 1
    assert "'huge' not in" in capsys.readouterr().err
    assert main([*ws, "overrides", "revert", oid, "--dataset", "xnot", "--reason", "oops", "--author", "bo"]) == 0
    capsys.readouterr()
    assert main([*ws, "--json", "overrides", "list", "--dataset", "xnot"]) == 0
    assert [r["status"] for r in json.loads(capsys.readouterr().out)] == ["reverted", "revert"]
    ov = fixtures_dir / "dev-ADDM/answers/judgment_overrides.json"
    assert main([*ws, "overrides", "import", str(ov), "--dataset", "xnot"]) == 0
    assert "imported 8 of 8 overrides of G1_allergy (0 already present, 8 reviews not in xnot)" in capsys.readouterr().out
