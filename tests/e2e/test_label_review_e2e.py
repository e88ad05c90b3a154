"""Label review in a real Chromium: clicking a row of the disagreement queue opens that item
(AppTest cannot select dataframe rows)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import wait_ready

pytestmark = pytest.mark.e2e


def test_clicking_a_queue_row_opens_the_item(chromium_browser, app_server):
    page = chromium_browser.new_context(viewport={"width": 1400, "height": 1300}).new_page()
    page.goto(app_server.url)
    wait_ready(page, "Scale Workbench")
    page.goto(f"{app_server.url}/label-review?rater=demo_ben")
    wait_ready(page, "Signed in as")
    page.locator('[data-testid="stButtonGroup"]').get_by_text("Disagreements", exact=True).click()
    wait_ready(page, "Click a row")
    picker = page.locator('input[aria-label="Item"]')
    first = picker.input_value()
    box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    header = row = 35  # px: Streamlit's data grid rows
    page.mouse.click(box["x"] + 15, box["y"] + header + row * 2 + row // 2)  # the third row's selector
    page.wait_for_function("(first) => document.querySelector('input[aria-label=\"Item\"]').value !== first",
                           arg=first, timeout=30_000)
    wait_ready(page, "Signed in as")
    third = picker.input_value()
    assert third != first and third.startswith("#")
    heading = page.locator("h5").filter(has_text=third.split(" · ")[-1].rstrip("…")[:30]).first
    heading.wait_for(timeout=10_000)  # the item's whole prompt is shown under the queue
