"""Real xnot runs (tests/data/xnot_results) through ``runs import`` and ``score``: every metric xnot stored is reproduced.

The files are reference outputs of the original system, kept byte for byte (README.md there names
repository, commit, path and sha256). Ours name thresholds by level (``ge_high``) where xnot numbers
them (``ge_1``); the values must agree to 1e-12. The one deliberate difference from xnot: an
undefined AP is null with its reason, where xnot writes NaN (not exercised here: both files
define every threshold).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from core.cli import main

DATA = Path(__file__).resolve().parent.parent / "data" / "xnot_results"
SHA256 = {  # as listed in tests/data/xnot_results/README.md
    "G1a_k50_20260110_060155": "02ffbf6403111ac33ef28f67ac8ee3f8f803bf751e6f08c78addb1a075f0a3c4",
    "G1a_k200_20260110_060433": "a4e99c95f8f6944ab34dbd34b2ffd2d1fb2d0cab458303647b73a644f7444279",
}
# xnot's metric name → ours (core.metrics.ranking.ordinal_auprc, stored under results["auprc"])
NAMES = {
    "n_samples": "n_samples",
    "auprc_ge_1": "auprc_ge_high", "nap_ge_1": "nap_ge_high", "prevalence_ge_1": "prevalence_ge_high",
    "auprc_ge_2": "auprc_ge_critical", "nap_ge_2": "nap_ge_critical", "prevalence_ge_2": "prevalence_ge_critical",
    "ordinal_auprc": "ordinal_auprc", "ordinal_nap": "ordinal_nap", "severity_ordering_ap": "severity_ordering_ap",
}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(params=sorted(SHA256), ids=sorted(SHA256))
def xnot_file(request) -> Path:
    return DATA / request.param / "detailed_results.json"


@pytest.fixture()
def ws(tmp_path, monkeypatch) -> str:
    """An empty workspace; the CLI sets WORKBENCH_WORKSPACE process-wide, restored after the test."""
    monkeypatch.setenv("WORKBENCH_WORKSPACE", str(tmp_path / "ws"))
    return str(tmp_path / "ws")


def test_reference_files_are_complete_and_unchanged(xnot_file):
    assert _sha(xnot_file) == SHA256[xnot_file.parent.name]
    text = xnot_file.read_text(encoding="utf-8")
    payload = json.loads(text)
    assert json.dumps(payload, indent=2) == text  # the whole file, as xnot's json.dump(indent=2) wrote it
    assert payload["task"] == "G1a" and payload["n_restaurants"] == len(payload["runs"]) == 100
    assert str(payload["k"]) in xnot_file.parent.name


def _stored(xnot_file: Path) -> dict:
    return json.loads(xnot_file.read_text(encoding="utf-8"))["metrics"]


def _assert_reproduced(auprc: dict, stored: dict) -> None:
    for theirs, ours in NAMES.items():
        assert auprc[ours] == pytest.approx(stored[theirs], abs=1e-12, rel=0), theirs
    for t in auprc["thresholds"]:  # xnot's threshold names, by level
        assert stored[f"threshold_{t['threshold']}_name"] == f">={t['level']}"
    assert auprc["ranking_score"] == {"source": "risk_score", "n_missing": 0}  # final_risk_score.predicted


def test_runs_import_reproduces_every_stored_metric(xnot_file, ws, capsys):
    assert main(["--workspace", ws, "--json", "runs", "import", str(xnot_file)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "xnot" and out["n"] == 100
    run = json.loads(Path(out["path"]).read_text(encoding="utf-8"))
    stored = _stored(xnot_file)
    _assert_reproduced(run["auprc"], stored)
    assert dict(Counter(s["gt_verdict"] for s in run["results"])) == stored["distribution"]
    assert run["config"]["stored_metrics"] == stored
    assert run["config"]["origin"]["sha256"] == SHA256[xnot_file.parent.name]
    assert _sha(xnot_file) == SHA256[xnot_file.parent.name]  # the source is read, never written
    assert sorted(p.name for p in xnot_file.parent.iterdir()) == ["detailed_results.json"]

    # Scoring the imported run again (`score` on its results.json) gives the same figures.
    assert main(["--workspace", ws, "--json", "score", out["path"], "--n-boot", "0"]) == 0
    _assert_reproduced(json.loads(capsys.readouterr().out)["auprc"], stored)


def test_score_reads_the_xnot_file_directly(xnot_file, ws, capsys):
    assert main(["--workspace", ws, "--json", "score", str(xnot_file), "--n-boot", "0"]) == 0
    _assert_reproduced(json.loads(capsys.readouterr().out)["auprc"], _stored(xnot_file))
    assert sorted(p.name for p in xnot_file.parent.iterdir()) == ["detailed_results.json"]


def test_the_k200_run_separates_the_thresholds():
    """The K=200 file is the non-trivial one: 5 High + 2 Critical, and AP ≥High ≠ AP ≥Critical."""
    stored = _stored(DATA / "G1a_k200_20260110_060433" / "detailed_results.json")
    assert stored["distribution"] == {"Low Risk": 93, "High Risk": 5, "Critical Risk": 2}
    assert stored["auprc_ge_1"] != stored["auprc_ge_2"]
