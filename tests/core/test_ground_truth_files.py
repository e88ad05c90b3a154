"""GT files (SPEC §3.3/§3.4), compute_gt on a workspace with overrides, and ``python -m core gt``."""

from __future__ import annotations

import json

import polars as pl
import pytest

from core.base.errors import DataError
from core.cli import main
from core.ground_truth import (
    addm_payload,
    compute_gt,
    compute_gt_frame,
    compute_policy_gt_frame,
    distribution_by_k,
    gt_filename,
    import_gt_file,
    list_gt_files,
    load_gt_file,
    write_gt_file,
    xnot_payload,
)
from core.ground_truth.policies.loader import get_policy
from tests.helpers.formula_cases import CASE, RESTAURANTS


def test_filenames():
    assert gt_filename("v1", None, "xnot") == "computed_gt.json"
    assert gt_filename("v1", 25, "xnot") == "computed_gt_k25.json"
    assert gt_filename("v2", 200, "xnot") == "computed_gt_k200_v2.json"
    assert gt_filename("G1_allergy_V2", 50, "addm") == "G1_allergy_V2_K50_groundtruth.json"
    assert gt_filename("G1_allergy_V2", None, "addm") == "G1_allergy_V2_Kall_groundtruth.json"


def test_xnot_payload_layout():
    frame = compute_gt_frame(CASE, RESTAURANTS, "v1", [25, None])
    doc = xnot_payload(frame, task_id="G1a", k=25, computed_at="2026-01-01T00:00:00")
    assert list(doc) == ["task_id", "computed_at", "formula_version", "k", "k_requested", "restaurants", "summary"]
    assert (doc["formula_version"], doc["k"]) == ("v1", 25)
    assert list(doc["restaurants"]) == ["Alpha Thai", "Beta Pizza", "Gamma"]
    assert doc["restaurants"]["Alpha Thai"]["n_moderate"] == 1 and doc["restaurants"]["Alpha Thai"]["verdict"] == "Critical Risk"
    assert doc["summary"] == {"total_restaurants": 3,
                              "verdict_distribution": {"Low Risk": 2, "High Risk": 0, "Critical Risk": 1}}
    twins = RESTAURANTS.with_columns(pl.lit("Same").alias("name"))
    doc = xnot_payload(compute_gt_frame(CASE, twins, "v1", [None]), task_id="G1a", k=None)
    assert sorted(doc["restaurants"]) == ["Same [a]", "Same [b]", "Same [c]"]


def test_addm_round_trip(workspace, tmp_path):
    frame = compute_policy_gt_frame(CASE, RESTAURANTS, "G1_allergy_V2", [25])
    doc = addm_payload(frame, k=25, policy=get_policy("G1_allergy_V2", None))
    assert doc["policy_id"] == "G1_allergy_V2" and doc["k"] == 25
    gt = doc["restaurants"]["a"]["ground_truth"]
    assert (gt["verdict"], gt["score"], gt["n_incidents"], gt["cuisine_modifier"]) == ("Critical Risk", 12, 2, True)
    assert gt["incidents"][0] == {"review_id": "a-0", "severity": "moderate", "base_points": 5,
                                  "modifiers": ["Dismissive staff"], "total_points": 8}
    path = write_gt_file(tmp_path / gt_filename("G1_allergy_V2", 25, "addm"), doc)
    entry = import_gt_file(workspace, path, dataset="d1")
    assert entry["name"] == "imported/d1/G1_allergy_V2_K25_groundtruth.json"
    loaded = load_gt_file(entry["path"], None).sort("business_id")
    assert loaded["verdict"].to_list() == frame.sort("business_id")["verdict"].to_list()
    assert loaded["score"].to_list() == frame.sort("business_id")["score"].to_list()
    assert loaded.filter(pl.col("business_id") == "a")["incidents"][0][0]["modifiers"] == ["Dismissive staff"]
    meta = json.loads((workspace.gt_dir / (entry["name"] + ".meta.json")).read_text())
    assert meta["layout"] == "addm" and len(meta["sha256"]) == 64


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"bad.json:1: not valid JSON"),
        ('{"x": 1}', "expected an object with a 'restaurants' object"),
        ('{"restaurants": {"a": {}}}', "unknown GT layout"),
        ('{"policy_id": "P", "restaurants": {"a": {"ground_truth": {"verdict": "Meh"}}}}',
         r"field 'restaurants.a.ground_truth.verdict': verdict 'Meh'"),
        ('{"policy_id": "P", "restaurants": {"a": {"ground_truth": {"verdict": "Low Risk", "score": "x"}}}}',
         "score 'x' is not a number"),
        ('{"formula_version": "v1", "restaurants": {"A": {"verdict": "Low Risk", "incidents": [{}]}}}',
         r"field 'restaurants.A.incidents\[0\]': an incident needs a severity"),
    ],
)
def test_bad_gt_files(workspace, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DataError, match=message):
        import_gt_file(workspace, path)
    assert list_gt_files(workspace) == []


