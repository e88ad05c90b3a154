"""``policies import/list/show``, generic ``judgments import`` and ``gt --format addm`` for an
imported task, end to end through the CLI (SPEC §2.4, §3.3b)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from core.cli import main

pytestmark = pytest.mark.fixtures


@pytest.fixture()
def business_ws(tmp_path, fixtures_dir, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_WORKSPACE", str(tmp_path / "ws"))
    ws = str(tmp_path / "ws")
    assert main(["--no-progress", "--workspace", ws, "datasets", "import",
                 str(fixtures_dir / "dev-ADDM/dataset_K25_subset.jsonl"), "--name", "d"]) == 0
    head = fixtures_dir / "dev-ADDM/head"
    assert main(["--workspace", ws, "policies", "import", str(head / "policies/G2"), "--terms", str(head / "terms")]) == 0
    assert "imported 4 policies" in capsys.readouterr().out
    return tmp_path / "ws", None


def test_import_json_report_and_list_show(tmp_path, fixtures_dir, capsys, monkeypatch):
    monkeypatch.setenv("WORKBENCH_WORKSPACE", str(tmp_path))
    head = fixtures_dir / "dev-ADDM/head"
    assert main(["--workspace", str(tmp_path), "policies", "import", str(head / "policies"), "--terms",
                 str(head / "terms"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"imported", "replaces_builtin", "unchanged", "code_differs", "errors"} and out["errors"] == []
    # read as their text says: where ADDM's code would read them otherwise (docs/policies.md)
    assert out["code_differs"]["G1_allergy_V2"] == ["requires"] and out["code_differs"]["G2_business_V4"] == [
        "firsthand-only scoring", "recency"]
    assert len(out["imported"]) == 12 and out["replaces_builtin"] == ["G1_allergy_V1", "G1_allergy_V2", "G1_allergy_V3"]
    assert main(["--workspace", str(tmp_path), "policies", "list", "--task", "G2_business"]) == 0
    listed = capsys.readouterr().out
    assert "G2_business_V3" in listed and "Not Recommended < Acceptable < Recommended" in listed
    assert main(["--workspace", str(tmp_path), "policies", "show", "G2_business_V3"]) == 0
    shown = capsys.readouterr().out
    assert "score ≤ 170" in shown and "K=25: 70" in shown and "points per meeting_outcome" in shown
    assert main(["--workspace", str(tmp_path), "policies", "list", "--task", "G1_allergy"]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("G1_allergy_")]
    assert [line.split()[0] for line in listed] == [f"G1_allergy_V{i}" for i in range(1, 5)]
    assert ["in force instead of the built-in" in line for line in listed] == [True, True, True, False]
    assert main(["--workspace", str(tmp_path), "--json", "policies", "show", "G1_allergy_V1"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["replaces_builtin"] is True and shown["task"] == "G1_allergy"
    assert main(["--workspace", str(tmp_path), "policies", "show", "G9_nothing_V1"]) == 1
    assert "valid: G1_allergy_V0" in capsys.readouterr().err


def test_generic_judgments_and_addm_gt(business_ws, tmp_path, capsys):
    ws, _ = business_ws
    reviews = pl.read_parquet(ws / "datasets/d/reviews.parquet").sort("business_id", "idx")
    lines = []
    for n, r in enumerate(reviews.iter_rows(named=True)):
        outcome = ["positive", "neutral", "negative"][n % 3]
        fields = {"meeting_outcome": outcome, "service_efficiency": "efficient", "conversation_suitability": "good",
                  "privacy_level": "none", "professionalism": "good", "account_type": "firsthand",
                  "is_relevant": n % 5 != 0}
        if n == 1:
            fields["meeting_outcome"] = "fantastic"  # out of enum: a parse error kept with its line
        lines.append(json.dumps({"business_id": r["business_id"], "review_id": r["review_id"], "fields": fields}))
    src = tmp_path / "judged.jsonl"
    src.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["--workspace", str(ws), "--json", "judgments", "import", str(src), "--dataset", "d",
                 "--task", "G2_business", "--judge", "mine"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["judgments"], report["parse_errors"]) == (125, 1)
    assert report["errors"] == ["judged.jsonl:2: meeting_outcome: 'fantastic' not in [negative, neutral, positive]"]
    out = tmp_path / "gt.json"
    assert main(["--workspace", str(ws), "gt", "--dataset", "d", "--task", "G2_business", "--formula", "G2_business_V1",
                 "--k", "25", "--judge", "mine", "--format", "addm", "--out", str(out)]) == 0
    gt = json.loads(out.read_text())
    assert gt["policy_id"] == "G2_business_V1" and gt["k"] == 25
    assert set(gt["summary"]["verdict_distribution"]) == {"Not Recommended", "Acceptable", "Recommended"}
    entry = next(iter(gt["restaurants"].values()))
    assert set(entry["ground_truth"]) >= {"verdict", "matched_rule", "incidents"}
    # every relevant review says service_efficiency = efficient: per restaurant ≥ 4 of 25 at K25
    # (a review in five is irrelevant, one has a parse error) → "efficient service ≥ 4" → Recommended
    assert {e["ground_truth"]["verdict"] for e in gt["restaurants"].values()} == {"Recommended"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n" + lines[1].replace(reviews["review_id"][1], "nope") + "\n")
    assert main(["--workspace", str(ws), "judgments", "import", str(bad), "--dataset", "d", "--task", "G2_business",
                 "--judge", "other"]) == 1
    assert "bad.jsonl:2: field 'review_id': no review 'nope'" in capsys.readouterr().err
    assert not (ws / "judgments/d/G2_business/other.jsonl").exists()
