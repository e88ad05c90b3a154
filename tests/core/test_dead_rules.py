"""Imported policies with dead rules stay flagged after the import (``policies list/show``, the GT page's
picker, Home), and Home's GT table counts each file's verdicts on its own scale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.ground_truth.policies.addm_import import import_policies
from core.ground_truth.policies.loader import get_policy, list_policies
from core.ui.overview import gt_section, tasks_section
from core.workspace import Workspace


@pytest.fixture()
def head(fixtures_dir) -> Path:
    return fixtures_dir / "dev-ADDM" / "head"


@pytest.fixture()
def ws(tmp_path, head) -> Workspace:
    ws = Workspace(tmp_path / "ws")
    report = import_policies(ws, [head / "policies" / "G1" / "dietary", head / "policies" / "G2"], head / "terms")
    assert len(report.imported) == 8
    return ws


def test_the_import_warnings_are_kept_and_the_dead_ones_named(ws):
    v3 = get_policy("G1_dietary_V3", ws=ws)
    # ADDM's dietary V3 lists a 'Medical restriction' modifier without a field mapping (SPEC §3.3b)
    assert v3.dead_rules == ("normative.scoring.modifiers[2]: modifier 'Medical restriction' has no field mapping: "
                             "never applies",)
    b1 = get_policy("G2_business_V1", ws=ws)
    assert [w.split(":")[0] for w in b1.dead_rules] == [
        "normative.decision.rules[0].conditions[1].filter.professionalism",
        "normative.decision.rules[1].conditions[2].filter.professionalism"]
    counts = {p.policy_id: len(p.dead_rules) for p in list_policies(ws=ws) if p.dead_rules}
    assert counts == {"G1_dietary_V3": 1, "G1_dietary_V4": 1, "G2_business_V1": 2, "G2_business_V2": 1,
                      "G2_business_V3": 3, "G2_business_V4": 3}
    assert get_policy("G1_dietary_V1", ws=ws).dead_rules == ()
    assert get_policy("G1_allergy_V2", ws=ws).dead_rules == ()  # a package policy: none


def test_policies_list_and_show_flag_them(ws, capsys):
    root = str(ws.root)
    assert main(["--workspace", root, "policies", "list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "⚠ 3 dead rules" in lines["G2_business_V3"] and "⚠ 1 dead rule " in lines["G1_dietary_V3"]
    assert "dead" not in lines["G1_dietary_V1"] and "dead" not in lines["G1_allergy_V2"]
    assert main(["--workspace", root, "--json", "policies", "list", "--task", "G2_business"]) == 0
    rows = {r["policy_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert len(rows["G2_business_V1"]["dead_rules"]) == 2
    assert main(["--workspace", root, "policies", "show", "G1_dietary_V4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "⚠ 1 dead rule: these parts can never apply (warned at import)"
    assert "'Medical restriction' has no field mapping: never applies" in out[2]


def test_the_gt_picker_labels_them(ws):
    from core.ui.gt_page import definition_label

    assert definition_label(ws, "G2_business_V3") == "G2_business_V3 ⚠ 3 dead"
    assert definition_label(ws, "G1_dietary_V3") == "G1_dietary_V3 ⚠ 1 dead"
    assert definition_label(ws, "G1_dietary_V1") == "G1_dietary_V1"
    assert definition_label(ws, "v1") == "v1"
    assert definition_label(ws, "no such definition") == "no such definition"


def test_home_flags_them_and_counts_gt_verdicts_on_each_files_scale(ws):
    tasks = {r["task"]: r for r in tasks_section(ws, None).iter_rows(named=True)}
    assert tasks["G2_business"]["policies"] == ("G2_business_V1 ⚠ 2 dead, G2_business_V2 ⚠ 1 dead, "
                                                "G2_business_V3 ⚠ 3 dead, G2_business_V4 ⚠ 3 dead")
    assert "dead" not in tasks["G1a"]["policies"]
    # a GT file of a policy whose scale is not Low/High/Critical: 2 Recommended, 1 Not Recommended
    verdicts = {"b1": "Recommended", "b2": "Not Recommended", "b3": "Recommended"}
    doc = {"policy_id": "G2_business_V3", "k": 25, "computed_at": "2026-01-01T00:00:00",
           "restaurants": {b: {"name": b, "categories": "Cafes", "n_reviews": 25, "ground_truth": {
               "verdict": v, "score": 0.0, "n_incidents": 0, "incidents": [], "cuisine_modifier": False}}
               for b, v in verdicts.items()},
           "summary": {"total_restaurants": 3, "verdict_distribution": {"Recommended": 2, "Not Recommended": 1}}}
    (ws.gt_dir / "imported").mkdir(parents=True)
    (ws.gt_dir / "imported" / "G2_business_V3_K25_groundtruth.json").write_text(json.dumps(doc), encoding="utf-8")
    rows = {r["file"]: r for r in gt_section(ws, None).iter_rows(named=True)}
    # lowest first, as the policy orders them (Not Recommended < Acceptable < Recommended); it read 0 / 0 / 0
    assert rows["imported/G2_business_V3_K25_groundtruth.json"]["verdicts (lowest first)"] == \
        "Not Recommended 1 / Recommended 2"
