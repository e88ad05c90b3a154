"""The Runs page's pre-flight (core.runs.preview) says what the full plan says, without planning.

Each figure of :func:`preview_run` is checked against :func:`plan_run` on the same workspace: the
samples to run, the calls cached / new and estimated tokens and cost of an LLM method, the GT's
version and words, the warnings. Beyond ``EXACT_UP_TO`` samples the LLM figures are counted on a
sample and scaled, and say so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.llm import OFFLINE_MODEL, PRICES
from core.runs import RunConfig, plan_run
from core.runs import preview as preview_mod
from core.runs.preview import preview_run
from core.workspace import Workspace

POLICY, TASK = "G1_allergy_V2", "G1a"


@pytest.fixture(scope="module")
def ws(small_demo: Path, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("preview") / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    return Workspace(root)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")  # nothing is sent: requests are only counted


def _config(ws: Workspace, **kw: object) -> RunConfig:
    return RunConfig(dataset=ws.datasets()[0], task=TASK, policy=POLICY, **kw)  # type: ignore[arg-type]


PRICED = next(iter(PRICES))
CASES = [dict(method="keyword"), dict(method="amos"), dict(method="direct", model=PRICED),
         dict(method="amos", model=PRICED, k=5), dict(method="direct", model=PRICED, k=500, n=5, seed=3),
         dict(method="cot", model=PRICED, n=20), dict(method="direct", model=OFFLINE_MODEL, k=300)]


@pytest.mark.parametrize("kw", CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_preview_says_what_the_plan_says(ws: Workspace, kw: dict) -> None:
    config = _config(ws, **kw)
    shown, planned = preview_run(config, ws), plan_run(config, ws).as_dict()
    assert shown["run_id"] is None and planned["run_id"]  # a launch makes the id
    assert shown["config"] == planned["config"] and shown["n_samples"] == planned["n_samples"]
    assert shown["preflight"] == planned["preflight"]
    assert shown["warnings"] == planned["warnings"]
    assert shown["gt"] == planned["gt"] and shown["gt_description"] == planned["gt_description"]
    assert shown["preflight"]["to_run"] == shown["n_samples"] > 0
    if config.k > 200:  # the demo stores 200 reviews a restaurant
        assert shown["warnings"][0].startswith(f"K={config.k} is above the reviews stored")


def test_gt_file_reference_matches_the_plan(ws: Workspace) -> None:
    from core.ground_truth.export import export_gt

    written = export_gt(ws, ws.datasets()[0], TASK, POLICY, [25], layout="addm")
    path = str(written.files[0]["path"])
    config = _config(ws, method="keyword", gt=path)
    shown, planned = preview_run(config, ws), plan_run(config, ws).as_dict()
    assert shown["gt_description"] == planned["gt_description"]
    assert shown["gt"]["version"] == planned["gt"]["version"]
    assert {k: v for k, v in planned["gt"].items() if k != "computed_from"} == shown["gt"]


def test_many_samples_are_estimated_from_a_sample(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preview_mod, "EXACT_UP_TO", 4)
    monkeypatch.setattr(preview_mod, "SAMPLED", 4)
    preview_mod._llm_figures.cache_clear()
    config = _config(ws, method="direct", model=PRICED)
    whole = preview_run(config, ws)
    shown, planned = whole["preflight"], plan_run(config, ws).preflight
    assert shown["sampled"] == 4 and shown["estimated"] is True and "sampled" not in planned
    assert shown["to_run"] == planned["to_run"] == 12
    assert shown["new_calls"] == planned["new_calls"]  # direct: one call a restaurant, so scaling is exact
    assert shown["est_prompt_tokens"] == pytest.approx(planned["est_prompt_tokens"], rel=0.25)
    assert 0 < shown["est_cost_usd_low"] < shown["est_cost_usd_high"]
    from core.ui.runs import confirm_line  # the launch's confirmation says it is an estimate too

    assert (confirm_line(whole) or "").startswith(f"about 12 (estimated from 4 restaurants) new calls to {PRICED}")
    preview_mod._llm_figures.cache_clear()


def test_an_unknown_name_fails_as_the_plan_does(ws: Workspace) -> None:
    config = _config(ws, method="keyword", samples=("no-such-restaurant",))
    with pytest.raises(Exception) as planned:
        plan_run(config, ws)
    with pytest.raises(type(planned.value), match="unknown sample"):
        preview_run(config, ws)


def test_each_launch_of_one_preview_gets_its_own_run_id(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.ui import runs as glue

    started: list[dict] = []
    monkeypatch.setattr(glue, "start_job", lambda _ws, kind, args, label="": started.append(args) or {"args": args})
    shown = preview_run(_config(ws, method="keyword"), ws)
    glue.launch(ws, shown)
    glue.launch(ws, shown)
    ids = [a["config"]["run_id"] for a in started]
    assert len(set(ids)) == 2 and all(ids)
    assert all({**a["config"], "run_id": None} == shown["config"] for a in started)  # the previewed config


def test_reviews_below_k_from_the_kept_counts_or_by_position(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """min(n, K) when every restaurant's positions are 0..n-1 (the kept per-restaurant counts), the
    same as counting the positions below K, which a dataset with gaps gets."""
    dataset = ws.datasets()[0]
    frame, contiguous = preview_mod._reviews_per_restaurant(ws, dataset)
    assert contiguous and frame.height == 12 and frame["n"].to_list() == [200] * 12
    stamp = preview_mod._dataset_stamp(ws, dataset)
    for k in (1, 25, 200, 201, 500):
        preview_mod._reviews_below_k.cache_clear()
        kept = preview_mod._reviews_below_k(str(ws.root), dataset, k, stamp)
        monkeypatch.setattr(preview_mod, "_reviews_per_restaurant", lambda *_: (frame, False))
        preview_mod._reviews_below_k.cache_clear()
        counted = preview_mod._reviews_below_k(str(ws.root), dataset, k, stamp)
        monkeypatch.undo()
        assert kept[0] == counted[0] and kept[1].to_list() == counted[1].to_list() == [min(200, k)] * 12
    preview_mod._reviews_below_k.cache_clear()
