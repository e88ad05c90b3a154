"""The policy language of every topic (SPEC §3.3b, issue 11): ADDM's G1 dietary and G2 business
policies imported, their verdicts on hand-built judgments condition by condition (per-K thresholds,
score ≤ rules, the relevance filter, recency against a reference date), the set-wise frame against
the pure evaluation, imported vs hand-written twins on random judgments, and today's G1 allergy
and xnot GT unchanged to the byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.ground_truth import compute_policy_gt_frame, distribution_by_k
from core.ground_truth.policies.addm_import import import_policies
from core.ground_truth.policies.loader import get_policy, list_policies, load_policy_file
from core.workspace import Workspace
from tests.helpers.policy_cases import HEAD, KS, REST, SCHEMA, judgments, verdicts_by_k

HAND = Path(__file__).parent / "data" / "policies"


@pytest.fixture(scope="module")
def imported(tmp_path_factory, fixtures_dir):
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    report = import_policies(ws, [fixtures_dir / HEAD / "policies"], fixtures_dir / HEAD / "terms")
    return ws, report


# -- import -------------------------------------------------------------------------------------
pytestmark = pytest.mark.fixtures


def test_all_twelve_head_policies_import_with_a_task_per_topic(imported):
    ws, report = imported
    assert report.errors == [] and report.unchanged == []
    assert report.imported == ([f"G1_allergy_V{i}" for i in range(1, 5)] + [f"G1_dietary_V{i}" for i in range(1, 5)]
                               + [f"G2_business_V{i}" for i in range(1, 5)])
    assert report.replaces_builtin == ["G1_allergy_V1", "G1_allergy_V2", "G1_allergy_V3"]  # ids of the built-ins
    assert sorted(p.name for p in (ws.root / "tasks").iterdir()) == ["G1_allergy.yaml", "G1_dietary.yaml",
                                                                    "G2_business.yaml"]
    from core.tasks import get_task

    business = get_task("G2_business", ws)
    assert business.verdict_scale == ("Not Recommended", "Acceptable", "Recommended")
    assert business.field("meeting_outcome").values == ("negative", "neutral", "positive")
    assert business.field("is_relevant").values == ("true", "false")
    assert business.policies == tuple(f"G2_business_V{i}" for i in range(1, 5))
    assert "quiet" in business.keywords  # from the business term cues, never from the shared ones
    assert get_policy("G2_business_V3", ws=ws).verdicts == ("Not Recommended", "Acceptable", "Recommended")
    assert {p.policy_id for p in list_policies(ws, "G1_dietary")} == {f"G1_dietary_V{i}" for i in range(1, 5)}
    # a value outside its term's enum is a warning naming the file and YAML path, not an error
    assert any("G2/business/V1.yaml: normative.decision.rules[0].conditions[1].filter.professionalism" in w
               and "'professional'" in w for w in report.warnings)
    assert any("'Medical restriction' has no field mapping" in w for w in report.warnings)


def test_high_risk_cuisine_applies_with_a_field_mapping_as_addm_computes_it(imported):
    """The head G1 allergy V3/V4 have a field_mapping and list "High-risk cuisine" (+2) among their
    modifiers; ADDM's scoring adds it once per restaurant with an incident, mapping or not."""
    ws, report = imported
    assert not any("High-risk cuisine" in w for w in report.warnings)
    for pid in ("G1_allergy_V3", "G1_allergy_V4"):
        policy = get_policy(pid, ws=ws)
        assert [(m.label, m.points, m.min_incidents) for m in policy.restaurant_modifiers] == [
            ("High-risk cuisine", 2, 1)]
        rows = [{"account_type": "firsthand", "incident_severity": "mild"}]
        both = pl.concat([judgments(rows), judgments(rows).with_columns(business_id=pl.lit("b"))])
        frame = compute_policy_gt_frame(both, REST, policy, [25])
        score = {r["business_id"]: r["score"] for r in frame.iter_rows(named=True)}
        assert score["a"] == score["b"] + 2 and score["b"] > 0  # "a" is Thai, "b" a pizzeria
        no_incident = compute_policy_gt_frame(judgments([{"account_type": "firsthand", "incident_severity": "none"}]),
                                              REST, policy, [25]).filter(pl.col("business_id") == "a")
        assert no_incident["score"].to_list() == [0]


