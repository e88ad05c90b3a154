"""Judge-audit planning (issue 28): sample sizes reach the target width on simulated audits,
knife-edge reviews go first with weight 1, small values are a census, Wilson and κ by hand."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from core.ground_truth.audit.plan import plan_audit, review_key
from core.ground_truth.audit.stats import cohen_kappa, n_for_width, weighted_proportion, wilson, wilson_width

FIELDS = ("incident_severity", "account_type")
SEVERITY = {"none": 0.70, "mild": 0.16, "moderate": 0.10, "severe": 0.04}
ACCOUNT = {"none": 0.6, "firsthand": 0.3, "secondhand": 0.1}


def population(n: int, seed: int) -> pl.DataFrame:
    """A judge's answers on ``n`` synthetic reviews (20 per restaurant), fields drawn independently."""
    rng = np.random.default_rng(seed)
    sev = rng.choice(list(SEVERITY), size=n, p=list(SEVERITY.values()))
    acc = rng.choice(list(ACCOUNT), size=n, p=list(ACCOUNT.values()))
    return pl.DataFrame({"business_id": [f"b{i // 20}" for i in range(n)], "idx": [i % 20 for i in range(n)],
                         "incident_severity": sev, "account_type": acc})


def test_n_for_width_is_the_smallest_n_reaching_the_target():
    for target in (0.05, 0.1, 0.2, 0.3):
        n = n_for_width(target)
        assert wilson_width(0.5, n) <= target < wilson_width(0.5, n - 1)


def test_wilson_by_hand():
    """p̂ = 0.8 on n = 25, z = 1.96: centre (0.8 + 1.9208/25)/(1 + 3.8415/25) = 0.76, half-width
    1.96·√(0.0064 + 0.001537)/1.15366 = 0.1514 → [0.6087, 0.9114]."""
    low, high = wilson(0.8, 25)
    assert (round(low, 4), round(high, 4)) == (0.6087, 0.9114)


def test_kappa_by_hand_and_weighted_share():
    # p_o = (8 + 6)/20 = 0.7; p_e = 0.5·0.45 + 0.5·0.55 = 0.5; κ = 0.4
    assert cohen_kappa([[8, 2], [4, 6]]) == pytest.approx(0.4)
    p, n_eff, _, _ = weighted_proportion([1, 0, 1], [1, 1, 2])
    assert p == pytest.approx(0.75) and n_eff == pytest.approx(16 / 6)


def test_every_value_reaches_the_target_or_is_a_census():
    frame = population(3000, seed=1)
    plan = plan_audit(frame, FIELDS, target=0.2)
    assert plan.needed == n_for_width(0.2) == 93
    for m in plan.marginals:
        if m["census"]:
            assert m["sample"] == m["reviews"] < plan.needed
        else:
            assert m["n_eff"] >= plan.needed - 1e-9 and m["width_at_half"] <= 0.2
    assert plan.size < frame.height  # a sample, not everything


def test_simulated_audits_reach_the_width_and_cover_the_truth():
    """Humans agree with the judge's value with a known probability per value; each audit's weighted
    precision interval is at most the target wide, and covers the true precision in ≥ 85 % of runs."""
    truth = {"none": 0.95, "mild": 0.6, "moderate": 0.5, "severe": 0.8}
    frame = population(4000, seed=2)
    judged = {review_key(r["business_id"], r["idx"]): r["incident_severity"] for r in frame.iter_rows(named=True)}
    covered, checked = 0, 0
    for seed in range(12):
        plan = plan_audit(frame, FIELDS, target=0.2, seed=seed)
        rng = np.random.default_rng(100 + seed)
        for value, p_true in truth.items():
            rows = [(rng.random() < p_true, s["weight"]) for key, s in plan.sample.items() if judged[key] == value]
            p, n_eff, low, high = weighted_proportion([h for h, _ in rows], [w for _, w in rows])
            assert n_eff >= plan.needed - 1e-9, (value, n_eff)
            assert high - low <= 0.2 + 1e-12, (value, high - low)
            covered += low <= p_true <= high
            checked += 1
    assert covered / checked >= 0.85


def test_knife_edge_reviews_first_with_weight_one():
    class Edge:  # what plan_audit reads of a KnifeEdge
        business_id, name, verdict, smallest, deciding = "b3", "B3", "High Risk", 1, (4, 7)

    frame = population(2000, seed=3)
    plan = plan_audit(frame, FIELDS, knife_edges=[Edge()], target=0.3, seed=0)
    for idx in (4, 7):
        s = plan.sample[review_key("b3", idx)]
        assert s["knife_edge"] and s["weight"] == 1.0
    others = [s for s in plan.sample.values() if not s["knife_edge"]]
    assert others and all(s["weight"] >= 1.0 for s in others)
    # the weights of a stratum add up to its reviews (Horvitz–Thompson)
    by_stratum: dict[str, float] = {}
    for s in plan.sample.values():
        by_stratum[s["stratum"]] = by_stratum.get(s["stratum"], 0.0) + s["weight"]
    for stratum in plan.strata:
        if stratum.sample:
            assert math.isclose(by_stratum[stratum.label], stratum.population)
    assert plan_audit(frame, FIELDS, target=0.3, seed=0).sample == plan_audit(frame, FIELDS, target=0.3, seed=0).sample


def test_a_rare_value_is_a_census_with_a_note():
    frame = population(400, seed=4)
    plan = plan_audit(frame, FIELDS, target=0.1)
    severe = next(m for m in plan.marginals if (m["field"], m["value"]) == ("incident_severity", "severe"))
    assert severe["census"] and severe["sample"] == severe["reviews"]
    assert any(note.startswith("incident_severity=severe:") for note in plan.notes)
