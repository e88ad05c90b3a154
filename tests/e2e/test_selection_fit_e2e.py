"""Issue 8 in a real Chromium: the Data page's restaurant table visibly ticks the selected restaurant
(by a click, a ``?business_id=`` link, "Search by name"), and the Runs page's past-runs table fits
the page at 1280 px (no columns scrolled out of view)."""

from __future__ import annotations

import io
import re

import pytest

from tests.e2e.conftest import wait_ready

pytestmark = pytest.mark.e2e

ROW, HEADER = 35, 35  # st.dataframe's default row and header heights (px)


def ticked_rows(page, n_rows: int) -> list[int]:
    """Rows whose selection checkbox is drawn checked (the canvas shows a filled blue box)."""
    from PIL import Image

    grid = page.locator('[data-testid="stDataFrame"]').first
    image = Image.open(io.BytesIO(grid.screenshot())).convert("RGB")
    out = []
    for i in range(n_rows):
        y = HEADER + ROW * i + ROW // 2
        if y + 5 >= image.height:  # the table is only as tall as its rows
            break
        box = [image.getpixel((x, yy)) for x in range(10, 22) for yy in range(y - 4, y + 5)]
        if sum(1 for r, g, b in box if b > 170 and r < 120) > 20:
            out.append(i)
    return out


def detail_name(page) -> str:
    return page.locator('[data-testid="stMain"] h3').nth(1).inner_text().strip()


def settle(page, text: str) -> None:
    wait_ready(page, text)
    page.wait_for_timeout(800)  # the canvas is redrawn a moment after the script ends


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_data_table_ticks_the_selected_restaurant(chromium_browser, app_server, tmp_path):
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 1100})
    try:
        page.goto(f"{app_server.url}/data")
        settle(page, "Restaurants of")
        assert ticked_rows(page, 8) == [0]  # nothing chosen: the first restaurant is shown and ticked

        grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
        page.mouse.click(grid["x"] + 15, grid["y"] + HEADER + ROW * 3 + ROW // 2)  # a click on row 4
        page.wait_for_function("() => /business_id=/.test(location.search)")
        page.wait_for_timeout(500)
        settle(page, "Restaurants of")
        clicked = detail_name(page)
        assert ticked_rows(page, 8) == [3]
        page.screenshot(path=str(tmp_path / "data_click.png"))
        linked_id = re.search(r"business_id=([^&]+)", page.url).group(1)

        page.goto(f"{app_server.url}/data")  # a fresh session: the link alone picks the restaurant
        settle(page, "Restaurants of")
        page.goto(f"{app_server.url}/data?business_id={linked_id}")
        settle(page, "Restaurants of")
        assert detail_name(page) == clicked and ticked_rows(page, 8) == [3]

        name_box = page.get_by_label("Search by name")
        name_box.fill(clicked)
        name_box.press("Enter")
        page.wait_for_timeout(500)
        settle(page, "Restaurants of")
        assert detail_name(page) == clicked and ticked_rows(page, 3) == [0]  # the match is row 1 of the list
        page.screenshot(path=str(tmp_path / "data_find.png"))
    finally:
        page.close()


def test_past_runs_table_fits_the_page(chromium_browser, app_server, tmp_path):
    page = chromium_browser.new_page(viewport={"width": 1280, "height": 1400})
    try:
        page.goto(f"{app_server.url}/runs")
        settle(page, "Past runs")
        grid = page.locator('[data-testid="stDataFrame"]').last
        grid.wait_for()
        page.wait_for_timeout(1500)
        scroll, client = grid.locator(".dvn-scroller").evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert scroll <= client, f"the past-runs table scrolls sideways: {scroll} px in {client} px"
        width = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1]
        page.screenshot(path=str(tmp_path / "runs.png"), full_page=True)
    finally:
        page.close()