# -- workspace + CLI -------------------------------------------------------------------------------
@pytest.fixture()
def gt_workspace(workspace, tmp_path):
    """Dataset "d" with CASE's restaurants and reviews, and CASE as heuristic-v1 judgments."""
    from core.datasets import write_dataset
    from core.judgments import append_judgments

    reviews = CASE.select("business_id", "review_id", pl.col("idx").cast(pl.Int32), "date", "stars", "useful")
    reviews = reviews.with_columns(pl.concat_str(pl.lit("review text "), pl.col("review_id")).alias("text"))
    source = tmp_path / "source.json"
    source.write_text("test")
    write_dataset(workspace, "d", RESTAURANTS, reviews, sources=[source], layout="test")
    fields = ("incident_severity", "account_type", "safety_interaction")
    append_judgments(workspace, "d", "G1a", "heuristic-v1", [
        {"business_id": r["business_id"], "review_id": r["review_id"], "idx": r["idx"],
         "fields": {f: r[f] for f in fields}, "excerpt": ""} for r in CASE.to_dicts()
    ])
    return workspace


def test_compute_gt_applies_overrides(gt_workspace):
    from core.judgments.overrides import add_override, revert_override

    before = compute_gt(gt_workspace, "d", "G1a", "v1", [None]).filter(pl.col("business_id") == "a").row(0, named=True)
    assert before["n_moderate"] == 1 and before["verdict"] == "Critical Risk"
    override = add_override(gt_workspace, "d", "G1a", business_id="a", idx=0, reason="no reaction", author="t",
                            corrected={"incident_severity": "none", "safety_interaction": "none"})
    after = compute_gt(gt_workspace, "d", "G1a", "v1", [None]).filter(pl.col("business_id") == "a").row(0, named=True)
    assert after["n_moderate"] == 0 and after["n_negative"] == 0
    assert after["judgments_sha256"] != before["judgments_sha256"]
    policy = compute_gt(gt_workspace, "d", "G1a", "G1_allergy_V2", [None]).filter(pl.col("business_id") == "a")
    assert policy["score"][0] == 4.0  # mild 2 + cuisine 2: the overridden moderate is gone for policies too
    revert_override(gt_workspace, "d", "G1a", override["override_id"], reason="undo", author="t")
    again = compute_gt(gt_workspace, "d", "G1a", "v1", [None]).filter(pl.col("business_id") == "a").row(0, named=True)
    assert again["judgments_sha256"] == before["judgments_sha256"]
    with pytest.raises(ValueError, match="is a G1a definition, not G2a"):
        compute_gt(gt_workspace, "d", "G2a", "v1", [None])


