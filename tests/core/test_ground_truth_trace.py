"""Trace (SPEC §3.5): every node's reviews add up to its value, K changes are explained."""

from __future__ import annotations

import polars as pl
import pytest

from core.ground_truth import compute_gt_frame, explain_k_change, trace_gt, verdict_changes
from tests.helpers.formula_cases import CASE, RESTAURANTS, j, judgments

# primitive → how the review amounts relate to the unrounded value
SUMS = ["n_mild", "n_moderate", "n_severe", "n_total_incidents", "n_positive", "n_negative", "n_betrayal",
        "n_allergy_reviews", "total_incident_weight", "credibility_factor", "incident_impact"]
V1_SUMS = [*SUMS, "incident_score", "safety_credit", "safety_impact"]
V2_SUMS = [*SUMS, "adjusted_incident_score", "positive_credit", "n_recent", "n_old"]


@pytest.mark.parametrize(("formula", "sums"), [("v1", V1_SUMS), ("v2", V2_SUMS)])
def test_review_contributions_add_up(formula, sums):
    root = trace_gt(CASE, RESTAURANTS, "a", formula, None)
    assert root.name == "verdict" and root.value == "Critical Risk"
    for name in sums:
        node = root.find(name)
        assert node is not None, name
        assert sum(r.amount for r in node.reviews) == pytest.approx(node.raw), name
    if formula == "v2":  # TRUST_RAW = 1 + Σ review shares
        node = root.find("trust_raw")
        assert 1 + sum(r.amount for r in node.reviews) == pytest.approx(node.raw)
    # the stored value is the rounded one, the raw value is kept
    cred = root.find("credibility_factor")
    assert (cred.value, cred.raw) == (3.193, pytest.approx(3.1931471805599454))
    names = {n.name for _, n in root.walk()}
    assert set(compute_gt_frame(CASE, RESTAURANTS, formula, [None]).columns) - {"business_id", "name", "k", "formula_version"} <= names


def test_contribution_texts_and_review_cards():
    texts = {0: "<script>alert(1)</script> my lips swelled", 1: "a bit queasy"}
    root = trace_gt(CASE, RESTAURANTS, "a", "v1", None, texts=texts)
    impact = root.find("incident_impact").reviews
    assert [r.idx for r in impact] == [0, 1]
    assert impact[0].explanation.startswith("moderate firsthand → +5 × 0.85 recency × 3.193 credibility = +")
    assert impact[0].text == texts[0]  # raw text: escaping is the page's job
    assert impact[0].fields == {"incident_severity": "moderate", "account_type": "firsthand", "safety_interaction": "negative"}
    assert (impact[0].stars, impact[0].useful, impact[0].review_id, impact[0].overridden) == (1.0, 3, "a-0", False)
    weight = root.find("total_incident_weight").reviews
    assert weight[0].explanation == "(5 − 1 stars) + ln(3 useful + 1) = 5.386"
    year = root.find("most_recent_incident_year").reviews
    assert [r.explanation.endswith("← most recent") for r in year] == [True, False]
    safety = root.find("safety_impact").reviews
    assert [(r.idx, r.amount) for r in safety] == [(0, pytest.approx(-0.41)), (2, pytest.approx(0.82)), (3, pytest.approx(-4.1))]
    assert "Thai 2" in root.find("cuisine_modifier").note


def test_trace_lines_follow_what_if_constants_and_marks_overrides():
    data = CASE.with_columns(pl.Series("overridden", [True, False, False, False]))
    root = trace_gt(data, RESTAURANTS, "a", "v1", None, constants={"BASE_RISK": 1.0})
    assert root.find("raw_risk").line.startswith("RAW_RISK = 1 + INCIDENT_IMPACT")
    assert root.find("raw_risk").raw == pytest.approx(21.689226, abs=1e-6)
    assert [r.overridden for r in root.find("n_moderate").reviews] == [True]


def test_parse_errors_are_noted_and_missing_restaurant_raises():
    data = judgments([j("b", 0, "severe", "firsthand", parse_error="bad"), j("b", 1, "mild", "firsthand")])
    root = trace_gt(data, RESTAURANTS, "b", "v1", None)
    assert root.find("n_allergy_reviews").value == 1
    assert "1 judgment(s) with a parse error left out (idx 0)" in root.note
    with pytest.raises(ValueError, match="no restaurant with business_id 'nope'"):
        trace_gt(data, RESTAURANTS, "nope", "v1", None)


