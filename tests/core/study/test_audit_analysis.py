"""The audit is stratified, seeded and blinded; every analysis statistic matches numpy/scipy on a
small case; the real scored run imports with its scorer name and analyses."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import polars as pl
import pytest
from scipy import stats

from core.base.errors import DataError
from core.labeling import assignment
from core.labeling.identity import ensure_rater
from core.study import analysis, audit
from core.study.runs import import_scored_run, read_run
from core.workspace import Workspace


def _record(model, perspective, i, score, text=None, run_id="r"):
    return {"run_id": run_id, "model_id": model, "prompt_id": f"s{i}.{perspective}", "perspective": perspective,
            "factors": {"perspective": perspective, "base_rent": 600 + 100 * (i % 3), "amount": 50,
                        "relationship_quality": "good"},
            "messages": [{"role": "user", "content": f"I am a {perspective}. Rent 600€, +50€. Scenario {i}?"}],
            "response_text": text or f"Answer {model} {perspective} {i}: the {perspective} should act.",
            "scorer_model": "stance-scorer", "score": score}


def _scored_run(tmp_path, rng_seed=0, n=8):
    rng = np.random.default_rng(rng_seed)
    recs = []
    for model, shift in (("m-a", 0.3), ("m-b", 0.0)):
        for p, base in (("landlord", 0.2), ("tenant", -0.3), ("neutral", 0.0)):
            for i in range(n):
                recs.append(_record(model, p, i, round(float(np.clip(base + shift * (p == "landlord")
                                                                     + rng.normal(0, 0.3), -1, 1)), 3)))
    path = tmp_path / "run_scored.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path, recs


def test_sample_is_stratified_seeded_and_skips_failed(tmp_path):
    _, recs = _scored_run(tmp_path)
    recs[0] = {**recs[0], "score": None}
    a = audit.stratified_sample(recs, 12, seed=1)
    assert a == audit.stratified_sample(recs, 12, seed=1) and a != audit.stratified_sample(recs, 12, seed=2)
    assert Counter((r["model_id"], r["perspective"]) for r in a) == {
        (m, p): 2 for m in ("m-a", "m-b") for p in ("landlord", "tenant", "neutral")}
    assert recs[0] not in audit.stratified_sample(recs, 47, seed=0)
    assert len(audit.stratified_sample(recs, 500, seed=0)) == 47


def test_audit_items_are_blinded(store, tmp_path):
    _, recs = _scored_run(tmp_path)
    sample = audit.stratified_sample(recs, 12, seed=0)
    project, report = audit.push_audit(store, "audit", sample)
    assert report.added == 12 and project.visible_fields == ()
    seen = []
    for _ in range(12):
        view = assignment.next_item(store, project, "rater_x")
        shown = json.dumps([view.prompt_title, view.prompt_body, view.fields])
        assert view.fields == {}
        for word in ("landlord.", "tenant.", "neutral", "m-a", "m-b", "stance-scorer", "score", "I am a"):
            assert word not in shown, (word, shown)
        assert "perspective" not in shown
        for rec in sample:
            assert rec["prompt_id"] not in shown
        seen.append(view.prompt_body)
        assignment.submit(store, project, "rater_x", view.item_id, 0.0)
    # the same scenario reads the same whatever the perspective
    assert audit.scenario_text(sample[0]["factors"]) == audit.scenario_text({**sample[0]["factors"], "perspective": "x"})
    with store.write() as conn:
        from core.labeling.store import projects
        conn.execute(projects.update().values(visible_fields='["perspective"]'))
    with pytest.raises(Exception, match="blinding"):
        audit.push_audit(store, "audit", sample)


def test_analysis_statistics_match_numpy_and_scipy(store, tmp_path):
    path, recs = _scored_run(tmp_path)
    frame = analysis.scored_frame(path)
    groups = analysis.by_group(frame, threshold=0.33)
    assert [(g["model_id"], g["perspective"]) for g in groups][:3] == [("m-a", "landlord"), ("m-a", "tenant"),
                                                                       ("m-a", "neutral")]
    for g in groups:
        x = np.array([r["score"] for r in recs if (r["model_id"], r["perspective"]) == (g["model_id"], g["perspective"])])
        lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
        assert (g["n"], g["mean"], g["sd"]) == (len(x), pytest.approx(x.mean()), pytest.approx(x.std(ddof=1)))
        assert (g["ci_low"], g["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
        assert g["share_tenant"] == pytest.approx(np.mean(x < -0.33))
        assert g["share_landlord"] == pytest.approx(np.mean(x > 0.33))
        assert g["share_tenant"] + g["share_balanced"] + g["share_landlord"] == pytest.approx(1)
    for u in analysis.uplifts(frame):
        sel = {p: np.array([r["score"] for r in recs if r["model_id"] == u["model_id"] and r["perspective"] == p])
               for p in ("landlord", "tenant", "neutral")}
        welch = stats.ttest_ind(sel["landlord"], sel["neutral"], equal_var=False)
        ci = welch.confidence_interval(0.95)
        assert u["landlord_uplift"] == pytest.approx(sel["landlord"].mean() - sel["neutral"].mean())
        assert (u["landlord_uplift_ci_low"], u["landlord_uplift_ci_high"]) == (pytest.approx(ci.low), pytest.approx(ci.high))
        assert u["gap"] == pytest.approx(sel["landlord"].mean() - sel["tenant"].mean())

    # audit: three humans and one LLM judge rate a sample; compare with a direct computation
    sample = audit.stratified_sample(recs, 12, seed=0)
    project, _ = audit.push_audit(store, "audit", sample)
    with store.write() as conn:
        ensure_rater(conn, store, "llm:judge")
    rng = np.random.default_rng(5)
    from core.labeling.reports import items_frame
    ids = dict(zip(items_frame(store, project)["identifier"].to_list(), items_frame(store, project)["item_id"].to_list(),
                   strict=True))
    truth = {}
    for rec in sample:
        item = ids[audit.audit_identifier(rec)]
        base = float(np.clip(rec["score"] + rng.normal(0, 0.2), -0.9, 0.9))
        raw = [round(float(np.clip(base + d, -1, 1)), 2) for d in (0.0, 0.05, 0.1)]
        if min(raw) < 0 < max(raw):
            raw = [abs(v) for v in raw]  # same signs: a calculated consensus
        for code, v in zip(("h1", "h2", "h3"), raw, strict=True):
            assignment.submit(store, project, code, item, v)
        judge = round(float(np.clip(rec["score"] * 0.5, -1, 1)), 2)
        assignment.submit(store, project, "llm:judge", item, judge)
        truth[(rec["model_id"], rec["prompt_id"])] = (rec["score"], float(np.mean(raw)), raw, judge)
    rep = analysis.analyze(path, audit=audit.audit_results(store, project))
    assert rep["audit"]["n_audited"] == 12
    rows = {(r["rater"], r["perspective"]): r for r in rep["audit"]["model_vs_human"]}
    model_s = np.array([v[0] for v in truth.values()])
    human = np.array([v[1] for v in truth.values()])
    r = rows[("stance-scorer", "all")]
    assert r["mae"] == pytest.approx(np.abs(model_s - human).mean(), abs=1e-6)
    assert r["pearson"] == pytest.approx(stats.pearsonr(human, model_s).statistic, abs=1e-6)
    assert r["spearman"] == pytest.approx(stats.spearmanr(human, model_s).statistic, abs=1e-6)
    ccc = 2 * np.cov(human, model_s, ddof=0)[0, 1] / (human.var() + model_s.var() + (human.mean() - model_s.mean()) ** 2)
    assert r["ccc"] == pytest.approx(ccc, abs=1e-6)
    assert r["bias"] == pytest.approx((model_s - human).mean(), abs=1e-6)
    held = [v for t in truth.values() for v in t[2]]
    rest = [(sum(t[2]) - v) / 2 for t in truth.values() for v in t[2]]
    c = rows[("human ceiling", "all")]
    assert c["n"] == 36 and c["mae"] == pytest.approx(np.abs(np.array(held) - np.array(rest)).mean())
    assert c["pearson"] == pytest.approx(stats.pearsonr(rest, held).statistic)
    j = rows[("llm:judge", "all")]
    assert j["mae"] == pytest.approx(np.abs(np.array([t[3] for t in truth.values()]) - human).mean(), abs=1e-6)
    assert {p for _, p in rows} == {"all", "landlord", "tenant", "neutral"}
    dis = rep["audit"]["disagreements"]
    assert abs(dis[0]["diff"]) == pytest.approx(np.abs(model_s - human).max(), abs=1e-6)
    assert dis[0]["response_text"] and dis[0]["prompt_text"]
    back = {(i["model_id"], i["prompt_id"]): (i["score"], i["human"]) for i in rep["audit"]["items"]}
    assert back == {k: (pytest.approx(v[0]), pytest.approx(v[1], abs=1e-6)) for k, v in truth.items()}
    ba = rep["audit"]["bland_altman"]
    assert len(ba) == 12 and np.mean([b["diff"] for b in ba]) == pytest.approx(r["bias"], abs=1e-9)


def test_bad_scored_run_line_is_named(tmp_path):
    path, recs = _scored_run(tmp_path)
    lines = path.read_text().splitlines()
    lines[4] = json.dumps({**json.loads(lines[4]), "score": 1.5})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"run_scored\.jsonl:5: field 'score': expected a number in \[-1, 1\]"):
        analysis.scored_frame(path)
    lines[4] = "{not json"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"run_scored\.jsonl:5: not valid JSON"):
        read_run(path)


def test_fixture_scored_run_imports_with_its_scorer_and_analyses(fixtures_dir, tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    src = fixtures_dir / "aita/runs/1760158358/run_scored.jsonl"
    result = import_scored_run(ws, src, study="aita")
    assert result["records"] == 216 and result["scorers"] == ["openai/gpt-oss-20b:free"]
    rep = analysis.analyze(result["path"])
    assert rep["scorer_models"] == ["openai/gpt-oss-20b:free"] and rep["n_scored"] == 215
    raw = [json.loads(line) for line in src.read_text().splitlines()]
    for g in rep["by_group"]:
        x = [r["score"] for r in raw if r["model_id"] == g["model_id"] and r["perspective"] == g["perspective"]
             and r["score"] is not None]
        assert g["n"] == len(x) and g["mean"] == pytest.approx(float(np.mean(x)))
    frame = pl.DataFrame([{k: r[k] for k in ("model_id", "perspective", "score")} for r in raw])
    assert {g["model_id"] for g in rep["by_group"]} == set(frame["model_id"])
    assert all(not math.isnan(u["gap"]) for u in rep["uplifts"])
