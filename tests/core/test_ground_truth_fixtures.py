"""Acceptance on the reference files (SPEC §3.1–§3.3): xnot v1/v2 GT, Vetri Cucina's trace,
ADDM point-policy arithmetic and GT import."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

from core.ground_truth import (
    compute_gt,
    compute_gt_frame,
    distribution_by_k,
    explain_k_change,
    get_policy,
    import_gt_file,
    list_gt_files,
    load_gt_file,
    trace_gt,
    trace_gt_ws,
    verdict_changes,
)

pytestmark = pytest.mark.fixtures

KS = [25, 50, 100, 200]
XNOT_JUDGMENTS = "xnot/semantic_gt/task_G1a/judgments.json"
XNOT_GT = "xnot/semantic_gt/task_G1a/computed_gt.json"
ADDM_GT = "dev-ADDM/answers/G1_allergy_V2_K{k}_groundtruth.json"


def load_xnot(path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(judgments, restaurants) frames from an xnot judgments.json; the name is the business_id
    and the categories come from ``restaurant_meta.categories``."""
    data = json.loads(path.read_text(encoding="utf-8"))["judgments"]
    rows, rest = [], []
    for name, entry in data.items():
        rest.append({"business_id": name, "name": name, "categories": entry["restaurant_meta"]["categories"]})
        for r in entry["reviews"]:
            rows.append({"business_id": name, "review_id": f"{name}#{r['idx']}", **r})
    return pl.DataFrame(rows), pl.DataFrame(rest)


@pytest.fixture(scope="module")
def xnot(fixtures_dir):
    return load_xnot(fixtures_dir / XNOT_JUDGMENTS)


def test_v1_all_reviews_equals_computed_gt_field_for_field(xnot, fixtures_dir):
    judgments, restaurants = xnot
    expected = json.loads((fixtures_dir / XNOT_GT).read_text(encoding="utf-8"))
    frame = compute_gt_frame(judgments, restaurants, "v1", [None])
    assert frame.height == len(expected["restaurants"]) == 100
    for got in frame.iter_rows(named=True):
        want = expected["restaurants"][got["name"]]
        assert list(want) == [f for f in frame.columns if f in want]  # same fields, same order
        for field, value in want.items():
            assert got[field] == value, (got["name"], field, got[field], value)
            assert type(got[field]) is type(value), (got["name"], field)
    assert distribution_by_k(frame).row(0)[1:4] == (93, 5, 2)


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        ("v1", {25: (99, 1, 0), 50: (96, 2, 2), 100: (96, 1, 3), 200: (93, 5, 2)}),
        ("v2", {25: (99, 1, 0), 50: (96, 3, 1), 100: (97, 2, 1), 200: (95, 4, 1)}),
    ],
)
def test_distribution_by_k(xnot, formula, expected):
    dist = distribution_by_k(compute_gt_frame(*xnot, formula, KS))
    assert {r[0]: r[1:4] for r in dist.rows()} == expected


def test_vetri_cucina_by_k(xnot):
    frame = compute_gt_frame(*xnot, "v1", KS).filter(pl.col("name") == "Vetri Cucina")
    assert frame.select("k", "final_risk_score", "verdict").rows() == [
        (25, 3.0, "Low Risk"), (50, 6.94, "High Risk"), (100, 3.44, "Low Risk"), (200, 1.44, "Low Risk"),
    ]
    changes = verdict_changes(compute_gt_frame(*xnot, "v1", KS), "Vetri Cucina")
    assert [(c["k_from"], c["k_to"], c["verdict_to"]) for c in changes] == [(25, 50, "High Risk"), (50, 100, "Low Risk")]


def test_vetri_cucina_trace_at_k50(xnot):
    root = trace_gt(*xnot, "Vetri Cucina", "v1", 50)
    assert (root.value, root.find("final_risk_score").value) == ("High Risk", 6.94)
    severe = root.find("n_severe").reviews
    assert [r.idx for r in severe] == [39]
    assert severe[0].fields == {"incident_severity": "severe", "account_type": "firsthand", "safety_interaction": "none"}
    impact = root.find("incident_impact")
    assert impact.line == "INCIDENT_IMPACT = INCIDENT_SCORE · RECENCY_DECAY · CREDIBILITY_FACTOR"
    assert [r.idx for r in impact.reviews] == [39]
    assert impact.reviews[0].explanation == "severe firsthand → +15 × 0.3 recency × 1.099 credibility = +4.944"
    assert impact.reviews[0].amount == pytest.approx(4.943755, abs=1e-6)
    assert [r.idx for r in root.find("n_positive").reviews] == [49]  # the only positive below K=50
    assert [r.idx for r in trace_gt(*xnot, "Vetri Cucina", "v1", 100).find("n_positive").reviews] == [49, 52, 59, 83, 88]
    assert len(root.find("n_allergy_reviews").reviews) == root.find("n_allergy_reviews").value == 19


