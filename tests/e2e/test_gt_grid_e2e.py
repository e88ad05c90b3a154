"""The Ground truth page in a real Chromium with 8 K values, three of them above the 80 reviews each
restaurant of the tiny workspace has: the coverage warning shows and the grid stays inside its column."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import StreamlitServer, wait_ready
from tests.e2e.tour_helpers import _add_chip
from tests.helpers.gt_workspace import build_gt_workspace

pytestmark = pytest.mark.e2e


def test_grid_with_eight_k_fits_its_column_and_warns(chromium_browser, tmp_path):
    build_gt_workspace(tmp_path / "ws")
    server = StreamlitServer(tmp_path / "ws")
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server.url}/ground_truth")
        wait_ready(page, "Open the trace", timeout=60_000)
        chips = page.get_by_test_id("stMultiSelect").first.locator("input")
        select = page.get_by_test_id("stMultiSelect").first
        for k in ("75", "80", "150", "all"):
            _add_chip(page, select, chips, k)
        page.keyboard.press("Escape")
        page.get_by_text("3 of 3 restaurants have fewer than K=100, 150 or 200 reviews").wait_for(timeout=90_000)
        wait_ready(page, "K=150 ·", timeout=30_000)  # the panel's trace links follow the 8 K
        chart = page.get_by_test_id("stVegaLiteChart").first
        column = chart.locator("xpath=ancestor::div[@data-testid='stColumn'][1]")
        box, col = chart.bounding_box(), column.bounding_box()
        assert box["x"] + box["width"] <= col["x"] + col["width"] + 1, (box, col)
        page.screenshot(path=str(tmp_path / "gt_8k.png"))
    finally:
        page.close()
        server.stop()
