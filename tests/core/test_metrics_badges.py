"""Badges that do not flatter: accuracy beside the majority-class baseline, incidents claimed and found,
and ⚠ with a reason for degenerate scores (the SPEC §5 values themselves unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.metrics import score_results
from core.metrics import views as mv
from core.metrics.badges import badges, incidents_line, majority_baseline, run_facts, warning_lines
from core.metrics.summary import format_comparison, format_summary
from core.metrics.synthetic import synthetic_run
from core.runs.records import read_run_summary, run_summary, write_run_summary
from tests.helpers.metrics import answer, no_incident_run, run, sample

N = 50


def test_the_degenerate_run_keeps_its_scores_but_loses_its_ticks():
    scored = no_incident_run()
    # SPEC §5 values, unchanged, by hand:
    #  AUPRC: one constant score → AP(≥High) = prevalence = 1/50; ≥Critical undefined → 2.0 %
    #  Process: no claim → incident precision, severity, modifiers null; verdict support 50/50 = 1;
    #           snippet validity 0/50 → 100·(0.15·1 + 0.05·0)/(0.15 + 0.05) = 75.0
    #  Consistency: 50 verdicts with an evidence, each recomputed from no incident → Low → 100.0
    #  Accuracy: 49/50 = 98.0 %, exactly the majority baseline (always Low Risk: 49/50)
    assert scored["unified_scores"]["auprc"] == pytest.approx(0.02)
    assert scored["unified_scores"]["process_score"] == pytest.approx(75.0)
    assert scored["unified_scores"]["consistency_score"] == pytest.approx(100.0)
    assert scored["accuracy"] == pytest.approx(0.98)
    rows = {r["metric"]: r for r in badges(scored)}
    # before: Accuracy 98 % ✓ and Consistency 100 % ✓ (a bare "above 75 %" rule)
    assert {m: r["status"] for m, r in rows.items()} == {"AUPRC": "⚠", "Process": "⚠", "Consistency": "⚠",
                                                        "Accuracy": "✗"}
    assert "the AP is the prevalence" in rows["AUPRC"]["note"]
    assert rows["Process"]["note"] == ("incident precision, severity and modifier accuracy are N/A (the run claimed "
                                       "no incident): the score rests on verdict support and snippet validity alone "
                                       "(weight 0.20 of 1.00)")
    assert rows["Consistency"]["note"].startswith("no sample claimed an incident: it only checks that each verdict "
                                                  "is Low Risk")
    assert rows["Accuracy"]["note"] == ("not above the majority-class baseline 98.0% (always answering Low Risk)")
    facts = run_facts(scored)
    assert facts["majority"] == {"verdict": "Low Risk", "share": 0.98, "n": 50}
    assert incidents_line(facts) == "0 incidents claimed, 0 of 1 GT incident found"
    assert facts["distinct_ranking_scores"] == 1

    text = format_summary(scored)
    assert "│ Accuracy    │ 98.0%  │ ✗" in text and "│ Consistency │ 100.0% │ ⚠" in text
    assert "Accuracy 98.0% (49/50) vs majority-class baseline 98.0% (always Low Risk)" in text
    assert " 0 incidents claimed, 0 of 1 GT incident found" in text
    assert all(f" {line}" in text for line in warning_lines(list(rows.values())))
    assert "✓" not in text.split("PROCESS COMPONENTS")[0]
    head = mv.headline(scored)
    assert head["status"].to_list() == ["⚠", "⚠", "⚠", "✗"] and head["note"].null_count() == 0


def test_a_run_above_the_baseline_keeps_its_ticks():
    results, gt, texts = synthetic_run(60, seed=3, noise=0.0, method="direct", k=50, run_id="good")
    scored = score_results(results, gt=gt, review_texts=texts, n_boot=0)
    rows = {r["metric"]: r for r in badges(scored)}
    assert {r["status"] for r in rows.values()} == {"✓"} and not warning_lines(list(rows.values()))
    facts = run_facts(scored)
    found = sum(len(g["incidents"]) for g in gt.values())
    assert incidents_line(facts) == f"{found} incidents claimed, {found} of {found} GT incidents found"
    assert scored["accuracy"] > facts["majority"]["share"]


def test_accuracy_above_75_but_at_the_baseline_gets_no_tick():
    # 9 GT Low, 1 GT High; the method says Low everywhere but orders its scores well: accuracy 90 % =
    # the baseline (9/10) → ✗, while AUPRC 100 % keeps its ✓ (a real ranking)
    samples = [sample(f"b{i}", answer("Low Risk", [], score=float(i))) for i in range(10)]
    gt = {f"b{i}": {"verdict": "High Risk" if i == 9 else "Low Risk", "incidents": []} for i in range(10)}
    scored = score_results(run(samples), gt=gt, n_boot=0)
    rows = {r["metric"]: r for r in badges(scored)}
    assert rows["Accuracy"]["score_pct"] == pytest.approx(90.0) and rows["Accuracy"]["status"] == "✗"
    assert rows["AUPRC"]["status"] == "✓" and rows["AUPRC"]["note"] is None
    # evidence lists are empty: no consistency check at all (N/A), and process rests on verdict support
    assert rows["Consistency"]["status"] == "N/A" and rows["Process"]["status"] == "⚠"


def test_majority_baseline_ties_go_to_the_scale_order():
    scale = ["Low Risk", "High Risk", "Critical Risk"]
    assert majority_baseline(["High Risk", "Low Risk"], scale) == {"verdict": "Low Risk", "share": 0.5, "n": 2}
    assert majority_baseline(["Critical Risk"] * 3 + ["Low Risk"], scale)["verdict"] == "Critical Risk"


def test_gt_incidents_count_every_scored_sample_structured_or_not():
    # b0: no structured answer (parse error) but 2 GT incidents; b1 claims its one GT incident and one more
    # → 2 claimed, 1 of 3 GT incidents found
    texts = {"b1-r0": "I had hives after the satay.", "b1-r1": "Lovely place."}
    samples = [sample("b0", None), sample("b1", answer("High Risk", [
        {"review_id": "b1-r0", "severity": "moderate"}, {"review_id": "b1-r1", "severity": "mild"}], texts=texts))]
    samples[0]["verdict"] = None
    gt = {"b0": {"verdict": "High Risk", "incidents": [{"review_id": "b0-r0", "severity": "mild", "modifiers": []},
                                                       {"review_id": "b0-r1", "severity": "mild", "modifiers": []}]},
          "b1": {"verdict": "High Risk", "incidents": [{"review_id": "b1-r0", "severity": "moderate", "modifiers": []}]}}
    scored = score_results(run(samples), gt=gt, review_texts=texts, n_boot=0)
    assert incidents_line(run_facts(scored)) == "2 incidents claimed, 1 of 3 GT incidents found"
    # a run scored before the count existed: only the structured samples' GT incidents are known
    old = json.loads(json.dumps(scored))
    del old["unified_metrics_full"]["intermediate_metrics"]["n_gt_incidents"]
    assert incidents_line(run_facts(old)) == "2 incidents claimed, 1 of at least 1 GT incidents found"
    # GT of verdicts only: nothing can be checked
    verdicts_only = score_results(run(samples), gt={b: {"verdict": g["verdict"]} for b, g in gt.items()}, n_boot=0)
    assert incidents_line(run_facts(verdicts_only)) == \
        "2 incidents claimed; GT lists no incidents (verdicts only): none can be checked"
    rows = {r["metric"]: r for r in badges(verdicts_only)}
    assert "GT lists no incidents to check claims against" in rows["Process"]["note"]


def test_summaries_carry_the_facts_and_an_older_summary_is_ignored(tmp_path):
    scored = no_incident_run()
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(scored), encoding="utf-8")
    write_run_summary(folder, scored)
    stat = (folder / "results.json").stat()
    summary = read_run_summary(folder / "results.json", stat.st_size, stat.st_mtime_ns)
    assert summary is not None and summary["facts"] == json.loads(json.dumps(run_facts(scored)))
    assert mv.headline(summary).equals(mv.headline(scored))  # no samples needed for the badges
    assert "98.0% ✗" in format_comparison([summary]) and "⚠" in format_comparison([summary])
    older = {k: v for k, v in json.loads((folder / "summary.json").read_text()).items() if k != "facts"}
    (folder / "summary.json").write_text(json.dumps(older), encoding="utf-8")
    assert read_run_summary(folder / "results.json", stat.st_size, stat.st_mtime_ns) is None
    assert run_summary(scored)["facts"]["majority"]["share"] == pytest.approx(0.98)


def test_real_xnot_run_badges():
    from core.base.files import read_json
    from core.metrics.xnot import results_from_xnot

    path = Path(__file__).resolve().parent.parent / "data" / "xnot_results" / "G1a_k50_20260110_060155" / \
        "detailed_results.json"
    results, gt = results_from_xnot(read_json(path), path=str(path))
    scored = score_results(results, gt=gt, n_boot=0)
    rows = {r["metric"]: r for r in badges(scored)}
    facts = run_facts(scored)
    # K=50 GT: 96 Low / 2 High / 2 Critical → majority baseline 96 %
    assert facts["majority"] == {"verdict": "Low Risk", "share": 0.96, "n": 100}
    assert rows["Accuracy"]["status"] == ("✓" if scored["accuracy"] > 0.96 else "✗")
    assert incidents_line(facts) == ("no incident claimed (no answer carries an evidence list); GT lists no incidents "
                                     "(verdicts only): none can be checked")
