"""Analysis does not flatter its scorer: the scorer's held-out quality from its manifest, a warning when it
is weak (CCC < 0.4) or unknown, rows never scored shown as missing (never 0, no uplift against them), and
groups whose scores are all equal flagged."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from core.study import analysis

FACTORS = {"base_rent": 600, "amount": 50, "relationship_quality": "good"}


def _record(model: str, perspective: str, i: int, score: float | None, *, text: str | None = "an answer",
            scorer: str = "stance", sha: str | None = "abc") -> dict[str, Any]:
    rec = {"run_id": "r1", "model_id": model, "prompt_id": f"{perspective}-{i}", "perspective": perspective,
           "factors": {"perspective": perspective, **FACTORS}, "messages": [{"role": "user", "content": "q"}],
           "response_text": text, "scorer_model": scorer, "scorer_sha256": sha, "score": score}
    if text is None:
        rec["error"] = "call failed"
    return rec


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "run_scored.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _manifest(folder: Path, *, ccc: float | None, sha: str = "abc") -> None:
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "format": "scale-workbench-scorer", "format_version": 2, "kind": "tfidf-ridge", "n_test": 15,
        "metrics": {"mae": 0.358, "pearson": 0.207, "ccc": ccc}, "human_ceiling": {"ccc": 0.473},
        "files": {"model.json": sha}}), encoding="utf-8")


def test_never_scored_rows_are_missing_and_no_uplift_is_computed_against_them(tmp_path):
    # landlord 0.5, 0.7; tenant −0.2, −0.4; neutral: two responses never scored (text, null score) and one
    # failed call → neutral has no mean; landlord − tenant = 0.6 − (−0.3) = 0.9, uplifts vs neutral: none
    recs = [_record("m", "landlord", 0, 0.5), _record("m", "landlord", 1, 0.7), _record("m", "tenant", 0, -0.2),
            _record("m", "tenant", 1, -0.4), _record("m", "neutral", 0, None), _record("m", "neutral", 1, None),
            _record("m", "neutral", 2, None, text=None)]
    rep = analysis.analyze(_write(tmp_path, recs))
    neutral = next(g for g in rep["by_group"] if g["perspective"] == "neutral")
    assert (neutral["n"], neutral["n_unscored"], neutral["n_failed"]) == (0, 2, 1)
    assert [neutral[k] for k in ("mean", "sd", "ci_low", "ci_high", "share_balanced")] == [None] * 5
    (u,) = rep["uplifts"]
    assert u["landlord_uplift"] is None and u["tenant_uplift"] is None and u["landlord_uplift_ci_low"] is None
    assert u["gap"] == pytest.approx(0.9)
    assert "m · neutral: 2 response(s) never scored: left out (missing, not 0)." in rep["warnings"]
    assert "m · neutral: no scored response: no mean, and no uplift against it." in rep["warnings"]
    # one score on a side: a difference but no interval
    w = analysis.welch_diff(analysis.np.array([0.5]), analysis.np.array([0.1, 0.3]))
    assert w["diff"] == pytest.approx(0.3) and w["ci_low"] is None


def test_all_equal_scores_are_flagged_not_read_as_certainty(tmp_path):
    recs = [_record("m", p, i, s) for p, xs in (("landlord", [0.2, 0.6]), ("tenant", [-0.1, 0.1]),
                                                ("neutral", [0.0, 0.0, 0.0])) for i, s in enumerate(xs)]
    rep = analysis.analyze(_write(tmp_path, recs))
    neutral = next(g for g in rep["by_group"] if g["perspective"] == "neutral")
    assert neutral["constant"] and (neutral["ci_low"], neutral["ci_high"]) == (0.0, 0.0)
    assert not any(g["constant"] for g in rep["by_group"] if g["perspective"] != "neutral")
    assert ("m · neutral: all 3 scores are +0.00: nothing varies, so the interval has no width; check the scorer on "
            "these responses.") in rep["warnings"]


@pytest.mark.parametrize("ccc,weak", [(0.046, True), (0.399, True), (0.4, False), (0.93, False), (None, True)])
def test_scorer_quality_from_its_manifest(tmp_path, ccc, weak):
    _manifest(tmp_path / "scorers" / "stance", ccc=ccc)
    recs = [_record("m", p, 0, 0.1) for p in ("landlord", "tenant", "neutral")]
    rep = analysis.analyze(_write(tmp_path, recs), scorers_dir=tmp_path / "scorers")
    (q,) = rep["scorer_quality"]
    assert (q["scorer"], q["n_test"], q["mae"], q["pearson"], q["ccc"], q["human_ceiling_ccc"]) == \
        ("stance", 15, 0.358, 0.207, ccc, 0.473)
    assert q["weak"] is weak and q["note"] is None
    flagged = [w for w in rep["warnings"] if w.startswith("Scorer stance is weak")]
    assert len(flagged) == int(weak)
    if ccc == 0.046:
        assert flagged[0].startswith("Scorer stance is weak: held-out CCC 0.05 with the human consensus (MAE 0.36, "
                                     "Pearson 0.21, n_test 15), below 0.4")


def test_scorer_without_manifest_or_of_another_model_file(tmp_path):
    recs = [_record("m", p, 0, 0.1, scorer="openai/gpt-oss-20b:free", sha=None) for p in ("landlord", "neutral")]
    rep = analysis.analyze(_write(tmp_path, recs), scorers_dir=tmp_path / "scorers")
    (q,) = rep["scorer_quality"]
    assert q["manifest"] is None and q["weak"] and "how well this scorer agrees with humans is unknown" in q["note"]
    _manifest(tmp_path / "scorers" / "stance", ccc=0.9, sha="other")
    recs = [_record("m", p, 0, 0.1) for p in ("landlord", "neutral")]
    (q,) = analysis.analyze(_write(tmp_path, recs), scorers_dir=tmp_path / "scorers")["scorer_quality"]
    assert not q["weak"] and "is not the one that scored this run" in q["note"]


def test_the_real_aita_run(fixtures_dir):
    """The study's own run, scored by an LLM judge (no manifest): 215 of 216 scored; the one null score
    is a failed response (its text is empty, an error recorded), not a response left unscored. Every
    neutral response carries the judge's answer "0" (its raw response is in the file), so the neutral
    groups are scored, and all equal: flagged, with their uplifts kept."""
    rep = analysis.analyze(fixtures_dir / "aita/runs/1760158358/run_scored.jsonl")
    neutral = [g for g in rep["by_group"] if g["perspective"] == "neutral"]
    assert [(g["n"], g["n_failed"], g["n_unscored"], g["mean"], g["constant"]) for g in neutral] == [
        (36, 0, 0, 0.0, True), (35, 1, 0, 0.0, True)]
    assert all(not g["constant"] for g in rep["by_group"] if g["perspective"] != "neutral")
    assert sum("nothing varies" in w for w in rep["warnings"]) == 2
    assert any("no scorer manifest" in w for w in rep["warnings"])
    assert all(u["landlord_uplift"] is not None and math.isfinite(u["gap"]) for u in rep["uplifts"])