def test_constants_are_deeply_immutable(imported):
    ws, _ = imported
    p = get_policy("G2_business_V3", ws=ws)
    with pytest.raises(TypeError):
        p.severity_points["positive"] = 99  # type: ignore[index]
    with pytest.raises(TypeError):
        p.signals["x"] = None  # type: ignore[index]
    assert isinstance(p.rules, tuple) and isinstance(p.rules[0].conditions[0].score_by_k, tuple)


def test_unexpressible_construct_is_an_error_naming_file_and_yaml_path(tmp_path, fixtures_dir):
    src = fixtures_dir / HEAD / "policies/G1/dietary/V1.yaml"
    bad = tmp_path / "V1.yaml"
    bad.write_text(src.read_text().replace("type: count_threshold", "type: ratio_threshold", 1))
    ws = Workspace(tmp_path / "ws")
    report = import_policies(ws, [bad], fixtures_dir / HEAD / "terms")
    assert report.imported == []
    assert report.errors == [{"file": str(bad), "error": f"{bad}: field 'normative.decision.rules[0].conditions[0].type': "
                              "condition type 'ratio_threshold' cannot be expressed"}]
    assert not (ws.root / "policies").exists() and not (ws.root / "tasks").exists()  # nothing half written
    unknown = tmp_path / "V2.yaml"
    unknown.write_text(src.read_text().replace("min_count: 2", "min_ratio: 2", 1))
    report = import_policies(ws, [unknown], fixtures_dir / HEAD / "terms")
    assert "normative.decision.rules[0].conditions[0].min_ratio" in report.errors[0]["error"]


# -- G1 dietary V1: count rules with per-K thresholds -------------------------------------------
def test_dietary_v1_moderate_incidents_against_per_k_thresholds(imported):
    ws, _ = imported
    p = get_policy("G1_dietary_V1", ws=ws)
    mod = {"incident_severity": "moderate", "account_type": "firsthand"}
    rows = [mod, mod, mod,
            {**mod, "is_relevant": "false"},                  # not relevant: never counted
            {**mod, "account_type": "secondhand"}]            # filter needs firsthand
    got = verdicts_by_k(p, rows)
    # count = 3 moderate firsthand relevant reviews (all idx < 25, so the same count at every K)
    # Critical "moderate ≥ N": N = 2 at K25 (3 ≥ 2), 3 at K50 (3 ≥ 3) → Critical
    assert got[25][0] == got[50][0] == "Critical Risk"
    # K100: N = 4 (3 < 4) → High's "moderate ≥ 2" (by_k only for K25; default 2): 3 ≥ 2 → High
    # K200: N = 4 → High ; K = all: default N = 5 → High
    assert got[100][0] == got[200][0] == got[None][0] == "High Risk"


def test_dietary_v1_relevance_filter(imported):
    ws, _ = imported
    p = get_policy("G1_dietary_V1", ws=ws)
    severe = {"incident_severity": "severe", "account_type": "firsthand"}
    # one severe firsthand: Critical "severe ≥ 1" at K25..200 (by_k 1); K = all: default 2 → 1 < 2,
    # High has no severe condition → Low
    got = verdicts_by_k(p, [severe])
    assert [got[k][0] for k in KS] == ["Critical Risk"] * 4 + ["Low Risk"]
    # the same review judged not relevant (or with no relevance flag at all) counts nowhere → Low
    assert {v for v, _ in verdicts_by_k(p, [{**severe, "is_relevant": "false"}]).values()} == {"Low Risk"}
    assert {v for v, _ in verdicts_by_k(p, [{**severe, "is_relevant": None}]).values()} == {"Low Risk"}


def test_dietary_v2_requires_and_single_instance_conditions(imported):
    ws, _ = imported
    p = get_policy("G1_dietary_V2", ws=ws)
    # V2 adds "severe firsthand ≥ 1" with no per-K table → Critical also at K = all
    got = verdicts_by_k(p, [{"incident_severity": "severe", "account_type": "firsthand"}])
    assert {v for v, _ in got.values()} == {"Critical Risk"}
    # dismissive staff: High "dismissive ≥ N", N = 1 at K25, 2 at K50/K100, default 3 at K200/all
    dis = {"staff_response": "dismissive", "account_type": "hypothetical"}
    got = verdicts_by_k(p, [dis, dis])
    assert [got[k][0] for k in KS] == ["High Risk", "High Risk", "High Risk", "Low Risk", "Low Risk"]


