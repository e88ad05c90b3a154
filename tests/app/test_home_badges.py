"""Home through AppTest: the runs table shows each score's badge (✓ / ✗ / ⚠), the majority baseline,
incidents claimed and found and why a score is degenerate; the tasks table flags policies with dead
rules; the GT table counts verdicts on each file's own scale."""

from __future__ import annotations

import json
import shutil

from core.ground_truth.policies.addm_import import import_policies
from core.workspace import Workspace
from tests.helpers.metrics import no_incident_run


def _table(at, title: str):
    headers = [s.value for s in at.subheader if s.value != "Pages"]
    return next(d.value for d, h in zip(at.dataframe, headers, strict=False) if h == title)


def test_home_shows_badges_dead_rules_and_own_scales(app_factory, small_demo, tmp_path, fixtures_dir):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    folder = root / "runs" / "no-incident"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(no_incident_run()), encoding="utf-8")
    head = fixtures_dir / "dev-ADDM" / "head"
    import_policies(Workspace(root), [head / "policies" / "G2"], head / "terms")
    at = app_factory(root).run()
    assert not at.exception, at.exception

    runs = _table(at, "Method runs")
    row = runs[runs["run"] == "no-incident"].iloc[0]
    assert (row["AUPRC"], row["Process"], row["Consistency"], row["Accuracy"]) == ("2.0% ⚠", "75.0% ⚠", "100.0% ⚠",
                                                                                   "98.0% ✗")
    assert row["majority baseline"] == "98.0%" and row["incidents"] == "0 claimed · 0 of 1 found"
    assert row["notes"] == ("AUPRC: one constant ranking score; Process: no incident checked; Consistency: no incident "
                            "claimed; Accuracy: not above the majority baseline")
    assert all(v.split()[-1] in ("✓", "✗", "⚠") or v == "N/A" for v in runs["Accuracy"])

    tasks = _table(at, "Tasks")
    business = tasks[tasks["task"] == "G2_business"].iloc[0]
    assert "G2_business_V1 ⚠ 2 dead" in business["policies"] and "G2_business_V3 ⚠ 3 dead" in business["policies"]

    # the demo's meeting-suitability topic has its own scale (it read 0 / 0 / 0 under Low / High / Critical)
    gt = _table(at, "Ground-truth files")
    for file, verdicts, n in zip(gt["file"], gt["verdicts (lowest first)"], gt["restaurants"], strict=True):
        labels = [part.rsplit(" ", 1)[0] for part in verdicts.split(" / ")]
        expected = ["Poor fit", "Workable", "Great fit"] if "G2_meetings" in file else ["Low Risk", "High Risk",
                                                                                        "Critical Risk"]
        assert labels == expected and sum(int(part.rsplit(" ", 1)[1]) for part in verdicts.split(" / ")) == n
