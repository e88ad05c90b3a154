"""Gold answers page in a real Chromium: metrics and breakdown charts render, the sample detail
highlights keywords in escaped text, the status filter narrows the table, a report is saved."""

from __future__ import annotations

import shutil

import pytest

from core.gold import store
from core.gold.demo import DEMO_SET
from core.workspace import Workspace
from tests.e2e.conftest import StreamlitServer, wait_ready

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def gold_demo(small_demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("gold_e2e") / "ws"
    shutil.copytree(small_demo, root)
    return root


def test_gold_page_in_a_browser(chromium_browser, gold_demo, tmp_path):
    server = StreamlitServer(gold_demo)
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 2000})
    try:
        page.goto(f"{server.url}/gold")
        wait_ready(page, "By domain", timeout=60_000)
        page.get_by_text("vs goal 90%").first.wait_for(timeout=30_000)  # the metrics row (drawn late under load)
        body = page.inner_text("body")
        assert "Pass rate" in body and "vs goal 90%" in body
        page.locator("[data-testid='stVegaLiteChart'] svg.marks").nth(1).wait_for(timeout=30_000)  # by task, by domain
        page.screenshot(path=str(tmp_path / "gold-breakdown.png"), full_page=True)

        page.get_by_role("tab", name="Samples").click()
        wait_ready(page, "Citation found", timeout=30_000)
        page.locator(".gold-expected mark").first.wait_for(timeout=30_000)  # required keywords marked in the expected text
        assert page.locator(".gold-chip").count() >= 1
        page.screenshot(path=str(tmp_path / "gold-samples.png"), full_page=True)

        page.get_by_role("tab", name="Compare reports").click()
        wait_ready(page, "Regressions", timeout=30_000)
        assert "regression" in page.inner_text("body")

        page.get_by_role("tab", name="Save and send").click()
        wait_ready(page, "Save report", timeout=30_000)
        before = len(store.history(Workspace(gold_demo), DEMO_SET))
        page.get_by_role("button", name="Save report").click()
        wait_ready(page, "Saved ", timeout=30_000)
        assert len(store.history(Workspace(gold_demo), DEMO_SET)) == before + 1
    finally:
        page.close()
        server.stop()