# -- G2 business V3: scoring in both directions with per-K thresholds ---------------------------
def test_business_v3_score_at_most_rule_and_per_k_thresholds(imported):
    ws, _ = imported
    p = get_policy("G2_business_V3", ws=ws)
    good = {"meeting_outcome": "positive", "service_efficiency": "efficient", "account_type": "secondhand"}
    got = verdicts_by_k(p, [good] * 5)
    # each: positive 15 + Efficient service 3 = 18 (every relevant review counts, not only firsthand)
    # score = 5 × 18 = 90
    # K25: Recommended needs ≥ 150 (no); Not Recommended needs ≤ 70 (no) → Acceptable
    # K50: ≤ 100 → Not Recommended ; K100: ≤ 170 → Not Recommended ; K200/all: default ≤ 170 → Not Recommended
    assert got[25] == ("Acceptable", 90)
    assert [got[k][0] for k in (50, 100, 200, None)] == ["Not Recommended"] * 4
    bad = {"meeting_outcome": "negative", "service_efficiency": "slow", "conversation_suitability": "poor"}
    # negative −15 + Slow service −3 + Loud environment −5 = −23 each; 2 → −46 ≤ 70 → Not Recommended
    assert verdicts_by_k(p, [bad, bad])[25] == ("Not Recommended", -46)
    great = {"meeting_outcome": "positive", "privacy_level": "high", "conversation_suitability": "excellent"}
    got = verdicts_by_k(p, [great] * 7)
    # each: 15 + Private room 5 + Quiet atmosphere 3 = 23; 7 → 161
    # K25: 161 ≥ 150 → Recommended ; K50: 161 < 300, 161 > 100 → Acceptable ; K100: 161 ≤ 170 → Not Recommended
    assert [got[k][0] for k in (25, 50, 100)] == ["Recommended", "Acceptable", "Not Recommended"]


def test_business_v4_recency_against_the_reference_date(imported):
    ws, _ = imported
    p = get_policy("G2_business_V4", ws=ws)
    rows = [{"meeting_outcome": "positive", "date": "2021-06-01 12:00:00"},   # age 0.59 y ≤ 1 → × 1
            {"meeting_outcome": "positive", "date": "2020-06-01 12:00:00"},   # age 1.59 y ≤ 2 → × 0.5
            {"meeting_outcome": "positive", "date": "2017-01-01 12:00:00"}]   # age 5.0 y → × 0.25
    # 15 + 7.5 + 3.75 = 26.25 (ADDM's code would truncate each to an int: 15 + 7 + 3 = 25)
    assert verdicts_by_k(p, rows)[25] == ("Not Recommended", 26.25)
    frame = compute_policy_gt_frame(judgments(rows), REST, p, [25])
    weights = [i["total_points"] for i in frame.filter(pl.col("business_id") == "a")["incidents"][0]]
    assert weights == [15.0, 7.5, 3.75]


def test_dietary_v3_points_firsthand_only_and_modifiers(imported):
    ws, _ = imported
    p = get_policy("G1_dietary_V3", ws=ws)
    rows = [{"incident_severity": "mild", "account_type": "firsthand"},                      # 2
            {"incident_severity": "severe", "account_type": "secondhand"}]                   # not firsthand: 0
    got = verdicts_by_k(p, rows)
    # score 2: K25 High ≥ 2 → High ; K50 High ≥ 3 (no) → Low ; K200 default High ≥ 4 → Low
    assert [got[k] for k in (25, 50, 200)] == [("High Risk", 2), ("Low Risk", 2), ("Low Risk", 2)]
    rows = [{"incident_severity": "moderate", "account_type": "firsthand", "staff_knowledge": "none"}]
    # moderate 5 + False assurance (staff_knowledge = none) 5 = 10 ≥ 8 → Critical at every K
    assert {v for v in verdicts_by_k(p, rows).values()} == {("Critical Risk", 10)}


