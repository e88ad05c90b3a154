"""Human overrides: add, revert, list, active, applied by load_judgments, ADDM import."""

from __future__ import annotations

import json

import polars as pl
import pytest

from core.base.errors import DataError, UnknownNameError, WorkbenchError
from core.judgments import append_judgments, load_judgments
from core.judgments.overrides import (
    active_overrides,
    add_override,
    import_addm_overrides,
    list_overrides,
    revert_override,
)
from tests.helpers.judgments import rec, small_dataset, write_tables


@pytest.fixture()
def ws(workspace):
    small_dataset(workspace)
    append_judgments(workspace, "d", "G1a", "heuristic-v1", [
        rec("B1", 1, incident_severity="moderate", account_type="firsthand"),
        rec("B1", 3),
        rec("B2", 0, safety_interaction="positive"),
    ])
    return workspace


def test_add_applies_and_keeps_judgments(ws):
    o = add_override(ws, "d", "G1a", business_id="B1", idx=1, corrected={"incident_severity": "none"},
                     reason="bedbug bites, not an allergy", author="ana")
    assert o["original"] == {"incident_severity": "moderate", "account_type": "firsthand", "safety_interaction": "none"}
    assert (o["review_id"], o["reverts"]) == ("r1-1", None)
    df = load_judgments(ws, "d", "G1a")
    row = df.filter(pl.col("idx") == 1).row(0, named=True)
    assert (row["incident_severity"], row["account_type"], row["overridden"], row["override_id"]) == (
        "none", "firsthand", True, o["override_id"])
    assert df["overridden"].sum() == 1
    raw = load_judgments(ws, "d", "G1a", apply_overrides=False)
    assert raw.filter(pl.col("idx") == 1)["incident_severity"].item() == "moderate"  # judgment untouched


def test_add_by_review_id_and_later_override_merges(ws):
    add_override(ws, "d", "G1a", review_id="r1-3", corrected={"incident_severity": "mild"}, reason="a", author="ana")
    add_override(ws, "d", "G1a", business_id="B1", idx=3, corrected={"account_type": "firsthand",
                 "incident_severity": "severe"}, reason="b", author="bo")
    [active] = active_overrides(ws, "d", "G1a")
    assert active["corrected"] == {"incident_severity": "severe", "account_type": "firsthand"}
    assert len(active["override_ids"]) == 2 and active["author"] == "bo"
    row = load_judgments(ws, "d", "G1a").filter(pl.col("idx") == 3).row(0, named=True)
    assert (row["incident_severity"], row["account_type"]) == ("severe", "firsthand")


def test_revert_keeps_history(ws):
    o = add_override(ws, "d", "G1a", business_id="B2", idx=0, corrected={"safety_interaction": "negative"},
                     reason="staff refused", author="ana")
    r = revert_override(ws, "d", "G1a", o["override_id"], reason="misread", author="bo")
    assert r["reverts"] == o["override_id"]
    listed = list_overrides(ws, "d", "G1a")
    assert [x["status"] for x in listed] == ["reverted", "revert"]
    assert listed[0]["reverted_by"] == r["override_id"]
    assert [(x["author"], x["reason"]) for x in listed] == [("ana", "staff refused"), ("bo", "misread")]
    assert all(x["created_at"] for x in listed)
    assert active_overrides(ws, "d", "G1a") == []
    row = load_judgments(ws, "d", "G1a").filter(pl.col("business_id") == "B2").row(0, named=True)
    assert (row["safety_interaction"], row["overridden"]) == ("positive", False)
    with pytest.raises(WorkbenchError, match="already reverted"):
        revert_override(ws, "d", "G1a", o["override_id"], reason="x", author="y")
    with pytest.raises(UnknownNameError, match="override"):
        revert_override(ws, "d", "G1a", r["override_id"], reason="x", author="y")  # a revert is not revertible


@pytest.mark.parametrize(
    ("corrected", "match"),
    [({"incident_severity": "extreme"}, "'extreme' not in"), ({"is_allergy_related": True}, "not a G1a field"),
     ({}, "non-empty")],
)
def test_add_validates_against_schema(ws, corrected, match):
    with pytest.raises(DataError, match=match):
        add_override(ws, "d", "G1a", business_id="B1", idx=1, corrected=corrected, reason="r", author="a")
    assert list_overrides(ws, "d", "G1a") == []


def test_add_needs_existing_review_reason_author(ws):
    with pytest.raises(WorkbenchError, match="no review"):
        add_override(ws, "d", "G1a", business_id="B1", idx=99, corrected={"account_type": "none"}, reason="r", author="a")
    with pytest.raises(ValueError, match="reason and an author"):
        add_override(ws, "d", "G1a", business_id="B1", idx=1, corrected={"account_type": "none"}, reason=" ", author="a")