def run_cli(ws, *argv, capsys) -> tuple[int, str, str]:
    code = main(["--workspace", str(ws.root), "--no-progress", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_compute_import_list_trace(gt_workspace, capsys, tmp_path):
    code, out, _ = run_cli(gt_workspace, "gt", "--dataset", "d", "--task", "G1a", "--formula", "v1", "--k", "all", capsys=capsys)
    assert code == 0 and "wrote" in out
    written = gt_workspace.gt_dir / "d" / "G1a" / "computed_gt.json"
    doc = json.loads(written.read_text())
    assert doc["k"] is None and doc["formula_version"] == "v1" and len(doc["judgments_sha256"]) == 64
    assert doc["restaurants"]["Alpha Thai"]["raw_risk"] == 23.189

    code, out, _ = run_cli(gt_workspace, "--json", "gt", "--dataset", "d", "--formula", "v2", "--k", "1,2,all", capsys=capsys)
    report = json.loads(out)
    assert [d["k"] for d in report["distribution"]] == [1, 2, None] and len(report["files"]) == 3
    assert (gt_workspace.gt_dir / "d" / "G1a" / "computed_gt_k2_v2.json").exists()

    out_file = tmp_path / "v1_addm.json"
    code, _, _ = run_cli(gt_workspace, "gt", "--dataset", "d", "--formula", "v1", "--k", "2", "--format", "addm",
                         "--out", str(out_file), capsys=capsys)
    entry = json.loads(out_file.read_text())["restaurants"]["a"]
    assert entry["n_reviews"] == 2 and entry["categories"] == "Thai, Restaurants"
    assert [i["severity"] for i in entry["ground_truth"]["incidents"]] == ["moderate", "mild"]

    code, out, _ = run_cli(gt_workspace, "gt", "--dataset", "d", "--formula", "G1_allergy_V1", "--k", "25", capsys=capsys)
    assert code == 0 and (gt_workspace.gt_dir / "d" / "G1a" / "G1_allergy_V1_K25_groundtruth.json").exists()

    code, out, _ = run_cli(gt_workspace, "gt", "import", str(out_file), "--dataset", "d", capsys=capsys)
    assert code == 0 and "imported addm GT v1" in out
    code, out, _ = run_cli(gt_workspace, "--json", "gt", "list", capsys=capsys)
    names = [f["name"] for f in json.loads(out)]
    assert "imported/d/v1_addm.json" in names and "d/G1a/computed_gt.json" in names

    code, out, _ = run_cli(gt_workspace, "gt", "trace", "--dataset", "d", "--k", "all", "--restaurant", "Alpha Thai",
                           capsys=capsys)
    assert code == 0 and "incident_impact = 18.999" in out and "idx 0 2024-06-01" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("gt", "import"), "gt import needs a FILE"),
        (("gt", "--k", "25"), "gt compute needs --dataset"),
        (("gt", "--dataset", "d", "--k", "0"), "invalid K"),
        (("gt", "--dataset", "d", "--formula", "v7"), "unknown formula, policy or saved variant 'v7'"),
        (("gt", "trace", "--dataset", "d"), "needs --restaurant"),
        (("gt", "list", "extra"), "only `gt import FILE` takes a file"),
    ],
)
def test_cli_errors(gt_workspace, capsys, argv, message):
    code, _, err = run_cli(gt_workspace, *argv, capsys=capsys)
    assert code == 1 and message in err


