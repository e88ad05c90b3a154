"""GT lineage on real reviews: a run names the GT it was scored against, goes stale when an override
changes that GT, and a rescore brings it back in line with a freshly computed GT file (issue 23's
acceptance scenario on dev-ADDM's 100 real restaurants × 25 reviews, judged by heuristic-v2)."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from core.cli import main
from core.ground_truth.lineage import definition_sha256, describe, overrides_state
from core.ground_truth.policies.loader import get_policy
from core.workspace import Workspace

pytestmark = pytest.mark.fixtures
BLUE_MOOSE = "sf-KdXHB5nxfNjl2uUpI6Q"  # Cafe Blue Moose: the one Critical restaurant of heuristic-v2 at K=25


def cli(ws: Path, *args: str) -> int:
    return main(["--workspace", str(ws), "--no-progress", *args])


def cli_json(ws: Path, capsys, *args: str) -> dict:
    capsys.readouterr()
    assert cli(ws, "--json", *args) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def judged(fixtures_dir, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lineage") / "ws"
    assert cli(root, "datasets", "import", str(fixtures_dir / "dev-ADDM/full/dataset_K25.jsonl"), "--name", "addm") == 0
    assert cli(root, "index", "--dataset", "addm") == 0
    assert cli(root, "judge", "--dataset", "addm", "--task", "G1a", "--judge", "heuristic-v2") == 0
    return root


@pytest.fixture()
def ws(judged, tmp_path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(judged, root)
    return root


def _incidents(ws: Path, run_id: str) -> list[str]:
    doc = json.loads((ws / "runs" / run_id / "gt.json").read_text())
    return [i["review_id"] for i in doc["restaurants"][BLUE_MOOSE]["ground_truth"]["incidents"]]


def test_a_run_names_its_gt_goes_stale_and_a_rescore_matches_a_fresh_gt_file(ws, tmp_path, capsys):
    assert cli(ws, "run", "--dataset", "addm", "--task", "G1a", "--policy", "G1_allergy_V2", "--method", "keyword",
               "--k", "25", "--run-id", "kw") == 0
    shown = cli_json(ws, capsys, "runs", "show", "kw")["gt"]
    kept = ws / "runs/kw/gt.json"
    assert shown["file"] == "runs/kw/gt.json" and shown["sha256"] == hashlib.sha256(kept.read_bytes()).hexdigest()
    assert (shown["origin"], shown["stale"], shown["stale_reasons"]) == ("computed", False, [])
    assert shown["description"].startswith("computed from heuristic-v2 judgments with G1_allergy_V2 at K=25, 0 overrides")
    before = json.loads((ws / "runs/kw/results.json").read_text())
    assert before["results"] and {s["gt_verdict"] for s in before["results"]} == {"Low Risk", "Critical Risk"}

    # two of Cafe Blue Moose's three moderate incidents are not incidents, and the staff of the third were
    # not dismissive: 5 points, High instead of Critical
    first, second, third = _incidents(ws, "kw")
    for review_id, correction in ((first, "incident_severity=none"), (second, "incident_severity=none"),
                                  (third, "safety_interaction=none")):
        assert cli(ws, "overrides", "add", "--dataset", "addm", "--review-id", review_id, "--set", correction,
                   "--reason", "read again", "--author", "test") == 0
    stale = cli_json(ws, capsys, "runs", "show", "kw")["gt"]
    assert stale["stale"] is True and stale["stale_reasons"] == ["overrides changed (3 added)"]

    rescored = cli_json(ws, capsys, "runs", "rescore", "kw")
    assert rescored["history"] == "runs/kw/history/001"
    now = cli_json(ws, capsys, "runs", "show", "kw")["gt"]
    assert (now["stale"], now["lineage"]["n_overrides"]) == (False, 3)
    after = json.loads((ws / "runs/kw/results.json").read_text())
    verdicts = {s["business_id"]: s["gt_verdict"] for s in after["results"]}
    assert verdicts[BLUE_MOOSE] == "High Risk"
    assert cli(ws, "gt", "--dataset", "addm", "--task", "G1a", "--formula", "G1_allergy_V2", "--k", "25",
               "--out", str(tmp_path / "fresh.json")) == 0
    fresh = cli_json(ws, capsys, "score", str(ws / "runs/kw/results.json"), "--gt", str(tmp_path / "fresh.json"),
                     "--dataset", "addm")
    assert after["auprc"]["ordinal_auprc"] == fresh["auprc"]["ordinal_auprc"] is not None
    assert after["auprc"] == fresh["auprc"]  # every threshold's AP, prevalence and nAP
    # no restaurant is Critical now: that threshold is undefined (SPEC §5: null, not 0), ≥ High still is
    assert before["auprc"]["auprc_ge_critical"] is not None and after["auprc"]["auprc_ge_critical"] is None
    assert after["accuracy"] != before["accuracy"]
    assert json.loads((tmp_path / "fresh.json").read_text())["lineage"]["version"] == after["gt"]["version"]
    kept_before = json.loads((ws / "runs/kw/history/001/results.json").read_text())
    assert kept_before["auprc"] == before["auprc"] and kept_before["gt"]["version"] == before["gt"]["version"]

    # reverting an override changes the GT again
    override_id = cli_json(ws, capsys, "overrides", "list", "--dataset", "addm", "--task", "G1a")[0]["override_id"]
    assert cli(ws, "overrides", "revert", override_id, "--dataset", "addm", "--reason", "it was one") == 0
    assert cli_json(ws, capsys, "runs", "show", "kw")["gt"]["stale_reasons"] == ["overrides changed (1 reverted)"]


def test_a_gt_file_run_goes_stale_when_the_file_changes(ws, tmp_path, capsys):
    gt_file = tmp_path / "exported.json"
    assert cli(ws, "gt", "--dataset", "addm", "--task", "G1a", "--formula", "G1_allergy_V2", "--k", "25",
               "--out", str(gt_file)) == 0
    assert cli(ws, "run", "--dataset", "addm", "--task", "G1a", "--policy", "G1_allergy_V2", "--method", "random",
               "--k", "25", "--run-id", "rnd", "--gt", str(gt_file)) == 0
    gt = cli_json(ws, capsys, "runs", "show", "rnd")["gt"]
    assert gt["origin"] == "file" and not gt["stale"]
    assert gt["lineage"]["file_sha256"] == hashlib.sha256(gt_file.read_bytes()).hexdigest()
    assert gt["lineage"]["computed_from"]["judge"] == "heuristic-v2"  # the exported file's own lineage
    assert (ws / "runs/rnd/gt.json").read_bytes() == gt_file.read_bytes()
    gt_file.write_text(gt_file.read_text().replace('"Critical Risk"', '"High Risk"', 1))
    assert cli_json(ws, capsys, "runs", "show", "rnd")["gt"]["stale_reasons"] == [f"the GT file {gt_file} changed"]


def test_gt_files_carry_the_lineage_of_their_k(ws, capsys):
    out = cli_json(ws, capsys, "gt", "--dataset", "addm", "--task", "G1a", "--formula", "G1_allergy_V2", "--k", "25,50")
    written = {f["k"]: json.loads(Path(f["path"]).read_text()) for f in out["files"]}
    assert {k: doc["lineage"]["k"] for k, doc in written.items()} == {25: 25, 50: 50}
    assert written[25]["lineage"]["version"] != written[50]["lineage"]["version"]
    assert written[25]["lineage"]["judgments_sha256"] == written[50]["lineage"]["judgments_sha256"]


def test_the_definition_digest_follows_content_not_location():
    policy = get_policy("G1_allergy_V2", None)
    assert definition_sha256(policy) == definition_sha256(replace(policy, source="/else/where.yaml", origin="copied"))
    assert definition_sha256(policy) != definition_sha256(replace(policy, default_verdict="High Risk"))


def test_an_override_added_and_reverted_leaves_the_gt_as_it_was(ws, capsys):
    empty = overrides_state(Workspace(ws), "addm", "G1a")
    assert cli(ws, "overrides", "add", "--dataset", "addm", "--business-id", BLUE_MOOSE, "--idx", "0", "--set",
               "incident_severity=severe", "--reason", "x") == 0
    added = overrides_state(Workspace(ws), "addm", "G1a")
    assert added["n_overrides"] == 1 and added["overrides_sha256"] != empty["overrides_sha256"]
    assert cli(ws, "overrides", "revert", added["override_ids"][0], "--dataset", "addm", "--reason", "no") == 0
    assert overrides_state(Workspace(ws), "addm", "G1a") == empty


def test_describe_names_every_origin():
    assert describe({"origin": "computed", "judge": "heuristic-v2", "definition": {"name": "G1_allergy_V2"},
                     "k": 25, "n_overrides": 1, "version": "abc"}) == (
        "computed from heuristic-v2 judgments with G1_allergy_V2 at K=25, 1 override · version abc")
    assert describe({"origin": "imported", "file": "gt/imported/x/a.json", "file_sha256": "f" * 64}) == (
        "imported GT file gt/imported/x/a.json (sha256 ffffffffffff…)")
    assert describe({"origin": "embedded", "file": "detailed_results.json"}) == (
        "the GT verdicts inside the imported results file detailed_results.json")
