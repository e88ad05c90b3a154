"""Knife-edge search (issue 28): the flips it names flip the verdict, and no smaller set does.

Checked by brute force on small restaurants: every change set of every size up to the one named
is evaluated on its own (the policy's pure ``evaluate``, or one engine call per set for formulas).
"""

from __future__ import annotations

import itertools
import random

import polars as pl
import pytest

from core.ground_truth import compute_gt_frame, get_policy
from core.ground_truth.knife_edge import knife_edge

FIELDS = {
    "incident_severity": ("none", "mild", "moderate", "severe"),
    "account_type": ("none", "firsthand", "secondhand", "hypothetical"),
    "safety_interaction": ("none", "positive", "negative", "betrayal"),
}
REST = pl.DataFrame([{"business_id": "b", "name": "B", "categories": "Thai, Restaurants", "n_reviews": 30}])


def restaurant(seed: int, n: int) -> pl.DataFrame:
    rng = random.Random(seed)
    return pl.DataFrame([{
        "business_id": "b", "review_id": f"r{i}", "idx": i, "date": f"{rng.randint(2018, 2025)}-03-01", "stars": 2.0,
        "useful": rng.randint(0, 3), "incident_severity": rng.choice(FIELDS["incident_severity"]),
        "account_type": rng.choice(["none", "firsthand", "firsthand"]),
        "safety_interaction": rng.choice(FIELDS["safety_interaction"]),
    } for i in range(n)])


def verdict_of(rows: list[dict], definition: str) -> str:
    if definition.startswith("v"):
        return compute_gt_frame(pl.DataFrame(rows), REST, definition, [25], rounded=False)["verdict"][0]
    return get_policy(definition, None).evaluate(rows, REST["categories"][0], 25).verdict


def apply(rows: list[dict], changes) -> list[dict]:
    out = [dict(r) for r in rows]
    for c in changes:
        (row,) = [r for r in out if r["idx"] == c.idx]
        assert row[c.field] == c.judged != c.value
        row[c.field] = c.value
    return out


def reachable(rows: list[dict], definition: str, size: int) -> set[str]:
    """Every verdict some set of exactly ``size`` changes reaches (brute force)."""
    cells = [(i, f) for i in range(len(rows)) for f in FIELDS]
    out = set()
    for chosen in itertools.combinations(cells, size):
        for values in itertools.product(*[[v for v in FIELDS[f] if v != rows[i][f]] for i, f in chosen]):
            changed = [dict(r) for r in rows]
            for (i, f), v in zip(chosen, values, strict=True):
                changed[i][f] = v
            out.add(verdict_of(changed, definition))
    return out


@pytest.mark.parametrize(("definition", "n", "seeds"), [
    ("G1_allergy_V2", 3, range(6)), ("G1_allergy_V0", 3, range(4)), ("G1_allergy_V1", 3, range(4)), ("v1", 2, range(3)),
])
def test_named_flips_flip_and_no_smaller_set_does(definition, n, seeds):
    for seed in seeds:
        judged = restaurant(seed, n)
        rows = judged.to_dicts()
        edge = knife_edge(judged, REST, definition, "b", 25, fields=FIELDS, max_changes=3)
        assert edge.verdict == verdict_of(rows, definition)
        by_size = {s: reachable(rows, definition, s) for s in range(1, edge.searched + 1)}
        for target, changes in edge.flips.items():
            assert verdict_of(apply(rows, changes), definition) == target != edge.verdict
            assert all(target not in by_size[s] for s in range(1, len(changes)))  # no smaller set reaches it
        for target in set(get_policy("G1_allergy_V2", None).verdicts) - set(edge.flips) - {edge.verdict}:
            assert all(target not in by_size[s] for s in by_size)  # not reachable within the search
        assert edge.smallest == min((len(c) for c in edge.flips.values()), default=None)
        assert edge.candidates == n * 9


def test_thresholds_of_a_point_policy_by_hand():
    """One firsthand moderate incident with a dismissive staff in a Thai restaurant, G1_allergy_V2:
    5 + 3 (Dismissive staff) + 2 (cuisine) = 10; Critical ≥ 8 holds by 2, High ≥ 4 by 6.
    Dropping the incident (severity none, or account not firsthand) gives 0: Low in one change;
    High (4 ≤ score < 8) in one change: the staff not dismissive, 5 + 2 = 7."""
    judged = pl.DataFrame([{"business_id": "b", "review_id": "r0", "idx": 0, "incident_severity": "moderate",
                            "account_type": "firsthand", "safety_interaction": "negative"}])
    edge = knife_edge(judged, REST, "G1_allergy_V2", "b", 25, fields=FIELDS)
    assert edge.verdict == "Critical Risk" and edge.smallest == 1 and edge.searched == 1
    assert [(t.verdict, t.value, t.threshold, t.margin, t.holds) for t in edge.thresholds] == [
        ("Critical Risk", 10.0, 8.0, 2.0, True), ("High Risk", 10.0, 4.0, 6.0, True)]
    assert [(c.field, c.judged, c.value) for c in edge.flips["Low Risk"]] == [("incident_severity", "moderate", "none")]
    assert [(c.field, c.value) for c in edge.flips["High Risk"]] == [("incident_severity", "mild")]  # 2 + 3 + 2 = 7
    assert edge.to_dict()["flips"]["Low Risk"][0]["review_id"] == "r0"


def test_count_rule_thresholds_and_overridden_rows():
    """G1_allergy_V0's count rules: the counts of firsthand incidents against each rule's minimum."""
    judged = restaurant(1, 3).with_columns(pl.Series("overridden", [True, False, False]))
    edge = knife_edge(judged, REST, "G1_allergy_V0", "b", 25, fields=FIELDS)
    rows = judged.to_dicts()
    policy = get_policy("G1_allergy_V0", None)
    for t in edge.thresholds:
        assert t.holds == (t.margin >= 0)
    assert edge.candidates == 2 * 9  # the overridden review is never changed
    assert all(c.idx != 0 for changes in edge.flips.values() for c in changes)
    assert edge.verdict == policy.evaluate(rows, REST["categories"][0], 25).verdict


def test_formula_thresholds_and_limits():
    judged = restaurant(2, 2)
    edge = knife_edge(judged, REST, "v1", "b", 25, fields=FIELDS, constants={"HIGH_THRESHOLD": 3.5})
    score = compute_gt_frame(judged, REST, "v1", [25], rounded=False, constants={"HIGH_THRESHOLD": 3.5})["final_risk_score"][0]
    assert [(t.threshold, t.value) for t in edge.thresholds] == [(3.5, score), (8.0, score)]
    limited = knife_edge(judged, REST, "v1", "b", 25, fields=FIELDS, max_sets=10)
    assert limited.searched == 0 and limited.flips == {} and limited.smallest is None  # 18 single changes > 10
    empty = knife_edge(judged.clear(), REST, "v1", "b", 25, fields=FIELDS)
    assert empty.candidates == 0 and empty.flips == {}
    with pytest.raises(ValueError, match="no restaurant 'x'"):
        knife_edge(judged, REST, "v1", "x", 25, fields=FIELDS)