def test_k_larger_than_the_reviews_is_said_everywhere(gt_workspace, capsys):
    """Restaurant a has 4 reviews, b and c none: K=2 leaves b and c short, K=25 all three."""
    code, out, _ = run_cli(gt_workspace, "gt", "--dataset", "d", "--formula", "v1", "--k", "2,25", capsys=capsys)
    assert code == 0
    assert ("warning: 2 of 3 restaurants have fewer than K=2 reviews; 3 of 3 restaurants have fewer than K=25 "
            "reviews: their GT at those K uses the reviews they have") in out
    doc = json.loads((gt_workspace.gt_dir / "d" / "G1a" / "computed_gt_k25.json").read_text())
    assert (doc["k"], doc["k_requested"], doc["restaurants_short_of_k"]) == (25, 25, 3)
    assert {n: r["n_reviews"] for n, r in doc["restaurants"].items()} == {"Alpha Thai": 4, "Beta Pizza": 0, "Gamma": 0}
    same = compute_gt(gt_workspace, "d", "G1a", "v1", [25]).filter(pl.col("name") == "Alpha Thai")
    assert doc["restaurants"]["Alpha Thai"]["final_risk_score"] == same["final_risk_score"][0]  # numbers unchanged
    code, out, _ = run_cli(gt_workspace, "--json", "gt", "--dataset", "d", "--formula", "G1_allergy_V2", "--k", "3",
                           capsys=capsys)
    report = json.loads(out)
    assert report["restaurants_short_of_k"] == [{"k": 3, "n": 2}] and "fewer than K=3" in report["warning"]
    addm = json.loads((gt_workspace.gt_dir / "d" / "G1a" / "G1_allergy_V2_K3_groundtruth.json").read_text())
    assert (addm["k_requested"], addm["restaurants_short_of_k"], addm["restaurants"]["a"]["n_reviews"]) == (3, 2, 3)
    code, out, _ = run_cli(gt_workspace, "gt", "--dataset", "d", "--formula", "v1", "--k", "all", capsys=capsys)
    assert "warning" not in out  # K = all never falls short


def test_cli_computes_a_saved_variant_and_stamps_its_name_and_hash(gt_workspace, capsys):
    from core.ground_truth.variants import constants_sha256, load_variant, save_variant

    save_variant(gt_workspace, "strict", "v1", {"CRITICAL_THRESHOLD": 30.0})
    code, out, _ = run_cli(gt_workspace, "gt", "--dataset", "d", "--formula", "strict", "--k", "all", capsys=capsys)
    assert code == 0 and "GT strict of d/G1a" in out
    doc = json.loads((gt_workspace.gt_dir / "d" / "G1a" / "computed_gt_strict.json").read_text())
    assert doc["variant"] == "strict" and doc["variant_constants_sha256"] == constants_sha256(
        load_variant(gt_workspace, "strict"))
    assert doc["formula_version"].startswith("v1+whatif-")
    committed = compute_gt(gt_workspace, "d", "G1a", "v1", [None]).filter(pl.col("name") == "Alpha Thai")
    alpha = doc["restaurants"]["Alpha Thai"]  # raw score 23.19 stays; Critical needs 30 now
    assert committed["verdict"][0] == "Critical Risk" and alpha["verdict"] == "High Risk"
    assert alpha["final_risk_score"] == committed["final_risk_score"][0]
    code, _, err = run_cli(gt_workspace, "gt", "--dataset", "d", "--formula", "nope", capsys=capsys)
    assert code == 1 and "strict" in err  # the error lists saved variants too
    with pytest.raises(ValueError, match="committed formula or policy"):
        save_variant(gt_workspace, "v2", "v1", {"CRITICAL_THRESHOLD": 30.0})


def test_a_variant_in_the_addm_layout_lists_its_own_severity_points(gt_workspace, capsys):
    """A formula variant's incidents carried the committed points (moderate 5) in the ADDM layout."""
    from core.ground_truth.variants import save_variant

    save_variant(gt_workspace, "heavy", "v1", {"SEVERITY_POINTS.moderate": 9})
    code, _, _ = run_cli(gt_workspace, "gt", "--dataset", "d", "--formula", "heavy", "--k", "all",
                         "--format", "addm", capsys=capsys)
    assert code == 0
    (path,) = (gt_workspace.gt_dir / "d" / "G1a").glob("heavy_*groundtruth.json")
    doc = json.loads(path.read_text())
    incident = next(i for r in doc["restaurants"].values() for i in r["ground_truth"]["incidents"]
                    if i["severity"] == "moderate")
    assert incident["base_points"] == incident["total_points"] == 9


def test_distribution_counts_every_restaurant(gt_workspace):
    frame = compute_gt(gt_workspace, "d", "G1a", "v1", "1,all")
    assert distribution_by_k(frame)["total"].to_list() == [3, 3]
