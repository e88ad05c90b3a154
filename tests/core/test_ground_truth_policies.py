"""Point and rule policies (SPEC §3.3): data files, rules with requirements, recency, and the
set-wise frame against the pure per-restaurant evaluation."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.errors import DataError, UnknownNameError
from core.ground_truth import (
    POLICY_IDS,
    compute_policy_gt_frame,
    distribution_by_k,
    get_policy,
    list_policies,
    load_policy_file,
)

SCHEMA = {
    "business_id": pl.Utf8, "review_id": pl.Utf8, "idx": pl.Int64, "date": pl.Utf8, "stars": pl.Float64,
    "useful": pl.Int64, "incident_severity": pl.Utf8, "account_type": pl.Utf8, "safety_interaction": pl.Utf8,
    "assurance_claim": pl.Utf8, "staff_response": pl.Utf8, "is_allergy_related": pl.Boolean, "parse_error": pl.Utf8,
}
REST = pl.DataFrame({
    "business_id": ["a", "b", "c"], "name": ["A", "B", "C"],
    "categories": ["Restaurants, Asian Fusion", "Pizza", None], "n_reviews": [30, 80, 5],
})


def frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame([{k: r.get(k) for k in SCHEMA} for r in rows], schema=SCHEMA)


def inc(idx, sev, *, bid="a", acc="firsthand", inter="none", date="2024-01-01 00:00:00", **kw):
    return {"business_id": bid, "review_id": f"{bid}{idx}", "idx": idx, "incident_severity": sev,
            "account_type": acc, "safety_interaction": inter, "date": date, **kw}


def verdict(policy_id: str, rows: list[dict], categories: str | None = "Pizza") -> str:
    return get_policy(policy_id, None).evaluate(rows, categories).verdict


def test_registry(tmp_path):
    from core.workspace import Workspace

    empty = Workspace(tmp_path)  # the package's policies only (a workspace adds its policies/ folder)
    assert POLICY_IDS(empty) == ["G1_allergy_V0", "G1_allergy_V1", "G1_allergy_V2", "G1_allergy_V3"]
    assert {p.task for p in list_policies(empty, "G1a")} == {"G1a"}
    with pytest.raises(UnknownNameError, match="G1_allergy_V2"):
        get_policy("G1_allergy_V9", None)
    v2 = get_policy("G1_allergy_V2", None)
    assert v2.severity_points == {"mild": 2.0, "moderate": 5.0, "severe": 15.0}
    assert [(m.label, m.points) for m in v2.modifiers] == [("False assurance", 5.0), ("Dismissive staff", 3.0)]
    assert [c.score_at_least for r in v2.rules for c in r.conditions] == [8.0, 4.0]
    assert get_policy("G1_allergy_V3", None).recency.reference_year == 2025  # inherits V2's scoring too
    assert get_policy("G1_allergy_V3", None).severity_points == v2.severity_points


def test_point_policy_hand_computed():
    # moderate + Dismissive staff (negative) = 5 + 3 = 8 ; mild + False assurance (betrayal) = 2 + 5 = 7
    # Asian Fusion contains "Asian" and there are incidents: +2 → 17, Critical (≥ 8)
    rows = [inc(0, "moderate", inter="negative"), inc(1, "mild", inter="betrayal"), inc(2, "severe", acc="secondhand")]
    result = get_policy("G1_allergy_V2", None).evaluate(rows, "Restaurants, Asian Fusion")
    assert (result.score, result.verdict, result.cuisine_modifier) == (17, "Critical Risk", True)
    assert [(b["base_points"], b["modifiers"], b["total_points"]) for b in result.breakdown] == [
        (5, ["Dismissive staff"], 8), (2, ["False assurance"], 7)]
    assert result.triggered_rule == "total risk score of 8 or more"
    # cuisine needs an incident: no incident → 0, Low
    assert get_policy("G1_allergy_V2", None).evaluate([inc(0, "none")], "Thai").score == 0
    # mild alone = 2 → Low ; mild + dismissive = 5 → High
    assert verdict("G1_allergy_V2", [inc(0, "mild")]) == "Low Risk"
    assert verdict("G1_allergy_V2", [inc(0, "mild", inter="negative")]) == "High Risk"


def test_addm_fields_drive_the_same_modifiers():
    # ADDM judgments carry assurance_claim / staff_response instead of safety_interaction
    rows = [inc(0, "moderate", assurance_claim="true"), inc(1, "mild", staff_response="dismissive")]
    result = get_policy("G1_allergy_V2", None).evaluate(rows, "Pizza")
    assert [b["modifiers"] for b in result.breakdown] == [["False assurance"], ["Dismissive staff"]]
    assert result.score == 15  # (5 + 5) + (2 + 3)
    not_allergy = [inc(0, "severe", is_allergy_related=False)]
    assert get_policy("G1_allergy_V2", None).evaluate(not_allergy, "Pizza").score == 0


def test_v1_requirement_is_honoured():
    # A V1 condition "moderate or severe incident AFTER an explicit assurance" must not fire on a
    # moderate incident without assurance: that restaurant is High (1 moderate), not Critical.
    assert verdict("G1_allergy_V1", [inc(0, "moderate")]) == "High Risk"
    assert verdict("G1_allergy_V1", [inc(0, "moderate", inter="betrayal")]) == "Critical Risk"
    assert verdict("G1_allergy_V1", [inc(0, "moderate", assurance_claim="true")]) == "Critical Risk"
    # "a mild incident after an assurance" → High; a mild incident alone stays Low
    assert verdict("G1_allergy_V1", [inc(0, "mild")]) == "Low Risk"
    assert verdict("G1_allergy_V1", [inc(0, "mild", inter="betrayal")]) == "High Risk"
    # the assurance must be on the SAME review as the incident
    assert verdict("G1_allergy_V1", [inc(0, "mild"), inc(1, "none", acc="none", inter="betrayal")]) == "Low Risk"
    # the set-wise frame honours it too
    rows = [inc(0, "mild", bid="a"), inc(0, "mild", bid="b", inter="betrayal"), inc(0, "moderate", bid="c")]
    out = compute_policy_gt_frame(frame(rows), REST, "G1_allergy_V1", [None])
    assert out.select("business_id", "verdict").rows() == [("a", "Low Risk"), ("b", "High Risk"), ("c", "High Risk")]


def test_v0_count_rules():
    assert verdict("G1_allergy_V0", [inc(0, "severe")]) == "Low Risk"  # V0 needs 2 severe
    assert verdict("G1_allergy_V1", [inc(0, "severe")]) == "Critical Risk"  # V1: one is enough
    assert verdict("G1_allergy_V0", [inc(0, "severe"), inc(1, "severe")]) == "Critical Risk"
    assert verdict("G1_allergy_V0", [inc(0, "severe", acc="secondhand"), inc(1, "severe")]) == "Low Risk"
    staff = [inc(i, "none", acc="none", inter="negative") for i in range(3)]
    assert verdict("G1_allergy_V0", staff) == "High Risk"  # 3 reviews with dismissive staff
    assert verdict("G1_allergy_V0", staff[:2]) == "Low Risk"


def test_v3_recency_and_discard():
    # severe 2024 (age 1, ×1) = 15 ; moderate + dismissive 2022 (age 3, ×0.5) = 4 ; mild 2018 (age 7, ×0.25) = 0.5
    rows = [inc(0, "severe", date="2024-01-01"), inc(1, "moderate", inter="negative", date="2022-05-05"),
            inc(2, "mild", date="2018-01-01")]
    result = get_policy("G1_allergy_V3", None).evaluate(rows, "Pizza")
    assert result.score == 19.5
    assert [b["recency_weight"] for b in result.breakdown] == [1.0, 0.5, 0.25]
    # 3 reviews within 2 years show accommodation → incidents older than 3 years are dropped
    improved = [inc(10 + i, "none", acc="none", inter="positive", date="2024-06-01") for i in range(3)]
    assert get_policy("G1_allergy_V3", None).evaluate(rows + improved, "Pizza").score == 19.0
    only_old = [inc(0, "moderate", date="2019-01-01")]
    assert get_policy("G1_allergy_V3", None).evaluate(only_old, "Pizza").score == 1.25  # 5 × 0.25


def test_score_incidents_from_claimed_modifiers():
    policy = get_policy("G1_allergy_V2", None)
    result = policy.score_incidents(
        [{"review_id": "r1", "severity": "moderate", "modifiers": ["False assurance"]}], "Thai, Restaurants")
    assert (result.score, result.verdict) == (12, "Critical Risk")  # 5 + 5 + cuisine 2
    assert policy.score_incidents([], "Thai").score == 0


def test_policy_frame_columns_and_k():
    rows = [inc(0, "moderate", inter="negative"), inc(40, "severe"), inc(3, "mild", bid="b")]
    out = compute_policy_gt_frame(frame(rows), REST, "G1_allergy_V2", [25, None])
    a25 = out.filter((pl.col("business_id") == "a") & (pl.col("k") == 25)).row(0, named=True)
    assert (a25["score"], a25["n_incidents"], a25["n_reviews"], a25["cuisine_modifier"]) == (10.0, 1, 25, True)
    assert a25["incidents"] == [{"review_id": "a0", "idx": 0, "severity": "moderate", "base_points": 5.0,
                                 "modifiers": ["Dismissive staff"], "total_points": 8.0}]
    a_all = out.filter((pl.col("business_id") == "a") & pl.col("k").is_null()).row(0, named=True)
    assert a_all["score"] == 25.0 and a_all["n_reviews"] == 30  # 8 + 15 + 2
    assert distribution_by_k(out)["total"].to_list() == [3, 3]


# -- set-wise equals the pure evaluation -------------------------------------------------------
judgment = st.fixed_dictionaries({
    "business_id": st.sampled_from(["a", "b", "c"]),
    "idx": st.integers(0, 40),
    "incident_severity": st.sampled_from(["none", "mild", "moderate", "severe", "Severe "]),
    "account_type": st.sampled_from(["none", "firsthand", "secondhand", "hypothetical"]),
    "safety_interaction": st.sampled_from(["none", "positive", "negative", "betrayal"]),
    "assurance_claim": st.sampled_from([None, "true", "false", "unknown"]),
    "staff_response": st.sampled_from([None, "none", "accommodated", "refused", "dismissive"]),
    "is_allergy_related": st.sampled_from([None, True, False]),
    "date": st.one_of(st.none(), st.just("n/a"), st.integers(2015, 2025).map(lambda y: f"{y}-01-02 00:00:00")),
    "parse_error": st.sampled_from([None, None, None, "bad"]),
})


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(judgment, max_size=40, unique_by=lambda r: (r["business_id"], r["idx"])),
       ks=st.lists(st.one_of(st.none(), st.integers(1, 45)), min_size=1, max_size=3),
       policy_id=st.sampled_from(["G1_allergy_V0", "G1_allergy_V1", "G1_allergy_V2", "G1_allergy_V3"]))
def test_setwise_policy_equals_evaluate(rows, ks, policy_id):
    for r in rows:
        r["review_id"] = f"{r['business_id']}-{r['idx']}"
    policy = get_policy(policy_id, None)
    out = compute_policy_gt_frame(frame(rows), REST, policy, ks)
    for got in out.iter_rows(named=True):
        mine = [r for r in rows if r["business_id"] == got["business_id"] and (got["k"] is None or r["idx"] < got["k"])]
        want = policy.evaluate(sorted(mine, key=lambda r: r["idx"]), got["categories"])
        assert got["score"] == pytest.approx(want.score)
        assert (got["verdict"], got["cuisine_modifier"], got["triggered_rule"]) == (
            want.verdict, want.cuisine_modifier, want.triggered_rule)
        assert [i["review_id"] for i in got["incidents"]] == [b["review_id"] for b in want.breakdown]
        assert [i["modifiers"] for i in got["incidents"]] == [b["modifiers"] for b in want.breakdown]


# -- bad policy files ----------------------------------------------------------------------------
def _write(folder, name, text):
    (folder / f"{name}.yaml").write_text(text, encoding="utf-8")


def test_bad_policy_files_name_file_and_field(tmp_path):
    _write(tmp_path, "P_bad_signal", "policy_id: P_bad_signal\nscoring:\n  modifiers:\n    - {signal: nope, points: 1}\n")
    with pytest.raises(DataError, match=r"P_bad_signal.yaml: field 'scoring.modifiers\[0\].signal': unknown signal"):
        load_policy_file(tmp_path / "P_bad_signal.yaml")
    _write(tmp_path, "P_syntax", "policy_id: P_syntax\nrules: [\n")
    with pytest.raises(DataError, match="P_syntax.yaml:.*not valid YAML"):
        load_policy_file(tmp_path / "P_syntax.yaml")
    _write(tmp_path, "P_verdict", "policy_id: P_verdict\nrules:\n  - verdict: Maybe\n")
    with pytest.raises(DataError, match=r"field 'rules\[0\].verdict'"):
        load_policy_file(tmp_path / "P_verdict.yaml")
    _write(tmp_path, "P_loop1", "policy_id: P_loop1\nextends: P_loop2\n")
    _write(tmp_path, "P_loop2", "policy_id: P_loop2\nextends: P_loop1\n")
    with pytest.raises(DataError, match="extends itself"):
        load_policy_file(tmp_path / "P_loop1.yaml")


def test_a_new_policy_is_data_only(tmp_path):
    _write(tmp_path, "G1_allergy_V0", Path(get_policy("G1_allergy_V0", None).source).read_text(encoding="utf-8"))
    _write(tmp_path, "Strict", "policy_id: Strict\nextends: G1_allergy_V0\ntask: G1a\nscoring:\n"
                               "  severity_points: {mild: 4, moderate: 4, severe: 4}\nrules:\n"
                               "  - verdict: High Risk\n    any: [{text: any incident, score_at_least: 4}]\n")
    strict = load_policy_file(tmp_path / "Strict.yaml")
    assert strict.evaluate([inc(0, "mild")], None).verdict == "High Risk"
