"""The Analysis page in a real Chromium on the small demo workspace (its demo study: offline
advisors, a trained scorer, a blinded audit rated by the demo raters)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import wait_ready

pytestmark = pytest.mark.e2e


def test_analysis_page_renders_charts_tables_and_disagreements(chromium_browser, app_server, tmp_path):
    shots = Path(os.environ.get("WORKBENCH_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 1100})
    try:
        page.goto(f"{app_server.url}/analysis")
        wait_ready(page, "Largest disagreements")
        body = page.inner_text("body")
        assert "Perspective analysis" in body and "run=demo-rent" in page.url
        assert "offline models (rule-based, no LLM)" in body and "Uplift against neutral" in body
        assert "Scorer against the human audit" in body and "audited responses with a consensus" in body
        assert "How good is the scorer?" in body  # its held-out quality, before the means and uplifts
        page.wait_for_function(  # scorer quality, groups, uplifts, scorer vs humans
            "() => document.querySelectorAll('[data-testid=\"stDataFrame\"]').length === 4", timeout=20_000)
        # both Altair charts drew (vega-embed renders a canvas or an svg per chart)
        page.wait_for_function("() => document.querySelectorAll('.vega-embed').length >= 2", timeout=20_000)
        page.screenshot(path=str(shots / "analysis_top.png"), full_page=False)
        page.get_by_text("Scorer against the human audit").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "analysis_full.png"), full_page=True)

        first = page.locator('[data-testid="stExpander"] summary').first
        first.click()
        page.get_by_text("Response").first.wait_for()
        text = page.locator('[data-testid="stExpander"] [data-testid="stText"]').nth(1).inner_text()
        assert text.strip()  # the response text, shown as plain text
        first.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "analysis_disagreement.png"), full_page=False)
        page.get_by_role("radio", name="tenant").or_(page.get_by_role("button", name="tenant")).first.click()
        wait_ready(page, "Largest disagreements")
        page.screenshot(path=str(shots / "analysis_tenant.png"), full_page=True)
    finally:
        page.close()


def test_audit_item_is_blind_in_the_labeling_page(chromium_browser, small_demo, tmp_path):
    import shutil

    from tests.e2e.conftest import StreamlitServer

    shots = Path(os.environ.get("WORKBENCH_SCREENSHOTS") or tmp_path)
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)  # rating writes to the store: never to the shared demo
    server = StreamlitServer(root)
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server.url}/labeling?rater=e2e_auditor&project=demo-rent-audit")
        wait_ready(page, "The rent is")  # the title is hidden: a project shows it only when asked to
        body = page.inner_text("body")
        assert "Rent increase scenario" not in body
        assert "The rent is" in body and "the landlord proposes an increase" in body
        for hidden in ("offline:advisor", "demo-stance", "asked as", "perspective", "I am a landlord", "I am a tenant"):
            assert hidden not in body, hidden
        page.screenshot(path=str(shots / "audit_labeling.png"), full_page=False)
    finally:
        page.close()
        server.stop()
