"""What-if constants and named variants (core/variants): flat view, changes, policies, storage."""

from __future__ import annotations

import json

import polars as pl
import pytest

from core.base.errors import DataError, UnknownNameError
from core.ground_truth import FORMULAS, compute_gt_frame, compute_policy_gt_frame, get_policy, variants

# One restaurant, one severe firsthand incident (4 stars, 0 useful → weight 1) in 2025, Thai.
JUDGMENTS = pl.DataFrame({
    "business_id": ["a"], "idx": [0], "date": ["2025-01-01 00:00:00"], "stars": [4.0], "useful": [0],
    "review_id": ["r0"], "incident_severity": ["severe"], "account_type": ["firsthand"],
    "safety_interaction": ["none"],
})
RESTAURANTS = pl.DataFrame({"business_id": ["a"], "name": ["A"], "categories": ["Thai"]})


def test_committed_constants_flatten_tables_and_skip_text():
    flat = variants.committed_constants("v1")
    assert flat["SEVERITY_POINTS.severe"] == 15 and flat["CUISINE_RISK.Thai"] == 2.0
    assert flat["HIGH_THRESHOLD"] == 4.0 and "INCIDENT_ACCOUNT_TYPE" not in flat
    assert "SEVERITY_POINTS" not in flat
    assert "TRUST_POSITIVE" in variants.committed_constants("v2")


def test_constant_specs_are_grouped_with_integer_steps():
    specs = {s.key: s for s in variants.constant_specs("v1")}
    assert specs["SEVERITY_POINTS.mild"].group == "Severity points" and specs["SEVERITY_POINTS.mild"].is_int
    assert specs["SEVERITY_POINTS.mild"].step == 1
    assert specs["CRITICAL_THRESHOLD"].group == "Thresholds" and specs["CRITICAL_THRESHOLD"].step == 0.5
    assert specs["DECAY_PER_YEAR"].group == "Recency decay" and specs["DECAY_PER_YEAR"].step == 0.05
    assert specs["CUISINE_RISK.Thai"].group == "Cuisine risk" and specs["BASE_RISK"].group == "Weights"
    groups = [s.group for s in variants.constant_specs("v1")]
    assert groups == sorted(groups, key=variants.GROUPS.index)


def test_changed_constants_keep_only_differences_and_validate():
    assert variants.changed_constants("v1", {"HIGH_THRESHOLD": 4.0, "SEVERITY_POINTS.mild": 3.0}) == {
        "SEVERITY_POINTS.mild": 3}
    assert isinstance(variants.changed_constants("v1", {"SEVERITY_POINTS.mild": 3.0})["SEVERITY_POINTS.mild"], int)
    assert variants.changed_constants("v1", {"SEVERITY_POINTS.mild": 2.5}) == {"SEVERITY_POINTS.mild": 2.5}
    with pytest.raises(ValueError, match="unknown constant 'NOPE'"):
        variants.changed_constants("v1", {"NOPE": 1})
    with pytest.raises(ValueError, match="finite number"):
        variants.changed_constants("v1", {"BASE_RISK": float("nan")})
    with pytest.raises(ValueError, match="finite number"):
        variants.changed_constants("v1", {"BASE_RISK": "3"})
    with pytest.raises(UnknownNameError):
        variants.changed_constants("v9", {})


def test_formula_whatif_equals_explicit_constants():
    d, constants = variants.whatif_definition("v1", {"SEVERITY_POINTS.severe": 5, "DECAY_PER_YEAR": 0.2}, None)
    assert d is FORMULAS["v1"]
    assert constants == {"SEVERITY_POINTS": {"mild": 2, "moderate": 5, "severe": 5}, "DECAY_PER_YEAR": 0.2}
    got = compute_gt_frame(JUDGMENTS, RESTAURANTS, d, [None], constants=constants)
    want = compute_gt_frame(JUDGMENTS, RESTAURANTS, "v1", [None], constants=constants)
    assert got.equals(want)
    # 2.5 + 5·1 (age 0)·1 + 0.5·2 (Thai) − 0 = 8.5 → Critical; the committed severe 15 gives 18.5
    assert got["final_risk_score"][0] == 8.5
    assert FORMULAS["v1"].constants["SEVERITY_POINTS"]["severe"] == 15  # registry untouched
    assert variants.whatif_definition("v1", {"BASE_RISK": 2.5}, None) == (FORMULAS["v1"], None)