def test_restaurant_without_judgments():
    root = trace_gt(CASE, RESTAURANTS, "b", "v1", 25)
    assert root.value == "Low Risk" and root.find("n_allergy_reviews").reviews == ()


def test_verdict_changes_and_explanations():
    # Thai restaurant: cuisine impact 0.5 · 2.0 = 1.0
    # K=25: one positive (conf 0.73): 2.5 − 0.73 + 1.0 = 2.77 Low
    # K=50: + mild firsthand 2024, 4★ (2 · 0.85 · 1 = 1.7; conf 0.76): 2.5 + 1.7 − 0.76 + 1.0 = 4.44 High
    # K=100: + 12 positives (credit 13, conf 1): 2.5 + 1.7 − 13 + 1.0 < 0 → 0 Low
    data = judgments([
        j("a", 3, inter="positive"),
        j("a", 30, "mild", "firsthand", date="2024-01-01", stars=4.0),
        *[j("a", 60 + i, inter="positive") for i in range(12)],
    ])
    frame = compute_gt_frame(data, RESTAURANTS, "v1", [25, 50, 100])
    assert frame.filter(pl.col("business_id") == "a")["final_risk_score"].to_list() == [2.77, 4.44, 0.0]
    changes = verdict_changes(frame, "a")
    assert [(c["k_from"], c["k_to"], c["verdict_from"], c["verdict_to"]) for c in changes] == [
        (25, 50, "Low Risk", "High Risk"), (50, 100, "High Risk", "Low Risk")]
    up = explain_k_change(data, RESTAURANTS, "a", "v1", 25, 50)
    assert [r["idx"] for r in up.reviews] == [30] and up.direction == "enter"
    assert up.reviews[0]["score_effect"] == pytest.approx(1.67)  # +1.7 impact, −0.03 safety (conf 0.73 → 0.76)
    assert "incident_impact" in {t["primitive"] for t in up.reviews[0]["touches"]}
    down = explain_k_change(data, RESTAURANTS, "a", "v1", 100, 50)
    assert down.direction == "leave" and [r["idx"] for r in down.reviews] == list(range(60, 72))
    assert all({t["primitive"] for t in r["touches"]} == {"safety_impact", "safety_credit", "n_positive", "n_allergy_reviews"}
               for r in down.reviews)
    moved = {m["name"]: (m["before"], m["after"]) for m in down.primitives}
    assert moved["n_positive"] == (13, 1) and moved["verdict"] == ("Low Risk", "High Risk")


def test_policy_trace():
    # V2 on restaurant "a": moderate + Dismissive staff = 8, mild = 2, the severe secondhand review
    # is no incident; Thai with ≥ 1 incident adds 2 → 12, Critical (≥ 8)
    root = trace_gt(CASE, RESTAURANTS, "a", "G1_allergy_V2", None)
    score = root.find("score")
    assert (root.value, score.value) == ("Critical Risk", 12)
    assert [(r.idx, r.amount) for r in score.reviews] == [(0, 8.0), (1, 2.0)]
    assert score.reviews[0].explanation == "moderate firsthand → 5 + Dismissive staff 3 = 8"
    assert root.find("cuisine_modifier").value is True
    assert root.note == "triggered: total risk score of 8 or more"


def test_rule_policy_trace_shows_counted_reviews():
    # V1 on "a": one moderate firsthand incident (idx 0) → High; the assurance rule counts nothing
    root = trace_gt(CASE, RESTAURANTS, "a", "G1_allergy_V1", None)
    assert root.value == "High Risk" and root.note == "triggered: at least 1 moderate firsthand incident"
    moderate = root.find("count: at least 1 moderate firsthand incident")
    assert moderate.value == 1 and [r.idx for r in moderate.reviews] == [0]
    assurance = root.find("count: a moderate or severe incident after an explicit assurance of safety")
    assert assurance.value == 0 and assurance.reviews == ()
    staff = root.find("count: at least 3 reviews describe staff refusing or dismissing an allergy concern")
    assert [r.idx for r in staff.reviews] == [0]  # the negative interaction
