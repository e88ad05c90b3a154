"""``claim check``: holds on the same workspace, changed (with the new figure) after an override that
moves it, inputs changed when a run's answers change."""

from __future__ import annotations

import json
import shutil

import pytest

from core.judgments.overrides import add_override
from core.release.claim_check import (
    CHANGED,
    HOLDS,
    INPUTS_CHANGED,
    check_claim,
    gt_claim,
    paired_claim,
    score_claim,
)
from core.runs.records import load_results
from core.workspace import Workspace


@pytest.fixture()
def ws(small_demo, tmp_path) -> Workspace:
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    return Workspace(root)


def _moving_override(ws: Workspace, run_id: str) -> None:
    """Clear every incident of the run's GT at one restaurant the run got right with a verdict above
    the lowest: its GT verdict falls to Low Risk, so the run is wrong there after the override."""
    gt = json.loads((ws.run_dir(run_id) / "gt.json").read_text())
    right = {s["business_id"] for s in load_results(ws.run_dir(run_id))["results"] if s["correct"]}
    entry = next(e for b, e in sorted(gt["restaurants"].items()) if b in right
                 and e["ground_truth"]["verdict"] != "Low Risk" and e["ground_truth"]["incidents"])
    for incident in entry["ground_truth"]["incidents"]:
        add_override(ws, "demo", "G1a", review_id=incident["review_id"], corrected={"incident_severity": "none"},
                     reason="not a reaction", author="tester")


def test_score_claim_holds_then_changes_after_an_override(ws):
    run = load_results(ws.run_dir("demo-amos-K50"))
    claim = score_claim(ws, run, "accuracy")
    first = check_claim(ws, claim)
    assert first["status"] == HOLDS, first
    assert first["figure_now"]["value"] == pytest.approx(run["accuracy"])
    _moving_override(ws, "demo-amos-K50")
    after = check_claim(ws, claim)
    assert after["status"] == CHANGED, after
    assert after["figure_now"]["value"] != pytest.approx(run["accuracy"])
    assert after["now"].startswith(f"{after['figure_now']['value']:.2f} accuracy")
    assert any("overrides in force changed (0 →" in line for line in after["gt_changes"])


def test_paired_claim_holds_and_names_changed_answers(ws):
    base, other = (load_results(ws.run_dir(r)) for r in ("demo-keyword-K25", "demo-amos-K25"))
    claim = paired_claim(ws, base, other, "ordinal_auprc")
    assert check_claim(ws, claim)["status"] == HOLDS
    path = ws.run_dir("demo-amos-K25") / "results.json"
    data = json.loads(path.read_text())
    data["results"][0]["verdict"] = "Critical Risk" if data["results"][0]["verdict"] != "Critical Risk" else "Low Risk"
    path.write_text(json.dumps(data))
    out = check_claim(ws, claim)
    assert out["status"] == INPUTS_CHANGED and out["inputs_changed"] == ["the answers of run demo-amos-K25 changed"]


def test_gt_claim_changes_with_the_new_counts(ws):
    claim = gt_claim(ws, "demo", "G1a", "G1_allergy_V2", 50)
    assert check_claim(ws, claim)["status"] == HOLDS
    _moving_override(ws, "demo-amos-K50")
    out = check_claim(ws, claim)
    assert out["status"] == CHANGED and out["figure_now"]["counts"] != claim["figure"]["counts"]
    assert out["figure_now"]["total"] == claim["figure"]["total"]