def test_threshold_whatif_moves_the_verdict():
    d, constants = variants.whatif_definition("v1", {"CRITICAL_THRESHOLD": 20.0}, None)
    frame = compute_gt_frame(JUDGMENTS, RESTAURANTS, d, [None], constants=constants)
    assert (frame["final_risk_score"][0], frame["verdict"][0]) == (18.5, "High Risk")


def test_policy_whatif_changes_points_and_rules_on_a_copy():
    policy = get_policy("G1_allergy_V2", None)
    flat = variants.committed_constants(policy)
    assert flat["SEVERITY.severe"] == 15 and flat["RULE.Critical Risk.0"] == 8
    assert flat["RESTAURANT.High-risk cuisine"] == 2 and flat["MODIFIER.False assurance"] == 5
    changed, none = variants.whatif_definition("G1_allergy_V2", {"SEVERITY.severe": 3, "RULE.High Risk.0": 6,
                                                                 "RESTAURANT.High-risk cuisine": 0}, None)
    assert none is None and changed.version.endswith("+whatif")
    frame = compute_policy_gt_frame(JUDGMENTS, RESTAURANTS, changed, [None])
    # 3 points (severe) + 0 (cuisine): below the new High threshold 6 → Low
    assert (frame["score"][0], frame["verdict"][0]) == (3.0, "Low Risk")
    committed = compute_policy_gt_frame(JUDGMENTS, RESTAURANTS, policy, [None])
    assert (committed["score"][0], committed["verdict"][0]) == (17.0, "Critical Risk")  # 15 + 2 Thai
    assert get_policy("G1_allergy_V2", None).severity_points["severe"] == 15


def test_save_list_load_and_delete_variants(workspace):
    saved = variants.save_variant(workspace, "strict-v1", "v1", {"HIGH_THRESHOLD": 3.0, "BASE_RISK": 2.5},
                                  description="lower bar", author="ana")
    assert saved.changes == {"HIGH_THRESHOLD": 3.0} and saved.kind == "formula" and saved.base_version == "v1"
    path = workspace.gt_dir / "variants" / "strict-v1.json"
    assert json.loads(path.read_text())["changes"] == {"HIGH_THRESHOLD": 3.0}
    assert variants.load_variant(workspace, "strict-v1") == saved
    variants.save_variant(workspace, "pol", "G1_allergy_V2", {"SEVERITY.mild": 1})
    assert [v.name for v in variants.list_variants(workspace)] == ["pol", "strict-v1"]
    assert [v.name for v in variants.list_variants(workspace, "v1")] == ["strict-v1"]
    with pytest.raises(ValueError, match="exists already"):
        variants.save_variant(workspace, "strict-v1", "v1", {"HIGH_THRESHOLD": 5.0})
    replaced = variants.save_variant(workspace, "strict-v1", "v1", {"HIGH_THRESHOLD": 5.0}, replace=True)
    assert variants.load_variant(workspace, "strict-v1").changes == replaced.changes == {"HIGH_THRESHOLD": 5.0}
    variants.delete_variant(workspace, "pol")
    with pytest.raises(UnknownNameError, match="strict-v1"):
        variants.load_variant(workspace, "pol")
    assert FORMULAS["v1"].constants["HIGH_THRESHOLD"] == 4.0


def test_save_refuses_bad_names_and_no_change(workspace):
    with pytest.raises(ValueError, match="nothing to save"):
        variants.save_variant(workspace, "same", "v1", {"HIGH_THRESHOLD": 4.0})
    with pytest.raises(ValueError, match="invalid variant name"):
        variants.save_variant(workspace, "../evil", "v1", {"HIGH_THRESHOLD": 3.0})
    assert variants.list_variants(workspace) == []


def test_a_broken_variant_file_names_file_and_field(workspace):
    folder = workspace.gt_dir / "variants"
    folder.mkdir(parents=True)
    (folder / "bad.json").write_text("{not json")
    with pytest.raises(DataError, match=r"bad\.json:1: not valid JSON"):
        variants.load_variant(workspace, "bad")
    (folder / "bad.json").write_text(json.dumps({"name": "bad", "definition": "v1", "changes": {"NOPE": 1}}))
    with pytest.raises(DataError, match="field 'changes'.*unknown constant"):
        variants.list_variants(workspace)
    (folder / "bad.json").write_text(json.dumps({"name": "bad", "definition": "v1"}))
    with pytest.raises(DataError, match="missing 'changes'"):
        variants.load_variant(workspace, "bad")