def test_vetri_cucina_k25_to_k50_is_explained_by_idx_39(xnot):
    change = explain_k_change(*xnot, "Vetri Cucina", "v1", 25, 50)
    assert (change.verdict_from, change.verdict_to) == ("Low Risk", "High Risk")
    decisive = max(change.reviews, key=lambda r: abs(r["score_effect"]))
    assert decisive["idx"] == 39 and decisive["score_effect"] == pytest.approx(4.943755, abs=1e-6)
    touched = {t["primitive"] for t in decisive["touches"]}
    assert {"n_severe", "incident_score", "incident_impact", "total_incident_weight"} <= touched
    moved = {m["name"]: (m["before"], m["after"]) for m in change.primitives}
    assert moved["n_severe"] == (0, 1) and moved["final_risk_score"] == (3.0, 6.94)


def test_workspace_round_trip_with_imported_judgments(workspace, fixtures_dir):
    from core.judgments.xnot_files import import_xnot_judgments

    import_xnot_judgments(workspace, fixtures_dir / XNOT_JUDGMENTS, task="G1a", dataset="xnot")
    frame = compute_gt(workspace, "xnot", "G1a", "v1", KS)
    assert {r[0]: r[1:4] for r in distribution_by_k(frame).rows()}[50] == (96, 2, 2)
    assert frame["judgments_sha256"].n_unique() == 1 and len(frame["judgments_sha256"][0]) == 64
    bid = frame.filter(pl.col("name") == "Vetri Cucina")["business_id"][0]
    root = trace_gt_ws(workspace, "xnot", "G1a", bid, "v1", 50)
    assert root.find("n_severe").reviews[0].review_id is not None


# -- ADDM point policy ---------------------------------------------------------------------------
HIGH_RISK_CUISINE = re.compile("Thai|Vietnamese|Chinese|Asian")


@pytest.mark.parametrize("k", [25, 50])
def test_addm_groundtruth_satisfies_policy_arithmetic(fixtures_dir, k):
    policy = get_policy("G1_allergy_V2", None)
    data = json.loads((fixtures_dir / ADDM_GT.format(k=k)).read_text(encoding="utf-8"))
    assert data["k"] == k and len(data["restaurants"]) == 100
    points = {"mild": 2, "moderate": 5, "severe": 15}
    extra = {"False assurance": 5, "Dismissive staff": 3}
    for business_id, entry in data["restaurants"].items():
        gt = entry["ground_truth"]
        result = policy.score_incidents(gt["incidents"], entry["categories"])
        assert result.score == gt["score"], business_id
        assert result.verdict == gt["verdict"], business_id
        assert result.cuisine_modifier == gt["cuisine_modifier"], business_id
        for listed, computed in zip(gt["incidents"], result.breakdown, strict=True):
            assert computed["base_points"] == listed["base_points"] == points[listed["severity"]]
            assert computed["total_points"] == listed["total_points"]
            assert listed["total_points"] == listed["base_points"] + sum(extra[m] for m in listed["modifiers"])
        # SPEC §3.3 directly: cuisine +2 iff a category matches and there is an incident
        cuisine = bool(HIGH_RISK_CUISINE.search(entry["categories"] or "")) and gt["n_incidents"] >= 1
        assert gt["cuisine_modifier"] == cuisine
        assert gt["score"] == sum(i["total_points"] for i in gt["incidents"]) + 2 * cuisine
        assert gt["verdict"] == ("Critical Risk" if gt["score"] >= 8 else "High Risk" if gt["score"] >= 4 else "Low Risk")


def test_import_addm_gt_and_load_as_frame(workspace, fixtures_dir):
    entry = import_gt_file(workspace, fixtures_dir / ADDM_GT.format(k=25))
    assert (entry["layout"], entry["definition"], entry["k"], entry["n_restaurants"]) == ("addm", "G1_allergy_V2", 25, 100)
    assert [f["name"] for f in list_gt_files(workspace)] == ["imported/unassigned/G1_allergy_V2_K25_groundtruth.json"]
    frame = load_gt_file(entry["path"], None)
    assert frame.height == 100 and frame["verdict"].value_counts().height == 2
    blue = frame.filter(pl.col("business_id") == "sf-KdXHB5nxfNjl2uUpI6Q").row(0, named=True)
    assert (blue["verdict"], blue["score"], blue["n_incidents"]) == ("Critical Risk", 24.0, 3)
    assert blue["incidents"][0]["modifiers"] == ["Dismissive staff"]


def test_import_xnot_gt_maps_names_to_business_ids(workspace, fixtures_dir, xnot):
    entry = import_gt_file(workspace, fixtures_dir / XNOT_GT, dataset="xnot")
    assert entry["layout"] == "xnot" and entry["dataset"] == "xnot" and entry["definition"] == "v1"
    frame = load_gt_file(entry["path"], None, restaurants=xnot[1])
    assert frame.filter(pl.col("name") == "Vetri Cucina")["business_id"][0] == "Vetri Cucina"
    assert frame.filter(pl.col("name") == "Vetri Cucina")["score"][0] == 1.44
