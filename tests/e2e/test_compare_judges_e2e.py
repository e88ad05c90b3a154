"""The Ground truth page's "Compare judges" section in a real Chromium, on the small demo (which
holds heuristic-v1 and heuristic-v2 judgments)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import wait_ready

pytestmark = pytest.mark.e2e


def test_compare_judges_section_renders_heatmaps_and_the_agreement_table(chromium_browser, app_server):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 2200})
    try:
        page.goto(f"{app_server.url}/ground_truth")
        wait_ready(page, "Compare judges", timeout=60_000)
        page.get_by_text("offline judge heuristic-v2").first.wait_for(timeout=60_000)
        page.get_by_text("Compare judges", exact=True).first.click()
        wait_ready(page, "reviews judged by both", timeout=60_000)
        page.get_by_text("Field by field").first.wait_for(timeout=60_000)  # drawn after the caption
        body = page.inner_text("body")
        assert re.search(r"[\d,]+ reviews judged by both; 0 only by heuristic-v1, 0 only by heuristic-v2", body)
        assert "Field by field" in body
        # the agreement-by-K line chart and one heatmap per G1a field are drawn
        page.wait_for_function("() => document.querySelectorAll('.vega-embed canvas, .vega-embed svg').length >= 4",
                               timeout=30_000)
        assert not page.locator("[data-testid='stException']").count()
    finally:
        page.close()