def test_override_fixes_parse_error(ws):
    bad = rec("B1", 4)
    bad["fields"]["incident_severity"] = "extreme"
    bad["parse_error"] = "incident_severity: 'extreme' not in enum"
    append_judgments(ws, "d", "G1a", "heuristic-v1", [bad])
    before = load_judgments(ws, "d", "G1a").filter(pl.col("idx") == 4)
    assert before["parse_error"].item() is not None
    add_override(ws, "d", "G1a", business_id="B1", idx=4, corrected={"incident_severity": "mild"}, reason="r", author="a")
    after = load_judgments(ws, "d", "G1a").filter(pl.col("idx") == 4).row(0, named=True)
    assert (after["incident_severity"], after["parse_error"], after["overridden"]) == ("mild", None, True)


def test_addm_import(workspace, fixtures_dir):
    path = fixtures_dir / "dev-ADDM/answers/judgment_overrides.json"
    entries = json.loads(path.read_text())["G1_allergy"]
    # a dataset holding two of the eight reviews (one under another idx), with judgments
    write_tables(
        workspace, "addm",
        [{"business_id": entries[0]["business_id"], "name": "A"}, {"business_id": entries[2]["business_id"], "name": "B"}],
        [{"business_id": entries[0]["business_id"], "review_id": entries[0]["review_id"], "idx": 4},
         {"business_id": entries[2]["business_id"], "review_id": entries[2]["review_id"], "idx": 0}],
    )
    append_judgments(workspace, "addm", "G1a", "j", [
        rec(entries[0]["business_id"], 4, incident_severity="severe", account_type="firsthand"),
        rec(entries[2]["business_id"], 0, incident_severity="moderate", account_type="firsthand"),
    ])
    report = import_addm_overrides(workspace, "addm", path)
    assert (report["total"], report["imported"], report["already_present"], report["without_idx"]) == (8, 8, 0, 6)
    assert report["skipped_fields"] == {}  # corrected only touches incident_severity in G1_allergy
    listed = list_overrides(workspace, "addm", "G1a")
    assert listed[0]["original"] == {"incident_severity": "severe", "is_allergy_related": True}  # kept as given
    assert listed[0]["idx"] == 4 and listed[1]["idx"] is None
    assert {x["author"] for x in listed} == {"addm-import"}
    df = load_judgments(workspace, "addm", "G1a")
    assert df["incident_severity"].to_list() == ["none", "none"]
    assert df["overridden"].all()
    again = import_addm_overrides(workspace, "addm", path)
    assert (again["imported"], again["already_present"]) == (0, 8)


def test_addm_import_reports_unmapped_and_bad_values(workspace, tmp_path):
    path = tmp_path / "ov.json"
    path.write_text(json.dumps({"G1_allergy": [
        {"review_id": "x1", "business_id": "b", "original": {"date_outcome": "negative"},
         "corrected": {"date_outcome": "neutral", "is_relevant": False, "account_type": "none"}, "reason": "r"},
    ], "U": [{"review_id": "x2", "business_id": "b", "corrected": {"incident_severity": "huge"}}]}))
    report = import_addm_overrides(workspace, "nods", path, topic="G1_allergy")
    assert report["skipped_fields"] == {"date_outcome": 1, "is_relevant": 1}
    assert report["imported"] == 1 and report["without_idx"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"G1_allergy": [{"review_id": "x2", "business_id": "b",
                                               "corrected": {"incident_severity": "huge"}}]}))
    with pytest.raises(DataError, match=r"bad.json.*G1_allergy\[0\].corrected.incident_severity.*'huge'"):
        import_addm_overrides(workspace, "nods", bad, topic="G1_allergy")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"T": [], "U": []}))
    with pytest.raises(UnknownNameError, match="T, U"):
        import_addm_overrides(workspace, "nods", other, topic="G1_allergy")


def test_add_without_judgments_records_an_empty_original(workspace):
    small_dataset(workspace)  # nothing judged yet: there is no original to record
    o = add_override(workspace, "d", "G1a", business_id="B1", idx=1, corrected={"incident_severity": "none"},
                     reason="r", author="ana")
    assert o["original"] == {}


def test_add_with_a_broken_judgment_log_raises_naming_the_file(ws):
    from core.judgments.store import judgment_path

    log = judgment_path(ws, "d", "G1a", "heuristic-v1")
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text(lines[0] + "{broken\n" + "".join(lines[1:]), encoding="utf-8")  # damage mid-log
    with pytest.raises(DataError, match=rf"{log.name}:2: not valid JSON"):
        add_override(ws, "d", "G1a", business_id="B1", idx=1, corrected={"incident_severity": "none"},
                     reason="r", author="ana")
    assert not ws.overrides_path("d", "G1a").exists()  # nothing recorded with a wrong (empty) original


def test_a_broken_override_log_raises_where_judgments_are_loaded(ws):
    path = ws.overrides_path("d", "G1a")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"override_id": "a"\n{"override_id": "b"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=rf"{path.name}:1: not valid JSON"):
        load_judgments(ws, "d", "G1a")  # never silently as if there were no overrides
    assert load_judgments(ws, "d", "G1a", apply_overrides=False).height == 3
