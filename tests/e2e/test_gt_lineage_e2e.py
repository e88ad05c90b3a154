"""GT lineage in a real Chromium (issue 23): Results names the GT a run was scored against, says it is
stale after an override, rescores it on a click and shows the scores before and after; Compare runs
warns when two runs were scored against different GTs. Screenshots go to $WORKBENCH_SCREENSHOTS."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import StreamlitServer, wait_ready
from tests.helpers.results_gt import _override_an_incident, cli

pytestmark = pytest.mark.e2e


@pytest.fixture()
def lineage_server(small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("jobs", "cache", "runs"))
    for run_id in ("kw_a", "kw_b"):
        assert cli(root, "run", "--dataset", "demo", "--task", "G1a", "--policy", "G1_allergy_V2", "--method",
                   "keyword", "--k", "25", "--run-id", run_id) == 0
    _override_an_incident(root)
    assert cli(root, "runs", "rescore", "kw_b") == 0  # kw_b follows the override; kw_a is stale
    server = StreamlitServer(root)
    yield server
    server.stop()


def _shot(page, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("WORKBENCH_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def test_provenance_stale_banner_rescore_and_mixed_comparison(chromium_browser, lineage_server, tmp_path):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 1600})
    try:
        page.goto(f"{lineage_server.url}/results?run=kw_a")
        wait_ready(page, "GT: computed from heuristic-v2 judgments", timeout=60_000)
        body = page.inner_text("body")
        assert "with G1_allergy_V2 at K=25, 0 overrides" in body and "runs/kw_a/gt.json sha256" in body
        assert "GT is stale: overrides changed (1 added)" in body
        _shot(page, "results-stale", tmp_path)
        page.get_by_role("button", name="Rescore against current GT").click()
        wait_ready(page, "Before and after the GT change", timeout=60_000)
        body = page.inner_text("body")
        assert "1 override" in body and "GT is stale" not in body
        _shot(page, "results-rescored", tmp_path)

        page.goto(f"{lineage_server.url}/results?run=kw_a")
        wait_ready(page, "Before and after the GT change", timeout=60_000)
        page.get_by_text("Compare runs").click()
        wait_ready(page, "Paired differences against", timeout=60_000)
        page.goto(f"{lineage_server.url}/runs")
        wait_ready(page, "Past runs", timeout=60_000)
        page.get_by_test_id("stDataFrame").last.wait_for(timeout=20_000)
        _shot(page, "runs-gt-columns", tmp_path)
    finally:
        page.close()


def test_a_comparison_across_gts_says_so(chromium_browser, lineage_server, tmp_path):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 2000})
    try:
        page.goto(f"{lineage_server.url}/results")
        wait_ready(page, "GT: ", timeout=60_000)
        page.get_by_text("Compare runs").click()
        wait_ready(page, "Paired differences against", timeout=60_000)  # the comparison is drawn
        wait_ready(page, "scored against different GTs", timeout=60_000)
        page.get_by_text("GT differs").first.wait_for(timeout=60_000)
        body = page.inner_text("body")
        assert "GT differs" in body and "only the restaurants whose GT verdict is the same" in body
        _shot(page, "results-compare-mixed-gt", tmp_path)
    finally:
        page.close()
