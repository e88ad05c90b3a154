"""G1a formulas v1/v2 (SPEC §3.1, §3.2): hand-computed cases, the slow reference on random
judgments, invariants, edge cases, exact rounding."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.errors import UnknownNameError
from core.ground_truth import FORMULAS, compute_gt_frame, distribution_by_k, get_formula, normalize_ks
from core.ground_truth.reference import reference_gt
from core.ground_truth.rounding import round_columns, round_like_python
from tests.helpers.formula_cases import CASE, RESTAURANTS, j, judgments

# Restaurant "a": idx 0 moderate firsthand + negative (2024, 1★, 3 useful), idx 1 mild firsthand
# (2021, 4★, 0 useful), idx 2 positive, idx 3 severe *secondhand* + betrayal (not an incident).


def row(frame: pl.DataFrame, bid: str, k: int | None) -> dict:
    sel = frame.filter((pl.col("business_id") == bid) & (pl.col("k").is_null() if k is None else pl.col("k") == k))
    assert sel.height == 1
    return sel.row(0, named=True)


def test_v1_hand_computed_all_reviews():
    r = row(compute_gt_frame(CASE, RESTAURANTS, "v1", [None]), "a", None)
    assert (r["n_mild"], r["n_moderate"], r["n_severe"], r["n_total_incidents"]) == (1, 1, 0, 2)
    assert (r["n_positive"], r["n_negative"], r["n_betrayal"], r["n_allergy_reviews"]) == (1, 1, 1, 4)
    assert r["incident_score"] == 7.0  # 2·1 + 5·1
    assert r["safety_credit"] == -4.5  # 1·1 − 0.5·1 − 5·1
    assert r["cuisine_modifier"] == 2.0  # Thai
    assert r["review_density"] == 0.4  # 4/10
    assert r["confidence_penalty"] == 0.82  # 1 − 0.3·(1 − 0.4)
    assert (r["most_recent_incident_year"], r["incident_age"]) == (2024, 1)
    assert r["recency_decay"] == 0.85  # max(0.3, 1 − 0.15·1)
    # weights: (5−1)+ln(3+1) = 5.386294 ; (5−4)+ln(1) = 1  → Σ 6.386294, mean 3.193147
    assert r["total_incident_weight"] == 6.386
    assert r["credibility_factor"] == 3.193
    assert r["incident_impact"] == 18.999  # 7 · 0.85 · 3.193147 = 18.999226
    assert r["safety_impact"] == -3.69  # −4.5 · 0.82
    assert r["cuisine_impact"] == 1.0  # 0.5 · 2.0
    assert r["raw_risk"] == 23.189  # 2.5 + 18.999226 + 3.69 + 1.0 − 3·1
    assert r["final_risk_score"] == 20.0  # clamped
    assert r["verdict"] == "Critical Risk"


def test_v1_hand_computed_k2_and_restaurant_without_judgments():
    frame = compute_gt_frame(CASE, RESTAURANTS, "v1", [2])
    r = row(frame, "a", 2)  # idx 0 and 1 only: no positive, no betrayal
    assert r["safety_credit"] == -0.5 and r["n_allergy_reviews"] == 2
    assert r["confidence_penalty"] == 0.76  # 1 − 0.3·(1 − 0.2)
    assert r["safety_impact"] == -0.38  # −0.5 · 0.76
    assert r["raw_risk"] == 22.879  # 2.5 + 18.999226 + 0.38 + 1.0
    empty = row(frame, "b", 2)  # no judgments: every count 0, defaults everywhere
    assert empty["n_allergy_reviews"] == 0 and empty["n_total_incidents"] == 0
    assert empty["cuisine_modifier"] == 1.0  # Pizza/Italian 0.5, Breakfast & Brunch 0.6 → floor 1.0
    assert empty["confidence_penalty"] == 0.7  # 1 − 0.3·(1 − 0)
    assert (empty["most_recent_incident_year"], empty["recency_decay"], empty["credibility_factor"]) == (2020, 0.3, 1.0)
    assert empty["raw_risk"] == 3.0 and empty["final_risk_score"] == 3.0  # 2.5 + 0.5·1.0
    assert empty["verdict"] == "Low Risk"
    none_cat = row(frame, "c", 2)
    assert none_cat["cuisine_modifier"] == 1.0


def test_v2_hand_computed():
    r = row(compute_gt_frame(CASE, RESTAURANTS, "v2", [None]), "a", None)
    assert r["trust_raw"] == 0.4 and r["trust_score"] == 0.4  # 1 + 0.1 − 0.2 − 0.5
    assert r["mild_weight"] == 2.2  # 2·(1.5 − 0.4)
    assert r["moderate_weight"] == 5.9  # 5·(1.3 − 0.3·0.4)
    assert r["severe_weight"] == 15.0
    assert r["adjusted_incident_score"] == 8.1  # 1·2.2 + 1·5.9
    assert (r["n_recent"], r["n_old"], r["recent_ratio"]) == (1, 1, 0.5)  # 2024 ≥ 2023, 2021 not
    assert r["trajectory_multiplier"] == 1.0  # 0.3 ≤ 0.5 ≤ 0.7
    assert r["silence_penalty"] == 0.0 and r["cuisine_impact"] == 1.0
    assert r["incident_impact"] == 21.985  # 8.1 · 1.0 · 0.85 · 3.193147 = 21.984833
    assert r["trust_impact"] == 1.8  # 3·(1 − 0.4)
    assert r["positive_credit"] == 0.2  # 0.5 · 1 · 0.4
    assert r["raw_risk"] == 26.585  # 2 + 21.984833 + 1.8 + 1.0 − 0.2
    assert r["final_risk_score"] == 20.0 and r["verdict"] == "Critical Risk"
    silent = row(compute_gt_frame(CASE, RESTAURANTS, "v2", [None]), "b", None)
    assert silent["silence_penalty"] == 0.5  # 0.5 · 1.0 with no judged review
    assert silent["cuisine_impact"] == 1.0 and silent["trust_score"] == 1.0
    assert silent["raw_risk"] == 3.0  # 2.0 + 0 + 0 + 1.0 − 0


def test_v2_trajectory_rising_and_fading():
    rising = judgments([j("a", 0, "mild", "firsthand", date="2024-01-01")])
    fading = judgments([j("a", 0, "mild", "firsthand", date="2018-01-01")])
    assert row(compute_gt_frame(rising, RESTAURANTS, "v2", [None]), "a", None)["trajectory_multiplier"] == 1.3
    assert row(compute_gt_frame(fading, RESTAURANTS, "v2", [None]), "a", None)["trajectory_multiplier"] == 0.7


def test_output_shape_and_order():
    frame = compute_gt_frame(CASE, RESTAURANTS, "v1", [None, 50, 2])
    assert frame.columns == ["business_id", "name", "k", *FORMULAS["v1"].record_fields, "formula_version"]
    assert frame["k"].to_list() == [2, 2, 2, 50, 50, 50, None, None, None]
    assert frame["name"].to_list()[:3] == ["Alpha Thai", "Beta Pizza", "Gamma"]
    assert set(frame["formula_version"]) == {"v1"}
    dist = distribution_by_k(frame)
    assert dist.columns == ["k", "Low", "High", "Critical", "total"]
    assert dist["total"].to_list() == [3, 3, 3]


# -- edge cases -----------------------------------------------------------------------------------
def test_no_judgments_at_all():
    frame = compute_gt_frame(judgments([]), RESTAURANTS, "v1", [25, None])
    assert frame.height == 6
    assert frame["n_allergy_reviews"].to_list() == [0] * 6
    assert frame["verdict"].to_list() == ["Low Risk"] * 6


def test_parse_errors_are_left_out():
    only_errors = judgments([j("a", 0, "severe", "firsthand", parse_error="incident_severity='awful' not in enum")])
    r = row(compute_gt_frame(only_errors, RESTAURANTS, "v1", [None]), "a", None)
    assert r["n_allergy_reviews"] == 0 and r["n_severe"] == 0
    mixed = judgments([
        j("a", 0, "severe", "firsthand", parse_error="bad"),
        j("a", 1, "mild", "firsthand"),
    ])
    r = row(compute_gt_frame(mixed, RESTAURANTS, "v1", [None]), "a", None)
    assert (r["n_allergy_reviews"], r["n_mild"], r["n_severe"]) == (1, 1, 0)


def test_missing_stars_and_useful_and_bad_date():
    data = judgments([j("a", 0, "severe", "firsthand", date="sometime in May", stars=None, useful=None)])
    r = row(compute_gt_frame(data, RESTAURANTS, "v1", [None]), "a", None)
    assert r["total_incident_weight"] == 2.0  # (5 − 3) + ln(0 + 1)
    assert r["most_recent_incident_year"] == 2020  # unparsable date counts as 2020
    data = judgments([j("a", 0, "mild", "firsthand", date=None)])
    assert row(compute_gt_frame(data, RESTAURANTS, "v1", [None]), "a", None)["incident_age"] == 5


def test_k_keeps_idx_strictly_below_k():
    data = judgments([j("a", 24, "severe", "firsthand"), j("a", 25, "severe", "firsthand")])
    frame = compute_gt_frame(data, RESTAURANTS, "v1", [25, 26])
    assert row(frame, "a", 25)["n_severe"] == 1
    assert row(frame, "a", 26)["n_severe"] == 2


def test_category_names_are_exact():
    rest = pl.DataFrame({"business_id": ["a"], "name": ["x"], "categories": ["Thai Food, Pan Asian, Chinese"]})
    r = row(compute_gt_frame(judgments([]), rest, "v1", [None]), "a", None)
    assert r["cuisine_modifier"] == 1.5  # only "Chinese" is a table name


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (judgments([j("zzz", 0)]), "missing from the restaurants table"),
        (judgments([j("a", 0), j("a", 0)]), "repeat review key"),
        (judgments([j("a", 0, useful=-1)]), "negative 'useful'"),
        (judgments([j("a", 0)]).drop("account_type"), "lack column"),
    ],
)
def test_bad_judgments_raise(frame, message):
    with pytest.raises(ValueError, match=message):
        compute_gt_frame(frame, RESTAURANTS, "v1", [None])


def test_unknown_names_and_bad_k():
    with pytest.raises(UnknownNameError, match="valid: v1, v2"):
        compute_gt_frame(CASE, RESTAURANTS, "v9", [None])
    with pytest.raises(ValueError, match="unknown constant 'NOPE'"):
        compute_gt_frame(CASE, RESTAURANTS, "v1", [None], constants={"NOPE": 1})
    for bad in (0, -5, "x", [25, "abc"]):
        with pytest.raises(ValueError, match="invalid K"):
            normalize_ks(bad)
    assert normalize_ks("25, 50 ,all,25") == [25, 50, None]


def test_what_if_constants():
    base = row(compute_gt_frame(CASE, RESTAURANTS, "v1", [None]), "b", None)
    what_if = compute_gt_frame(CASE, RESTAURANTS, "v1", [None], constants={"BASE_RISK": 4.5})
    r = row(what_if, "b", None)
    assert r["raw_risk"] == base["raw_risk"] + 2.0 and r["verdict"] == "High Risk"
    assert what_if["formula_version"][0].startswith("v1+whatif-")
    assert FORMULAS["v1"].constants["BASE_RISK"] == 2.5  # the registered formula is untouched
    points = compute_gt_frame(CASE, RESTAURANTS, "v1", [None], constants={"SEVERITY_POINTS": {"mild": 1, "moderate": 1, "severe": 1}})
    assert row(points, "a", None)["incident_score"] == 2.0


# -- the slow reference on random judgments ----------------------------------------------------
SEVERITIES = ["none", "mild", "moderate", "severe"]
ACCOUNTS = ["none", "firsthand", "secondhand", "hypothetical"]
INTERACTIONS = ["none", "positive", "negative", "betrayal"]

review = st.fixed_dictionaries({
    "business_id": st.sampled_from(["a", "b", "c"]),
    "idx": st.integers(0, 60),
    "incident_severity": st.sampled_from(SEVERITIES),
    "account_type": st.sampled_from(ACCOUNTS),
    "safety_interaction": st.sampled_from(INTERACTIONS),
    "date": st.one_of(st.none(), st.just("garbage"),
                      st.integers(2005, 2025).map(lambda y: f"{y}-03-04 05:06:07")),
    "stars": st.one_of(st.none(), st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0])),
    "useful": st.one_of(st.none(), st.integers(0, 40)),
    "parse_error": st.one_of(st.none(), st.just("bad value")),
})
ks = st.lists(st.one_of(st.none(), st.integers(1, 70)), min_size=1, max_size=4)


def _close(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reviews=st.lists(review, max_size=40, unique_by=lambda r: (r["business_id"], r["idx"])), klist=ks,
       formula=st.sampled_from(["v1", "v2"]))
def test_setwise_equals_reference(reviews, klist, formula):
    frame = compute_gt_frame(judgments(reviews), RESTAURANTS, formula, klist, rounded=False)
    expected = reference_gt(reviews, RESTAURANTS.to_dicts(), formula, normalize_ks(klist))
    assert frame.height == len(expected)
    for got in frame.iter_rows(named=True):
        want = expected[(got["business_id"], got["k"])]
        for name in FORMULAS[formula].record_fields:
            if name == "verdict" and min(abs(want["final_risk_score"] - t) for t in (4.0, 8.0)) < 1e-9:
                continue
            assert _close(got[name], want[name]), (name, got[name], want[name])


@settings(max_examples=40, deadline=None)
@given(reviews=st.lists(review, max_size=30, unique_by=lambda r: (r["business_id"], r["idx"])),
       base=st.floats(-30, 30), shift=st.floats(0, 5))
def test_invariants_clamp_and_threshold_monotonicity(reviews, base, shift):
    order = {"Low Risk": 0, "High Risk": 1, "Critical Risk": 2}
    c = {"BASE_RISK": base}
    lo = compute_gt_frame(judgments(reviews), RESTAURANTS, "v1", [None, 10], constants=c, rounded=False)
    hi = compute_gt_frame(judgments(reviews), RESTAURANTS, "v1", [None, 10], rounded=False,
                          constants={**c, "HIGH_THRESHOLD": 4 + shift, "CRITICAL_THRESHOLD": 8 + shift})
    assert lo["final_risk_score"].is_between(0, 20).all()
    for a, b in zip(lo.iter_rows(named=True), hi.iter_rows(named=True), strict=True):
        assert order[b["verdict"]] <= order[a["verdict"]]
        expected = "Low Risk" if a["final_risk_score"] < 4 else "High Risk" if a["final_risk_score"] < 8 else "Critical Risk"
        assert a["verdict"] == expected


# -- rounding ----------------------------------------------------------------------------------
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6), max_size=50),
       st.integers(0, 4))
def test_rounding_equals_python_round(values, digits):
    got = round_like_python(np.array(values, dtype=float), digits).tolist()
    assert got == [round(v, digits) for v in values]


def test_rounding_halfway_cases_and_nulls():
    values = [2.675, 1.4445, 0.0005, 0.125, 0.375, -2.5, 1e20, 2889 / 2000]
    assert round_like_python(np.array(values), 2).tolist() == [round(v, 2) for v in values]
    assert round_like_python(np.array(values), 3).tolist() == [round(v, 3) for v in values]
    df = round_columns(pl.DataFrame({"x": [2.675, None]}), {"x": 2})
    assert df["x"].to_list() == [2.67, None]


def test_rounding_is_applied_per_spec():
    f = get_formula("v1")
    assert f.rounding["final_risk_score"] == 2 and f.rounding["raw_risk"] == 3
    assert "review_density" not in f.rounding and "incident_score" not in f.rounding
    raw = compute_gt_frame(CASE, RESTAURANTS, "v1", [None], rounded=False)
    assert row(raw, "a", None)["credibility_factor"] == pytest.approx(3.1931471805599454)


def test_formula_constants_are_deeply_immutable():
    """Writing into a nested constant table raised nothing before and changed v1 and v2 at once."""
    from core.ground_truth import FORMULAS

    for name in ("v1", "v2"):
        with pytest.raises(TypeError):
            FORMULAS[name].constants["CUISINE_RISK"]["Thai"] = 99  # type: ignore[index]
        with pytest.raises(TypeError):
            FORMULAS[name].constants["BASE_RISK"] = 0  # type: ignore[index]
    assert FORMULAS["v1"].constants["CUISINE_RISK"]["Thai"] == FORMULAS["v2"].constants["CUISINE_RISK"]["Thai"] == 2.0
