"""Results names the GT of a run and follows it (issue 23): the provenance line, the stale banner
after an override, "Rescore against current GT" with the scores before and after, the gate of the
demo mode, and a comparison of runs scored against different GTs (through AppTest)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.results_gt import _override_an_incident, cli, ws  # noqa: F401 - fixtures among them

PAGE = "app_pages/results.py"


def _open(app_factory, root, run_id):
    at = app_factory(root).run()
    at.switch_page(PAGE).run()
    at.selectbox(key="results.run").set_value(run_id).run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    return "\n".join(t.value for t in at.text)


def test_a_run_names_its_gt_goes_stale_and_is_rescored_on_a_click(app_factory, ws):
    at = _open(app_factory, ws, "kw_a")
    assert "GT: computed from heuristic-v2 judgments with G1_allergy_V2 at K=25, 0 overrides" in _texts(at)
    assert "runs/kw_a/gt.json sha256" in _texts(at) and not any("stale" in w.value for w in at.warning)
    _override_an_incident(ws)
    at = _open(app_factory, ws, "kw_a")
    warning = " ".join(w.value for w in at.warning)
    assert "GT is stale: overrides changed (1 added)" in warning
    button = at.button(key="results.rescore")
    assert not button.disabled
    button.click().run()
    assert not at.exception, at.exception
    assert "1 override" in _texts(at) and not any("stale" in w.value for w in at.warning)
    table = next(d.value for d in at.dataframe if "change" in d.value.columns)
    assert list(table["score"]) == ["Ordinal AUPRC", "Process", "Consistency", "Accuracy"]
    after = json.loads((ws / "runs/kw_a/results.json").read_text())
    assert table["after"][3] == pytest.approx(after["accuracy"] * 100)
    before = json.loads((ws / "runs/kw_a/history/001/results.json").read_text())
    assert table["before"][3] == pytest.approx(before["accuracy"] * 100)


def test_the_demo_mode_shows_the_stale_gt_and_refuses_the_rescore(app_factory, ws, monkeypatch):
    _override_an_incident(ws)
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    at = _open(app_factory, ws, "kw_a")
    assert any("GT is stale" in w.value for w in at.warning)
    assert at.button(key="results.rescore").disabled
    assert not (ws / "runs/kw_a/history").exists()


def test_runs_scored_against_different_gts_are_compared_like_with_like(app_factory, ws):
    changed = _override_an_incident(ws)
    assert cli(ws, "runs", "rescore", "kw_b") == 0  # kw_b now against the GT with the override, kw_a against the old
    at = app_factory(ws).run()
    at.switch_page(PAGE).run()
    at.radio(key="results.mode").set_value("Compare runs").run()
    at.multiselect(key="results.runs").set_value(["kw_a", "kw_b"]).run()
    assert not at.exception, at.exception
    assert any("scored against different GTs" in w.value for w in at.warning)
    assert {m.label: m.value for m in at.metric}["GT differs"] == "1"
    assert {m.label: m.value for m in at.metric}["newly fixed"] == "0"  # identical answers: nothing fixed or failing
    at.selectbox(key="results.bucket").set_value("GT differs").run()
    listed = next(d.value for d in at.dataframe if "bucket" in d.value.columns)
    assert list(listed["business_id"]) == [changed]


def test_the_runs_page_lists_each_run_gt_and_staleness(app_factory, ws):
    _override_an_incident(ws)
    assert cli(ws, "runs", "rescore", "kw_b") == 0
    at = app_factory(ws).run()
    at.switch_page("app_pages/runs.py").run()
    assert not at.exception, at.exception
    past = next(d.value for d in at.dataframe if "gt_stale" in d.value.columns)
    rows = {r["run_id"]: r for r in past.to_dict("records")}
    assert rows["kw_a"]["gt_stale"] and rows["kw_a"]["gt_why"] == "overrides changed (1 added)"
    assert rows["kw_a"]["gt"].endswith(" stale") and past["model"].isna().all()  # a baseline calls no model
    assert not rows["kw_b"]["gt_stale"] and rows["kw_b"]["gt"].startswith("computed ")
    assert "1 override" in "\n".join(t.value for t in at.text)  # the launch form's GT, in words
