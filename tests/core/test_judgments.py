"""Judgment store: append-only logs, latest per key, metadata join, GT judge, speed."""

from __future__ import annotations

import json

import polars as pl
import pytest

from core.base.errors import DataError, UnknownNameError, WorkbenchError
from core.datasets import write_dataset
from core.judgments import (
    append_judgments,
    get_gt_judge,
    judged_keys,
    judgment_path,
    list_judges,
    load_judgments,
    set_gt_judge,
)
from tests.helpers.judgments import rec, small_dataset


def test_append_load_latest_wins_and_metadata(workspace):
    small_dataset(workspace)
    n = append_judgments(workspace, "d", "G1a", "heuristic-v1",
                         [rec("B2", 1), rec("B1", 3, incident_severity="mild", account_type="firsthand"), rec("B1", 0)])
    assert n == 3
    # a later record for (B1, 3) replaces the first one; the log keeps both
    append_judgments(workspace, "d", "G1a", "heuristic-v1", [rec("B1", 3, incident_severity="severe", account_type="firsthand")])
    assert len(judgment_path(workspace, "d", "G1a", "heuristic-v1").read_text().splitlines()) == 4
    df = load_judgments(workspace, "d", "G1a")
    assert df.select("business_id", "idx").rows() == [("B1", 0), ("B1", 3), ("B2", 1)]  # sorted
    row = df.row(1, named=True)
    assert row["incident_severity"] == "severe" and row["account_type"] == "firsthand"
    # metadata joined from the dataset tables: review 3 of B1 has stars 1 + 3 % 5 = 4, useful 3
    assert (row["review_id"], row["stars"], row["useful"], row["date"]) == ("r1-3", 4.0, 3, "2013-05-01 12:00:00")
    assert (row["name"], row["categories"], row["judge"]) == ("Thai One", "Thai, Restaurants", "heuristic-v1")
    assert df["overridden"].to_list() == [False, False, False]
    for col in ("business_id", "review_id", "idx", "date", "stars", "useful", "name", "categories",
                "incident_severity", "account_type", "safety_interaction", "excerpt", "parse_error", "judge", "overridden"):
        assert col in df.columns


def test_parse_errors_are_kept_and_counted(workspace):
    small_dataset(workspace)
    bad = rec("B1", 2)
    bad["fields"]["incident_severity"] = "extreme"
    bad["parse_error"] = "incident_severity: 'extreme' not in [none, mild, moderate, severe]"
    bad2 = {"business_id": "B1", "idx": 4, "fields": {"incident_severity": 5}, "raw": "{not json",
            "parse_error": "not JSON"}
    append_judgments(workspace, "d", "G1a", "gpt-x", [rec("B1", 1), bad, bad2])
    df = load_judgments(workspace, "d", "G1a", "gpt-x")
    errs = df.filter(pl.col("parse_error").is_not_null())
    assert errs["idx"].to_list() == [2, 4]
    assert errs["incident_severity"].to_list() == ["extreme", "5"]  # recorded as given, never replaced
    assert errs["account_type"].to_list() == ["none", None]
    [info] = list_judges(workspace, "d", "G1a")
    assert (info["judge"], info["n"], info["n_parse_errors"]) == ("gpt-x", 3, 2)


def test_record_without_parse_error_must_be_in_schema(workspace):
    bad = rec("B1", 0)
    bad["fields"]["account_type"] = "thirdhand"
    with pytest.raises(DataError, match="account_type='thirdhand'") as info:
        append_judgments(workspace, "d", "G1a", "j", [rec("B1", 1), bad])
    assert info.value.field == "records[1].fields"
    assert not judgment_path(workspace, "d", "G1a", "j").exists()  # nothing half-written


@pytest.mark.parametrize(
    ("record", "field"),
    [({"idx": 0}, "business_id"), ({"business_id": "B", "idx": -1}, "idx"),
     ({"business_id": "B", "idx": "3"}, "idx"), ({"business_id": "B", "idx": 0, "fields": [1]}, "fields")],
)
def test_bad_records_name_the_field(workspace, record, field):
    with pytest.raises(DataError, match=field):
        append_judgments(workspace, "d", "G1a", "j", [record])


def test_bad_names_rejected(workspace):
    with pytest.raises(UnknownNameError, match="G1a"):
        append_judgments(workspace, "d", "G9z", "j", [rec("B1", 0)])
    for bad in ("", "j\n", " j", "x" * 301):
        with pytest.raises(ValueError, match="invalid judge id"):
            append_judgments(workspace, "d", "G1a", bad, [rec("B1", 0)])
    # any other id is a judge id; its file name stays inside the task folder (issue 9, item 10)
    path = judgment_path(workspace, "d", "G1a", "../evil")
    assert path.parent == workspace.judgments_dir("d", "G1a") and "/" not in path.name


