"""AppTest of the Ground truth page's "Plan a judge audit" form: the preview is the CLI's plan, Create
makes the labeling project raters answer, and the read-only demo refuses to create one."""

from __future__ import annotations

import shutil

from core.ground_truth.audit.project import plan_audit_ws
from core.labeling import items
from core.labeling.reports import items_frame
from core.labeling.store import close_stores, open_store, store_exists
from core.workspace import Workspace

GT = "app_pages/ground_truth.py"


def _projects(root) -> list[str]:
    return [p.name for p in items.list_projects(open_store(root))] if store_exists(root) else []


def _open_form(app_factory, root):
    at = app_factory(root).run()
    at.switch_page(GT).run()
    assert not at.exception, at.exception
    at.session_state["gt.tab"] = "Compare judges"
    at.run()
    assert not at.exception, at.exception
    return at


def test_preview_then_create_makes_the_cli_plan_as_a_labeling_project(app_factory, small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    at = _open_form(app_factory, root)
    assert any("No judge audit of demo/G1a yet" in c.value for c in at.caption)
    at.selectbox(key="gt.audit_plan.judge").set_value("heuristic-v2")
    at.number_input(key="gt.audit_plan.target").set_value(0.5)
    at.text_input(key="gt.audit_plan.name").set_value("aud-page")
    at.button(key="gt.audit_plan.preview_btn").click().run()
    assert not at.exception, at.exception
    expected = plan_audit_ws(Workspace(root), "demo", "G1a", "heuristic-v2", k=25, target=0.5)
    text = "\n".join(m.value for m in at.markdown)
    assert f"**{expected.size}** of {expected.population} judged reviews" in text
    table = next(df.value for df in at.dataframe if "in the sample" in df.value.columns)
    assert table["in the sample"].to_list() == [m["sample"] for m in expected.marginals]
    assert "aud-page" not in _projects(root)  # a preview writes nothing

    at.button(key="gt.audit_plan.create_btn").click().run()
    assert not at.exception, at.exception
    assert any("Created the audit project aud\\-page" in s.value for s in at.success)
    store = open_store(root)
    project = items.get_project(store, "aud-page")
    keys = items_frame(store, project).sort("item_id")["identifier"].to_list()
    assert keys == list(expected.sample)  # the same reviews, in plan order
    at.run()  # the report section now lists the new audit
    assert at.selectbox(key="gt.audit_report").value == "aud-page"

    at.button(key="gt.audit_plan.create_btn").click().run()  # the same name again: refused, in one line
    assert any("Not created" in e.value and "exists" in e.value for e in at.error)
    close_stores()


def test_the_demo_mode_refuses_to_create_an_audit(app_factory, small_demo, tmp_path, monkeypatch):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    before = _projects(root)
    at = _open_form(app_factory, root)
    button = at.button(key="gt.audit_plan.create_btn")
    assert button.disabled
    assert any("Read-only demo: create a judge audit is disabled here." in c.value for c in at.caption)
    assert _projects(root) == before
    close_stores()
