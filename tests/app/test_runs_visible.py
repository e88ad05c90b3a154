"""Issue 26: in the demo mode, Results, Home and the Ground truth page's Runs tab list only the runs
shipped with the workspace and this visitor's own (one rule, core.ui.ownership.visible); the other
modes list every run."""

from __future__ import annotations

import json
import shutil

import pytest

from core.base.files import write_json_atomic
from core.workspace import Workspace
from tests.helpers.results import write_runs

SHIPPED, THEIRS, MINE = "direct_k25", "cot_k25", "mine_k25"


@pytest.fixture(scope="module")
def shared_ws(small_demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("visible") / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("jobs", "cache"))
    write_runs(root, ks=(25,), n_boot=50)  # direct_k25 (shipped: no job) and cot_k25
    mine = root / "runs" / MINE
    mine.mkdir()
    payload = json.loads((root / "runs" / SHIPPED / "results.json").read_text())
    (mine / "results.json").write_text(json.dumps({**payload, "run_id": MINE}), encoding="utf-8")
    _finished_job(root, "job-a", THEIRS, "visitor:aaaa")  # another visitor's run
    _finished_job(root, "job-b", MINE, "visitor:bbbb")  # this session's run
    return root


def _finished_job(root, job_id: str, run_id: str, owner: str) -> None:
    ws = Workspace(root)
    ws.jobs_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(ws.jobs_dir / f"{job_id}.json", {
        "job_id": job_id, "kind": "run", "label": "", "args": {"config": {"run_id": run_id}, "owner": owner},
        "status": "finished", "pid": None, "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00", "progress": {}, "result": None, "error": None})


def _all_runs(root) -> set[str]:
    return {p.parent.name for p in (root / "runs").glob("*/results.json")}


def _session(app_factory, root, page: str, *, query: dict[str, str] | None = None):
    at = app_factory(root)
    at.session_state["runs.visitor"] = "bbbb"  # this session is visitor B
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_demo_results_lists_shipped_and_own_runs_only(app_factory, shared_ws, monkeypatch):
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    at = _session(app_factory, shared_ws, "app_pages/results.py", query={"run": THEIRS})
    shown = _all_runs(shared_ws) - {THEIRS}  # the demo's own runs, direct_k25 and this visitor's
    assert {SHIPPED, MINE} < shown
    assert set(at.selectbox(key="results.run").options) == shown
    assert at.selectbox(key="results.run").value != THEIRS  # a link to another visitor's run opens nothing of it
    at.radio(key="results.mode").set_value("Compare runs").run()
    assert not at.exception, at.exception
    assert set(at.multiselect(key="results.runs").options) == shown
    assert any(f"all {len(shown)} runs" in c.label for c in at.checkbox)  # the score-against-K chart's runs


def test_demo_home_lists_shipped_and_own_runs_only(app_factory, shared_ws, monkeypatch):
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    at = _session(app_factory, shared_ws, "app_pages/home.py")
    runs = next(d.value for d in at.dataframe if "run" in d.value.columns)
    assert set(runs["run"]) == _all_runs(shared_ws) - {THEIRS}


@pytest.mark.parametrize("mode", ["local", "team"])
def test_other_modes_list_every_run(mode, shared_ws, monkeypatch):
    """The team mode (signed in or not) and a workstation list every run: ownership hides nothing there."""
    from core.ui import ownership

    monkeypatch.setenv("WORKBENCH_MODE", mode)
    assert ownership.visible(Workspace(shared_ws), [SHIPPED, THEIRS, MINE]) == [SHIPPED, THEIRS, MINE]


def test_one_rule_for_every_visitor(shared_ws):
    """core.runs.owners.visible_runs: no visitor's run and one's own are shown, in order; an admin sees all."""
    from core.runs.owners import visible_runs

    ws = Workspace(shared_ws)
    ids = [MINE, THEIRS, SHIPPED]
    assert visible_runs(ws, ids, "visitor:bbbb", admin=False) == [MINE, SHIPPED]
    assert visible_runs(ws, ids, "visitor:aaaa", admin=False) == [THEIRS, SHIPPED]
    assert visible_runs(ws, ids, "visitor:cccc", admin=False) == [SHIPPED]
    assert visible_runs(ws, ids, "visitor:cccc", admin=True) == ids
