"""Ground truth page, the runs of a GT (issue 23): the Runs tab lists the runs scored against the
chosen policy with their GT version and staleness, shows what an override does to them (the
restaurant that changes and why, each run's score and rank) and rescores them; the Export tab
writes the GT file into the workspace with its lineage (never in the demo mode)."""

from __future__ import annotations

import json

from tests.helpers.results_gt import _override_an_incident, ws  # noqa: F401 - the fixture

GT = "app_pages/ground_truth.py"


def _gt_tab(app_factory, root, tab: str):
    at = app_factory(root).run()
    at.switch_page(GT).run()
    at.selectbox(key="gt.definition").set_value("G1_allergy_V2").run()
    at.session_state["gt.tab"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_runs_tab_says_what_an_override_does_to_the_runs(app_factory, ws):  # noqa: F811
    at = _gt_tab(app_factory, ws, "Runs")
    runs = next(d.value for d in at.dataframe if "run_id" in d.value.columns)
    assert set(runs["run_id"]) == {"kw_a", "kw_b"} and not runs["stale"].any()
    changed = _override_an_incident(ws)
    at = _gt_tab(app_factory, ws, "Runs")
    assert any("What this change does to the runs" in s.value for s in at.subheader)
    moved = next(d.value for d in at.dataframe if "because" in d.value.columns)
    name = json.loads((ws / "runs/kw_a/gt.json").read_text())["restaurants"][changed]["name"]
    assert list(moved["restaurant"]) == [name] and "override" in moved["because"][0]
    impact = next(d.value for d in at.dataframe if "rank after" in d.value.columns)
    assert set(impact["run"]) == {"kw_a", "kw_b"}
    at.button(key="gt.runs.rescore").click().run()
    assert not at.exception, at.exception
    assert (ws / "runs/kw_a/history/001/results.json").exists() and (ws / "runs/kw_b/history/001").exists()
    runs = next(d.value for d in at.dataframe if "run_id" in d.value.columns)
    assert not runs["stale"].any()


def test_the_export_tab_writes_the_gt_file_with_its_lineage(app_factory, ws, monkeypatch):  # noqa: F811
    target = ws / "gt/demo/G1a/G1_allergy_V2_K200_groundtruth.json"
    target.unlink(missing_ok=True)
    at = _gt_tab(app_factory, ws, "Export")
    at.radio(key="gt.layout").set_value("addm").run()
    at.selectbox(key="gt.export_k").set_value("200").run()
    at.button(key="gt.write").click().run()
    assert not at.exception, at.exception
    doc = json.loads(target.read_text())
    assert doc["lineage"]["origin"] == "computed" and doc["lineage"]["k"] == 200
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    assert _gt_tab(app_factory, ws, "Export").button(key="gt.write").disabled


def test_the_runs_tab_lists_no_other_visitors_run_in_the_demo(app_factory, ws, monkeypatch):  # noqa: F811
    """Issue 26: in the demo mode the Runs tab lists the shipped runs and this visitor's own only."""
    from core.base.files import write_json_atomic
    from core.workspace import Workspace

    jobs = Workspace(ws).jobs_dir
    jobs.mkdir(parents=True, exist_ok=True)
    write_json_atomic(jobs / "job-b.json", {
        "job_id": "job-b", "kind": "run", "label": "", "args": {"config": {"run_id": "kw_b"}, "owner": "visitor:aaaa"},
        "status": "finished", "pid": None, "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2099-01-01T00:00:00+00:00", "progress": {}, "result": None, "error": None})
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    runs = next(d.value for d in _gt_tab(app_factory, ws, "Runs").dataframe if "run_id" in d.value.columns)
    assert set(runs["run_id"]) == {"kw_a"}
    monkeypatch.setenv("WORKBENCH_MODE", "local")
    runs = next(d.value for d in _gt_tab(app_factory, ws, "Runs").dataframe if "run_id" in d.value.columns)
    assert set(runs["run_id"]) == {"kw_a", "kw_b"}
