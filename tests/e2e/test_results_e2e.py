"""Results page in a real Chromium: scores, the drilldown with highlighted snippets, raw response as text,
the link to Trace, and two runs compared."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.app.results_helpers import write_runs
from tests.e2e.conftest import StreamlitServer, wait_ready

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def results_server(small_demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("results_e2e") / "ws"
    shutil.copytree(small_demo, root)
    write_runs(root, n_boot=100)
    server = StreamlitServer(root)
    yield server
    server.stop()


def test_drilldown_highlights_snippets_and_links_to_trace(chromium_browser, results_server):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 2000})
    try:
        page.goto(f"{results_server.url}/results")
        wait_ready(page, "Samples ranked by", timeout=60_000)
        assert "95 % CI" in page.inner_text("body")
        page.get_by_role("tab", name="Restaurants").click()
        page.get_by_test_id("stMultiSelect").first.click()
        page.get_by_role("option", name="Critical Risk").click()
        page.keyboard.press("Escape")
        wait_ready(page, "Evidence the method claimed")
        page.locator("summary").filter(has_text="Review ").first.click()
        mark = page.locator("mark").first
        mark.wait_for(timeout=20_000)
        assert mark.inner_text().strip()
        page.locator("summary").filter(has_text="Raw response").click()
        code = page.get_by_test_id("stCode").first
        code.wait_for(timeout=20_000)
        assert code.inner_text().startswith("<b>raw</b>")  # shown as text, not rendered as HTML
        page.get_by_role("link", name="Open this restaurant in Trace").first.click()
        page.wait_for_url(re.compile(r"/trace\?.*formula=G1_allergy_V2"), timeout=60_000)
        assert "business_id=" in page.url and "k=" in page.url
    finally:
        page.close()


def test_two_runs_compared(chromium_browser, results_server):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 2000})
    try:
        page.goto(f"{results_server.url}/results")
        wait_ready(page, "Samples ranked by", timeout=60_000)
        page.get_by_text("Compare runs").click()
        wait_ready(page, "Paired differences against", timeout=60_000)
        body = page.inner_text("body")
        assert "newly failing" in body and "still right" in body
        page.get_by_text("Each score against K per method").wait_for(timeout=20_000)
        page.get_by_text("runs in the workspace").click()
        page.get_by_test_id("stVegaLiteChart").nth(1).wait_for(timeout=60_000)  # the score-against-K chart
    finally:
        page.close()