def test_judged_keys_and_torn_line(workspace):
    small_dataset(workspace)
    append_judgments(workspace, "d", "G1a", "j", [rec("B1", 0), rec("B2", 2)])
    path = judgment_path(workspace, "d", "G1a", "j")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"business_id": "B1", "idx": 4, "fiel')  # a writer killed mid-line
    assert judged_keys(workspace, "d", "G1a", "j") == {("B1", 0), ("B2", 2)}
    append_judgments(workspace, "d", "G1a", "j", [rec("B1", 4)])
    assert judged_keys(workspace, "d", "G1a", "j") == {("B1", 0), ("B2", 2), ("B1", 4)}
    assert load_judgments(workspace, "d", "G1a", "j").height == 3
    assert judged_keys(workspace, "d", "G1a", "nobody") == set()


def test_gt_judge_resolution(workspace):
    small_dataset(workspace)
    with pytest.raises(WorkbenchError, match="no judgments"):
        load_judgments(workspace, "d", "G1a")
    append_judgments(workspace, "d", "G1a", "heuristic-v1", [rec("B1", 0)])
    assert get_gt_judge(workspace, "d", "G1a") == "heuristic-v1"  # the only one
    append_judgments(workspace, "d", "G1a", "gpt-4o-mini", [rec("B1", 0), rec("B1", 1)])
    assert get_gt_judge(workspace, "d", "G1a") is None
    with pytest.raises(WorkbenchError, match="several judges.*gpt-4o-mini, heuristic-v1"):
        load_judgments(workspace, "d", "G1a")
    with pytest.raises(UnknownNameError, match="nobody"):
        set_gt_judge(workspace, "d", "G1a", "nobody")
    set_gt_judge(workspace, "d", "G1a", "gpt-4o-mini")
    assert get_gt_judge(workspace, "d", "G1a") == "gpt-4o-mini"
    assert load_judgments(workspace, "d", "G1a").height == 2
    assert load_judgments(workspace, "d", "G1a", "heuristic-v1").height == 1
    judges = {j["judge"]: j for j in list_judges(workspace, "d", "G1a")}
    assert judges["gpt-4o-mini"]["is_gt_judge"] and not judges["heuristic-v1"]["is_gt_judge"]
    settings = json.loads((workspace.judgments_dir("d", "G1a") / "_settings.json").read_text())
    assert settings["gt_judge"] == "gpt-4o-mini"


def test_missing_dataset_is_a_clear_error(workspace):
    append_judgments(workspace, "nod", "G1a", "j", [rec("B1", 0)])
    with pytest.raises(UnknownNameError, match="unknown dataset 'nod'"):
        load_judgments(workspace, "nod", "G1a")


def test_review_missing_from_dataset_keeps_log_review_id(workspace):
    small_dataset(workspace)
    r = rec("B9", 7)
    r["review_id"] = "logged-id"
    append_judgments(workspace, "d", "G1a", "j", [r])
    row = load_judgments(workspace, "d", "G1a").row(0, named=True)
    assert (row["review_id"], row["stars"], row["name"]) == ("logged-id", None, None)


def test_empty_log(workspace):
    small_dataset(workspace)
    append_judgments(workspace, "d", "G1a", "j", [])
    assert list_judges(workspace, "d", "G1a") == []


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_load_100k_sorted_with_every_row(workspace):
    n_rest, per = 1000, 100
    bids = pl.Series([f"B{b:05d}" for b in range(n_rest)])
    reviews = pl.DataFrame({"business_id": bids.repeat_by(per).explode(), "idx": list(range(per)) * n_rest})
    write_dataset(
        workspace, "big", pl.DataFrame({"business_id": bids, "name": bids}),
        reviews.with_columns(review_id=pl.col("business_id") + "-" + pl.col("idx").cast(pl.String),
                             idx=pl.col("idx").cast(pl.Int32), date=pl.lit("2020-01-01 00:00:00"), stars=pl.lit(3.0)),
        sources=[], layout="test",
    )
    sev = ["none", "mild", "moderate", "severe"]
    records = [rec(f"B{b:05d}", i, incident_severity=sev[(b + i) % 4])
               for b in reversed(range(n_rest)) for i in range(per)]
    append_judgments(workspace, "big", "G1a", "j", records)
    df = load_judgments(workspace, "big", "G1a", "j")  # speed: bench/, never a timed unit test
    assert df.height == 100_000
    assert df["business_id"][0] == "B00000" and df["idx"].is_sorted() is False
    assert df.select("business_id", "idx").rows()[:2] == [("B00000", 0), ("B00000", 1)]
    assert df["incident_severity"].value_counts().sort("incident_severity")["count"].to_list() == [25_000] * 4
