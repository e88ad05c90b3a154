"""core.metrics: known values (arithmetic in comments), a slow reference, properties, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, f1_score

from core.ground_truth import get_policy
from core.metrics import (
    METRICS,
    average_precision,
    claimed_incidents,
    macro_f1_score,
    ordinal_auprc,
    paired_differences,
    process_score,
    sample_table,
    score_results,
    weighted_average_precision,
)
from core.metrics.bootstrap import draw_counts, resample_index
from core.metrics.ranking import average_precision_score_like_sklearn
from tests.helpers.metrics import answer, run, sample

V2 = get_policy("G1_allergy_V2", None)


def slow_ap(y, s):
    """AP by its definition: Σ over distinct thresholds (descending) of ΔRecall · Precision."""
    pos = sum(y)
    ap, prev_recall = 0.0, 0.0
    for thr in sorted(set(s), reverse=True):
        chosen = [yi for yi, si in zip(y, s, strict=True) if si >= thr]
        tp = sum(chosen)
        recall = tp / pos
        ap += (recall - prev_recall) * tp / len(chosen)
        prev_recall = recall
    return ap


# -- policy arithmetic (SPEC §3.3 through the policy GT uses) -----------------------------------
def test_policy_examples_from_the_seed():
    # 1 moderate (5) + False assurance (+5) = 10 ≥ 8 → Critical Risk
    r = V2.score_incidents([{"severity": "moderate", "modifiers": ["False assurance"]}], "Italian")
    assert (r.score, r.verdict) == (10, "Critical Risk")
    # 2 mild = 2 + 2 = 4 ≥ 4 → High Risk
    r = V2.score_incidents([{"severity": "mild", "modifiers": []}] * 2, "Italian")
    assert (r.score, r.verdict) == (4, "High Risk")
    # 1 mild = 2 < 4 → Low Risk
    r = V2.score_incidents([{"severity": "mild", "modifiers": []}], "Italian")
    assert (r.score, r.verdict) == (2, "Low Risk")
    # 1 mild (2) + Thai cuisine (+2, once, only with an incident) = 4 → High Risk
    assert V2.score_incidents([{"severity": "mild", "modifiers": []}], "Thai").verdict == "High Risk"


def test_claimed_incidents_from_evidence():
    ev = [
        {"review_id": "r1", "field": "INCIDENT_SEVERITY", "judgement": "Moderate reaction"},
        {"review_id": "r1", "field": "INCIDENT_SEVERITY", "judgement": "severe"},  # highest of several
        {"review_id": "r1", "field": "ASSURANCE_CLAIM", "judgement": "yes"},
        {"review_id": "r2", "field": "INCIDENT_SEVERITY", "judgement": "mild"},
        {"review_id": "r2", "field": "ACCOUNT_TYPE", "judgement": "secondhand"},  # not firsthand: dropped
        {"review_id": "r3", "field": "INCIDENT_SEVERITY", "judgement": "mild"},
        {"review_id": "r3", "field": "STAFF_RESPONSE", "judgement": "rude and dismissive"},
        {"review_id": "r4", "field": "INCIDENT_SEVERITY", "judgement": "none"},
    ]
    assert claimed_incidents(ev, V2) == [
        {"review_id": "r1", "severity": "severe", "modifiers": ["False assurance"]},
        {"review_id": "r3", "severity": "mild", "modifiers": ["Dismissive staff"]},
    ]


# -- process score -------------------------------------------------------------------------------
def test_process_score_seed_example():
    # (.35·1.0 + .30·0.5714 + .15·1.0 + .15·0.98) / (.35+.30+.15+.15)
    # = (.35 + .17142 + .15 + .147) / .95 = .81842 / .95 = .86149… → 86.15
    r = process_score({"incident_precision": 1.0, "severity_accuracy": 0.5714, "modifier_accuracy": 1.0,
                       "verdict_support_rate": 0.98, "snippet_validity": None})
    assert round(r["process_score"], 2) == 86.15
    assert r["total_weight"] == 0.95 and r["weighted_sum"] == pytest.approx(0.81842)


def test_process_score_every_null_component_redistributed():
    # only severity (.30 · 0.5) and snippets (.05 · 1.0) defined: (.15 + .05)/.35 = 57.142857…
    r = process_score({"incident_precision": None, "severity_accuracy": 0.5, "modifier_accuracy": None,
                       "verdict_support_rate": None, "snippet_validity": 1.0})
    assert r["process_score"] == pytest.approx(100 * 0.20 / 0.35)
    assert process_score(dict.fromkeys(["incident_precision", "snippet_validity"]))["process_score"] is None
    with pytest.raises(ValueError, match="unknown process component"):
        process_score({"recall": 1.0})


def test_score_results_known_values():
    texts = {"a1": "We had a moderate reaction after the waiter said it was nut free.", "b1": "Mild hives.",
             "b2": "Itchy throat, mild.", "c1": "Great pasta."}
    gt = {
        # GT A: 1 moderate + False assurance = 10 → Critical
        "A": {"verdict": "Critical Risk", "categories": "Italian",
              "incidents": [{"review_id": "a1", "severity": "moderate", "modifiers": ["False assurance"]}]},
        # GT B: 2 mild = 4 → High
        "B": {"verdict": "High Risk", "categories": "Italian",
              "incidents": [{"review_id": "b1", "severity": "mild", "modifiers": []},
                            {"review_id": "b2", "severity": "mild", "modifiers": []}]},
        "C": {"verdict": "Low Risk", "categories": "Italian", "incidents": []},
    }
    samples = [
        # A: right incident, severity right, modifier missed; verdict High (claims 5 ≥ 4 → High: consistent)
        sample("A", answer("High Risk", [{"review_id": "a1", "severity": "moderate", "modifiers": []}],
                           texts=texts, score=5)),
        # B: one of the two incidents, right severity; verdict Low (2 → Low: consistent)
        sample("B", answer("Low Risk", [{"review_id": "b1", "severity": "mild", "modifiers": []}],
                           texts=texts, score=2)),
        # C: claims an incident on a review GT does not have (false positive); verdict High (2 → Low)
        sample("C", answer("High Risk", [{"review_id": "c1", "severity": "mild", "modifiers": []}],
                           texts=texts, score=3)),
    ]
    out = score_results(run(samples), gt=gt, review_texts=texts, n_boot=200)
    comp = out["unified_metrics_full"]["process_components"]
    assert comp["incident_precision"] == pytest.approx(2 / 3)   # claimed a1, b1, c1; GT has a1, b1
    assert comp["severity_accuracy"] == 1.0                     # a1 moderate = moderate; b1 mild = mild
    assert comp["modifier_accuracy"] == pytest.approx(3 / 4)    # 2 matched × 2 modifiers; a1 FA missed
    assert comp["verdict_support_rate"] == pytest.approx(2 / 3)  # A: 5 → High ✓; B: 2 → Low ✓; C: 2 → Low ≠ High
    assert comp["snippet_validity"] == 1.0
    # (.35·2/3 + .30·1 + .15·3/4 + .15·2/3 + .05·1) / 1.0 = .23333 + .3 + .1125 + .1 + .05 = .795833
    assert out["unified_scores"]["process_score"] == pytest.approx(79.5833, abs=1e-4)
    assert out["unified_scores"]["consistency_score"] == pytest.approx(200 / 3)  # same 2 of 3, from all claims
    assert (out["accuracy"], out["correct"], out["total"]) == (0.0, 0, 3)
    # ranking by risk_score: A 5, C 3, B 2. ≥High: y = A1 B1 C0 → order A(1) C(0) B(1): AP = (1·1 + 1·2/3)/2 = 5/6
    # ≥Critical: y = A only, ranked first → AP 1. ordinal = (5/6 + 1)/2 = 11/12
    assert out["auprc"]["auprc_ge_high"] == pytest.approx(5 / 6)
    assert out["auprc"]["auprc_ge_critical"] == 1.0
    assert out["unified_scores"]["auprc"] == pytest.approx(11 / 12)
    assert out["auprc"]["ranking_score"] == {"source": "risk_score", "n_missing": 0}
    assert out["unified_metrics_full"]["intermediate_metrics"]["false_positive_rate"] == 1.0  # C is GT Low, claims one
    assert set(out["intervals"]["scores"]) >= {"ordinal_auprc", "process_score", "consistency_score", "accuracy"}
    assert samples[0].get("correct") is None  # the input is not modified


def test_ranking_falls_back_to_trace_total_then_verdict():
    s = [sample("A", {"verdict": "High Risk", "evidences": [],
                      "justification": {"scoring_trace": {"total_score": 4}}}, gt_verdict="High Risk"),
         sample("B", {"verdict": "Low Risk", "evidences": []}, gt_verdict="Low Risk")]
    out = score_results(run(s), n_boot=0)
    assert out["auprc"]["ranking_score"] == {"source": "scoring_trace.total_score", "n_missing": 1}
    s = [sample("A", None, gt_verdict="High Risk"), sample("B", None, gt_verdict="Low Risk")]
    s[0]["verdict"], s[1]["verdict"] = "High Risk", "Low Risk"
    out = score_results(run(s), n_boot=0)
    assert out["auprc"]["ranking_score"]["source"] == "verdict ordinal"
    # No structured answer: process components and consistency are all null (N/A), never 0
    assert out["unified_scores"]["process_score"] is None and out["unified_scores"]["consistency_score"] is None
    assert out["auprc"]["auprc_ge_critical"] is None
    assert out["auprc"]["thresholds"][1]["reason"] == "no sample has GT ≥ Critical Risk"


def test_other_verdict_scale():
    scale = ["Not Recommended", "Acceptable", "Recommended"]
    r = ordinal_auprc([0, 1, 2, 2], [0.1, 0.5, 0.9, 0.7], scale=scale)
    assert r["auprc_ge_acceptable"] == 1.0 and r["auprc_ge_recommended"] == 1.0


# -- AP: slow reference, scikit-learn, edge cases ------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 5)), min_size=2, max_size=30))
def test_average_precision_matches_reference_and_sklearn(pairs):
    y = [p[0] for p in pairs]
    s = [float(p[1]) for p in pairs]  # few distinct values: many ties
    if 0 < sum(y):
        assert float(average_precision(y, s)) == pytest.approx(slow_ap(y, s))
        assert float(average_precision(y, s)) == pytest.approx(average_precision_score(y, s))
    else:
        assert np.isnan(average_precision(y, s))


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 80), st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_the_ordinal_auprc_ap_is_sklearns_float(n, seed, distinct):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[rng.integers(0, n)] = 1  # at least one positive
    s = rng.integers(0, distinct, n) / rng.integers(1, 7)  # ties and fractions
    assert average_precision_score_like_sklearn(y, s) == float(average_precision_score(y, s))


def test_average_precision_edge_cases():
    assert np.isnan(average_precision([0, 0, 0], [0.1, 0.2, 0.3]))   # no positive: undefined
    assert average_precision([1, 1], [0.1, 0.2]) == 1.0              # one class (all positive)
    assert average_precision([1, 0], [0.5, 0.5]) == 0.5              # one tie group: precision 1/2
    assert np.isnan(average_precision([], []))                       # empty
    with pytest.raises(ValueError, match="NaN"):
        average_precision([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError, match="0/1"):
        average_precision([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="shape"):
        average_precision([0, 1], [0.1])
    r = ordinal_auprc([], [])
    assert r["ordinal_auprc"] is None and r["thresholds"][0]["reason"] == "no samples"
    assert ordinal_auprc([1, 2], [0.1, 0.2])["thresholds"][0]["reason"] == "every sample has GT ≥ High Risk"
    with pytest.raises(ValueError, match="NaN"):
        ordinal_auprc([0, 1], [np.nan, 1])


# -- macro F1: by hand, scikit-learn on random inputs, edge cases ---------------------------------
SCALE = ["Low Risk", "High Risk", "Critical Risk"]


def test_macro_f1_by_hand():
    # Low: TP 1, 2 true, 1 predicted -> 2·1/(2+1) = 2/3; High: TP 1, 1 true, 2 predicted -> 2/3;
    # Critical: never true nor predicted -> 0 (zero_division 0); mean (2/3 + 2/3 + 0)/3 = 4/9
    got = macro_f1_score(["Low Risk", "Low Risk", "High Risk"], ["Low Risk", "High Risk", "High Risk"], labels=SCALE)
    assert got == pytest.approx(4 / 9, abs=1e-15)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 60), st.integers(0, 2**32 - 1), st.booleans())
def test_macro_f1_equals_sklearn_on_random_inputs(n, seed, with_other):
    rng = np.random.default_rng(seed)
    values = SCALE + (["Not a verdict", None] if with_other else [])
    y_true = [SCALE[i] for i in rng.integers(0, 3, n)]
    y_pred = [values[i] for i in rng.integers(0, len(values), n)]
    want = f1_score(y_true, ["" if v is None else v for v in y_pred], labels=SCALE, average="macro", zero_division=0)
    got = macro_f1_score(y_true, y_pred, labels=SCALE)
    assert abs(got - want) <= 1e-12
    assert got == float(want)  # the same operations in the same order: the same float


def test_macro_f1_edge_cases():
    assert macro_f1_score([], [], labels=SCALE) is None
    assert macro_f1_score(["Low Risk"], ["Low Risk"], labels=["Low Risk"]) == 1.0  # one class, all right
    assert macro_f1_score(["Low Risk"], [None], labels=SCALE) == 0.0               # no answer: no label
    with pytest.raises(ValueError, match="one length"):
        macro_f1_score(["Low Risk"], [], labels=SCALE)
    with pytest.raises(ValueError, match="at least one verdict"):
        macro_f1_score(["Low Risk"], ["Low Risk"], labels=[])


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 25), st.integers(0, 10_000))
def test_weighted_ap_equals_sklearn_on_each_resample(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = rng.integers(0, 4, n).astype(float)
    idx = resample_index(n, n_boot=20, seed=seed)
    got = weighted_average_precision(y, s, draw_counts(idx, n))
    for b in range(20):
        yb, sb = y[idx[b]], s[idx[b]]
        if 0 < yb.sum() < n:
            assert got[b] == pytest.approx(average_precision_score(yb, sb))
        else:
            assert np.isnan(got[b])


# -- paired bootstrap vs a plain loop ------------------------------------------------------------
def _random_run(rng, ids, noise):
    verdicts = ["Low Risk", "High Risk", "Critical Risk"]
    samples = []
    for i, bid in enumerate(ids):
        g = verdicts[i % 3]
        v = verdicts[int(np.clip(i % 3 + rng.integers(-noise, noise + 1), 0, 2))]
        samples.append(sample(bid, {"verdict": v, "risk_score": float(rng.integers(0, 6)), "evidences": []},
                              gt_verdict=g))
    return score_results(run(samples), n_boot=0)


def test_paired_bootstrap_matches_plain_loop():
    rng = np.random.default_rng(3)
    ids = [f"b{i}" for i in range(12)]
    a, b = _random_run(rng, ids, 1), _random_run(rng, ids, 0)
    got = paired_differences(sample_table(a), sample_table(b), n_boot=50, seed=7)
    idx = resample_index(12, n_boot=50, seed=7)
    diffs_acc, diffs_auprc = [], []
    for row in idx:  # the plain loop: rescore each resample with scikit-learn
        def stats(r, row=row):
            s = [r["results"][i] for i in row]
            acc = np.mean([x["correct"] for x in s])
            ords = np.array([["Low Risk", "High Risk", "Critical Risk"].index(x["gt_verdict"]) for x in s])
            sc = np.array([x["risk_score"] for x in s])
            aps = [average_precision_score(ords >= t, sc) for t in (1, 2) if 0 < (ords >= t).sum() < len(s)]
            return acc, (np.mean(aps) if aps else np.nan)
        (acc_a, ap_a), (acc_b, ap_b) = stats(a), stats(b)
        diffs_acc.append(acc_b - acc_a)
        diffs_auprc.append(ap_b - ap_a)
    d = got["differences"]
    assert d["accuracy"]["low"] == pytest.approx(np.percentile(diffs_acc, 2.5))
    assert d["accuracy"]["high"] == pytest.approx(np.percentile(diffs_acc, 97.5))
    ok = [x for x in diffs_auprc if not np.isnan(x)]
    assert d["ordinal_auprc"]["low"] == pytest.approx(np.percentile(ok, 2.5))
    assert d["ordinal_auprc"]["high"] == pytest.approx(np.percentile(ok, 97.5))
    assert d["accuracy"]["difference"] == pytest.approx(b["accuracy"] - a["accuracy"])


def test_registry_lists_valid_names():
    assert "ordinal_auprc" in METRICS
    with pytest.raises(Exception, match="unknown metric .auroc.; valid: accuracy"):
        METRICS["auroc"]
    with pytest.raises(ValueError, match="n_boot"):
        resample_index(3, n_boot=0, seed=0)


def test_score_results_edge_cases():
    empty = score_results({"results": []}, n_boot=50)
    assert empty["unified_scores"] == {"auprc": None, "process_score": None, "consistency_score": None}
    assert empty["intervals"]["scores"]["ordinal_auprc"] == {"low": None, "high": None, "n_defined": 0, "n_boot": 50}
    no_gt = score_results({"results": [{"business_id": "a", "verdict": "Low Risk"}]}, n_boot=0)
    assert (no_gt["total"], no_gt["n_without_gt"], no_gt["accuracy"]) == (0, 1, None)
    # a NaN risk score is not a number: ranking falls back to the verdict ordinal
    nan = score_results({"results": [{"business_id": "a", "verdict": "Low Risk", "gt_verdict": "Low Risk",
                                      "risk_score": float("nan")}]}, n_boot=0)
    assert nan["auprc"]["ranking_score"]["source"] == "verdict ordinal"
    with pytest.raises(ValueError, match=r"results\[0\] must be an object with business_id"):
        score_results({"results": [1]})
    with pytest.raises(ValueError, match="'results' list"):
        score_results({"samples": []})