def test_distribution_uses_the_policy_scale(imported):
    ws, _ = imported
    p = get_policy("G2_business_V3", ws=ws)
    frame = compute_policy_gt_frame(judgments([{"meeting_outcome": "positive"}]), REST, p, [25])
    dist = distribution_by_k(frame, p.verdicts)
    # a: 15 ≤ 70 → Not Recommended; b, c, d: score 0 ≤ 70 → Not Recommended
    assert dist.columns == ["k", "Not Recommended", "Acceptable", "Recommended", "total"]
    assert dist.row(0) == (25, 4, 0, 0, 4)


# -- property: imported == hand-written == pure per-restaurant evaluation -----------------------
VALUES = {
    "account_type": ["firsthand", "secondhand", "hypothetical"], "incident_severity": ["none", "mild", "moderate", "severe"],
    "staff_knowledge": ["none", "poor", "adequate"], "accommodation_level": ["poor", "adequate"],
    "staff_response": ["none", "refused", "dismissive"], "meeting_outcome": ["negative", "neutral", "positive", "none"],
    "conversation_suitability": ["poor", "excellent"], "service_efficiency": ["slow", "efficient"],
    "privacy_level": ["low", "high"], "is_relevant": ["true", "false"],
}
review = st.fixed_dictionaries({
    "business_id": st.sampled_from(["a", "b", "c"]), "idx": st.integers(0, 230),
    "date": st.sampled_from(["2021-11-01", "2020-09-15", "2019-03-03", "2014-01-01", None]),
    **{f: st.sampled_from(v) for f, v in VALUES.items()},
})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(review, max_size=60, unique_by=lambda r: (r["business_id"], r["idx"])))
def test_imported_equals_hand_written_and_pure(imported, rows):
    ws, _ = imported
    frame = pl.DataFrame([{**{k: r.get(k) for k in SCHEMA}, "review_id": f"{r['business_id']}{r['idx']}", **r}
                          for r in rows], schema=SCHEMA) if rows else pl.DataFrame(schema=SCHEMA)
    for pid in ("G1_dietary_V2", "G2_business_V4"):
        mine, hand = get_policy(pid, ws), load_policy_file(HAND / f"{pid}.yaml")
        a = compute_policy_gt_frame(frame, REST, mine, KS).select("business_id", "k", "verdict", "score")
        b = compute_policy_gt_frame(frame, REST, hand, KS).select("business_id", "k", "verdict", "score")
        assert a.equals(b), pid
        for r in a.iter_rows(named=True):
            window = [x for x in frame.to_dicts() if x["business_id"] == r["business_id"]
                      and (r["k"] is None or x["idx"] < r["k"])]
            pure = mine.evaluate(window, None, r["k"])
            assert (pure.verdict, pytest.approx(pure.score)) == (r["verdict"], r["score"]), (pid, r)


# -- byte-identical GT of the G1 allergy policies and the xnot formulas -------------------------
def test_g1_allergy_and_xnot_gt_byte_identical_to_the_base_commit(fixtures_dir):
    from tests.helpers.gt_reference import all_digests

    expected = json.loads((Path(__file__).parent / "data" / "gt_reference_sha256.json").read_text())
    assert all_digests(fixtures_dir) == expected


def test_imported_policies_do_not_leak_into_other_workspaces(imported, tmp_path):
    other = Workspace(tmp_path)
    assert "G1_dietary_V1" not in {p.policy_id for p in list_policies(other)}
    builtin = get_policy("G1_allergy_V2", other)
    assert (builtin.task, builtin.has_scoring, builtin.replaces_builtin) == ("G1a", True, False)
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_workspace_policy_with_a_builtin_id_is_in_force_there_and_marked(imported):
    ws, _ = imported
    mine = get_policy("G1_allergy_V2", ws)
    # ADDM's current V2 is a rule policy of its G1_allergy topic; the built-in (earlier commit) a point policy of G1a
    assert (mine.task, mine.has_scoring, mine.replaces_builtin) == ("G1_allergy", False, True)
    assert mine.origin.startswith("ADDM G1/allergy/V2.yaml")
    listed = {p.policy_id: p for p in list_policies(ws)}
    assert listed["G1_allergy_V2"] == mine and not listed["G1_allergy_V0"].replaces_builtin
    assert listed["G1_allergy_V4"].task == "G1_allergy" and not listed["G1_allergy_V4"].replaces_builtin
    assert [p.policy_id for p in list_policies(ws, "G1a")] == ["G1_allergy_V0"]  # the others are G1_allergy's now
    assert [p.policy_id for p in list_policies(ws, "G1_allergy")] == [f"G1_allergy_V{i}" for i in range(1, 5)]


