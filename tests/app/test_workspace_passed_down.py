"""The workspace is passed down (issue 24): with the server started on workspace B and the sidebar on
workspace A, every page acts on A: the Runs page offers A's own tasks and policies (ADDM's imported
G1_dietary and its current G1_allergy, which replace built-ins there), plans with A's policies, and
Ground truth and Home read A."""

from __future__ import annotations

import shutil

import pytest

from core.ground_truth.policies.addm_import import import_policies
from core.runs import RunConfig, plan_run
from core.runs.plan import check_config
from core.ui import SIDEBAR_WORKSPACE
from core.workspace import Workspace

pytestmark = pytest.mark.fixtures


@pytest.fixture()
def a_and_b(small_demo, tmp_path, fixtures_dir, monkeypatch):
    root = tmp_path / "root"
    for name in ("a", "b"):
        shutil.copytree(small_demo, root / name, ignore=shutil.ignore_patterns("jobs", "cache"))
    head = fixtures_dir / "dev-ADDM/head"
    report = import_policies(Workspace(root / "a"), [head / "policies" / "G1"], head / "terms")
    assert report.errors == [] and report.tasks == ["G1_allergy", "G1_dietary"]
    monkeypatch.setenv("WORKBENCH_WORKSPACE_ROOTS", str(root))
    return root / "a", root / "b"


def test_the_runs_page_offers_the_sidebar_workspace_tasks_and_policies(app_factory, a_and_b):
    a, b = a_and_b
    at = app_factory(b).run()  # the server's own workspace is B
    at.sidebar.text_input(key=SIDEBAR_WORKSPACE).input(str(a)).run()
    at.switch_page("app_pages/runs.py").run()
    assert not at.exception, at.exception
    assert {"G1a", "G1_allergy", "G1_dietary"} <= set(at.selectbox(key="runs.task").options)
    at.selectbox(key="runs.task").set_value("G1_dietary").run()
    assert at.selectbox(key="runs.policy").options == [f"G1_dietary_V{i}" for i in range(1, 5)]
    at.selectbox(key="runs.task").set_value("G1_allergy").run()
    assert at.selectbox(key="runs.policy").options == [f"G1_allergy_V{i}" for i in range(1, 5)]
    at.selectbox(key="runs.task").set_value("G1a").run()  # in A, G1a keeps only the built-in its ADDM import did not replace
    assert at.selectbox(key="runs.policy").options == ["G1_allergy_V0"]
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.switch_page("app_pages/ground_truth.py").run()
    assert not at.exception
    assert "G1_dietary" in at.selectbox(key="gt.task").options


def test_check_config_and_plans_use_the_workspace_given(a_and_b):
    a, b = Workspace(a_and_b[0]), Workspace(a_and_b[1])
    config = RunConfig(dataset="demo", task="G1_dietary", policy="G1_dietary_V2", method="keyword", k=25)
    check_config(a, config)  # A's own task and policy
    with pytest.raises(Exception, match="unknown task 'G1_dietary'"):
        check_config(b, config)
    plan = plan_run(config, a)
    assert plan.policy.origin.startswith("ADDM G1/dietary/V2.yaml")
    assert plan.gt == {} and any("no judgments of task G1_dietary" in w for w in plan.warnings)
