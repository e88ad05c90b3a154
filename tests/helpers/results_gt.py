"""A demo workspace copy with runs whose GT an override makes stale (the Results and GT pages' lineage tests)."""

from __future__ import annotations

import json
import shutil

import pytest

from core.cli import main


def cli(root, *args) -> int:
    return main(["--workspace", str(root), "--no-progress", *args])


@pytest.fixture()
def ws(small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("jobs", "cache"))
    shutil.rmtree(root / "runs", ignore_errors=True)
    for run_id in ("kw_a", "kw_b"):
        assert cli(root, "run", "--dataset", "demo", "--task", "G1a", "--policy", "G1_allergy_V2", "--method",
                   "keyword", "--k", "25", "--run-id", run_id) == 0
    return root


def _override_an_incident(root) -> str:
    """Withdraw the first incident of the first restaurant with one: its GT verdict changes."""
    doc = json.loads((root / "runs/kw_a/gt.json").read_text())
    bid, entry = next((b, e) for b, e in doc["restaurants"].items() if e["ground_truth"]["incidents"])
    review = entry["ground_truth"]["incidents"][0]["review_id"]
    assert cli(root, "overrides", "add", "--dataset", "demo", "--review-id", review, "--set",
               "incident_severity=none", "--reason", "not an incident", "--author", "test") == 0
    return bid