def test_same_content_ignores_where_a_policy_lives_and_nothing_else():
    from dataclasses import replace

    from core.ground_truth.policies.addm_import import same_content

    builtin = get_policy("G1_allergy_V2", None)
    assert same_content(builtin, replace(builtin, source="/elsewhere/G1_allergy_V2.yaml", origin="ADDM G1/allergy/V2.yaml"))
    assert not same_content(builtin, replace(builtin, default_verdict="High Risk"))
    assert not same_content(builtin, replace(builtin, task="G1_allergy"))


def test_whatif_edits_per_k_thresholds_and_points(imported):
    from core.ground_truth.variants import committed_constants, whatif_definition

    ws, _ = imported
    p = get_policy("G2_business_V3", ws=ws)
    flat = committed_constants(p)
    assert (flat["RULE.Not Recommended.0"], flat["RULE.Not Recommended.0.K25"], flat["SEVERITY.positive"]) == (170, 70, 15)
    good = {"meeting_outcome": "positive", "service_efficiency": "efficient"}
    # 5 × 18 = 90 → Acceptable at K25 (see above); lowering Recommended's K25 threshold to 90 → Recommended
    changed, _ = whatif_definition(p, {**flat, "RULE.Recommended.0.K25": 90}, None)
    assert verdicts_by_k(changed, [good] * 5)[25] == ("Recommended", 90)
    # positive worth 30: 5 × (30 + 3) = 165 ≥ 150 → Recommended
    changed, _ = whatif_definition(p, {**flat, "SEVERITY.positive": 30}, None)
    assert verdicts_by_k(changed, [good] * 5)[25] == ("Recommended", 165)
    v1 = get_policy("G2_business_V1", ws=ws)
    flat = committed_constants(v1)
    assert flat["RULE.Recommended.2.K25"] == 4  # "efficient service ≥ 4 at K25"
    changed, _ = whatif_definition(v1, {**flat, "RULE.Recommended.2.K25": 6}, None)
    eff = {"service_efficiency": "efficient"}
    assert verdicts_by_k(v1, [eff] * 5)[25][0] == "Recommended" and verdicts_by_k(changed, [eff] * 5)[25][0] == "Acceptable"


def test_trace_of_a_rule_policy_shows_counts_against_thresholds_at_k(imported):
    from core.ground_truth import trace_gt

    ws, _ = imported
    p = get_policy("G1_dietary_V1", ws=ws)
    mod = {"incident_severity": "moderate", "account_type": "firsthand"}
    rows = judgments([mod, mod, mod, {**mod, "is_relevant": "false"}])
    root = trace_gt(rows, REST, "a", p, 100)
    # K100: Critical "moderate ≥ 4" (3 < 4) fails; High "moderate ≥ 2" (default) holds → High
    assert root.value == "High Risk" and root.note.startswith("triggered: 2 or more moderate dietary incidents")
    assert "1 judgment(s) not relevant" in root.note
    # a condition whose text names a number other than this K's threshold says it has per-K thresholds
    critical = root.find("count: 5 or more moderate dietary incidents (per-K thresholds)")
    assert (critical.value, critical.raw, critical.note) == (3, 4.0, "3 vs 4: does not hold")
    assert critical.line == "Critical Risk when count ≥ 4 at K = 100"
    high = root.find("count: 2 or more moderate dietary incidents")  # the default applies at K = 100
    assert (high.value, high.note) == (3, "3 vs 2: holds") and [r.idx for r in high.reviews] == [0, 1, 2]
    v3 = trace_gt(rows, REST, "a", get_policy("G2_business_V3", ws=ws), 25)
    node = v3.find("threshold: score ≤ 170 (per-K thresholds)")
    assert (node.value, node.note) == (70.0, "score 0 vs 70: holds")  # no meeting outcome → score 0 ≤ 70
