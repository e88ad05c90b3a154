"""Ground truth → Trace in a real Chromium: a trace link opens the trace with its contributing reviews."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.e2e.conftest import StreamlitServer, wait_ready

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def judged_demo(small_demo, tmp_path_factory):
    """A copy of the small demo with its keyword index and heuristic judgments, and the restaurant and
    K the GT page offers first (highest score) that has contributing reviews."""
    from core.ground_truth import trace_gt
    from core.ground_truth import views as gt_views
    from core.workspace import Workspace

    root = tmp_path_factory.mktemp("trace_e2e") / "ws"
    shutil.copytree(small_demo, root)
    ws = Workspace(root)
    gt_views.run_index_and_judge(ws, "demo", "G1a")  # no-op for what the demo already judged
    inputs = gt_views.load_inputs(ws, "demo", "G1a")
    frame = gt_views.compute_frame(inputs, "v1", [25, 50, 100, 200])
    business_id = gt_views.verdict_grid(frame)["business_id"][0]
    one = gt_views.restaurant_inputs(inputs, business_id)
    k = next(k for k in (25, 50, 100, 200)
             if gt_views.review_cards(trace_gt(one.judgments, one.restaurants, business_id, "v1", k)))
    return root, business_id, k


def test_trace_link_from_the_gt_page_shows_the_contributing_reviews(chromium_browser, judged_demo):
    root, business_id, k = judged_demo
    server = StreamlitServer(root)
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server.url}/ground_truth")
        wait_ready(page, "Open the trace", timeout=60_000)
        link = page.get_by_test_id("stPageLink").filter(has_text=f"K={k} · ")
        link.first.click()
        page.wait_for_url(re.compile(r"/trace\?"), timeout=60_000)
        wait_ready(page, "Contributing reviews of", timeout=60_000)
        assert f"business_id={business_id}" in page.url and f"k={k}" in page.url and "formula=v1" in page.url
        page.get_by_text(re.compile(r"idx \d+ · \d{4}-\d\d-\d\d · ★")).first.wait_for(timeout=20_000)
        body = page.inner_text("body")
        assert "INCIDENT_IMPACT" in body or "SAFETY_IMPACT" in body
        assert re.search(r"(incident|safety_interaction) → |firsthand → \+", body)
        page.locator(".gt-text").first.wait_for(timeout=30_000)  # the full review texts, with the excerpt marked
        page.locator(".gt-tree .gt-node").first.wait_for(timeout=30_000)
        assert page.locator(".gt-tree .gt-node").count() > 10  # the formula tree
        # reload: the URL alone reopens the same trace
        page.reload()
        wait_ready(page, "Contributing reviews of", timeout=60_000)
        page.locator(".gt-text").first.wait_for(timeout=30_000)
    finally:
        page.close()
        server.stop()
