"""Labeling in a real Chromium: drag the slider, submit with the keyboard shortcut, reload and still
be the same rater (link and cookie); a second browser context is another rater with another item."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from core.base.settings import labels_url
from core.labeling import items
from core.labeling.store import LabelStore, close_stores, ratings
from core.workspace import Workspace
from tests.e2e.conftest import StreamlitServer, sign_in_rater, wait_ready

pytestmark = pytest.mark.e2e
SHOTS = Path(os.environ.get("WORKBENCH_SCREENSHOTS", "/tmp/labels-shots"))


@pytest.fixture()
def labeling_server(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure("e2e")
    store = LabelStore(labels_url(ws.root))
    store.ensure_schema()
    # Target 1: an item handed to one rater is never handed to another while reserved.
    project = items.create_project(store, "e2e", target_raters=1, scale_labels=("Bad", "Unclear", "Good"))
    items.add_items(store, project, [
        {"dataset": "e2e", "identifier": f"i{k}", "prompt_title": f"Synthetic question {k}",
         "prompt_body": f"Is answer {k} helpful?", "response_text": f"Answer number {k}."} for k in range(1, 7)])
    store.dispose()
    server = StreamlitServer(ws.root)
    yield server, ws
    server.stop()
    close_stores()


def current_title(page) -> str:
    return page.locator("h5").filter(has_text="Synthetic question").first.inner_text()


def test_drag_submit_reload_and_a_second_rater(chromium_browser, labeling_server):
    server, ws = labeling_server
    first = chromium_browser.new_context(viewport={"width": 1300, "height": 1000})
    page = first.new_page()
    page.goto(server.url)  # the first page load of a fresh server goes to the app's front door
    wait_ready(page, "Scale Workbench")
    sign_in_rater(page, server.url, "e2e_ana")
    assert "rater=e2e_ana" in page.url
    title = current_title(page)

    # Streamlit's slider (react-aria): a track inside role=group, the thumb positioned with left: N%.
    track = page.locator('[data-testid="stSlider"] [role="group"] > div').first.bounding_box()
    thumb = page.locator('[data-testid="stSlider"] [role="group"] > div > div[style*="left"]').first
    box = thumb.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + track["width"] * 0.3, box["y"] + box["height"] / 2, steps=12)
    page.mouse.up()
    page.get_by_text(re.compile(r"Your rating: \+0\.[1-9]")).first.wait_for(timeout=20_000)
    wait_ready(page, "Your rating")
    dragged = float(re.search(r"Your rating: ([+-]\d\.\d\d)", page.inner_text("body")).group(1))
    assert 0.05 <= dragged <= 1.0

    # the run that enables Submit may still be drawing ("Running…" shows only after a moment): a
    # shortcut on a disabled button does nothing, as for a user
    page.get_by_role("button", name="Submit").first.wait_for(state="visible")
    page.wait_for_function("() => [...document.querySelectorAll('button')].some("
                           "b => b.innerText.includes('Submit') && !b.disabled)", timeout=30_000)
    page.keyboard.press("Control+Enter")  # the Submit shortcut
    page.wait_for_function(
        "(t) => !document.body.innerText.includes(t)", arg=title, timeout=60_000)
    wait_ready(page, "0 is my answer")  # the slider reset for the next item: untouched again
    next_title = current_title(page)
    store = LabelStore(labels_url(ws.root))
    with store.read() as conn:
        row = conn.execute(select(ratings).where(ratings.c.rater == "e2e_ana")).one()
    assert row.score == pytest.approx(dragged) and row.seconds_spent is not None

    page.reload()  # same rater, same reserved item
    wait_ready(page, "Rating as e2e_ana")
    assert current_title(page) == next_title
    fresh = first.new_page()  # a new tab without the link: the cookie remembers the rater
    fresh.goto(f"{server.url}/labeling")
    wait_ready(fresh, "Rating as e2e_ana")
    assert current_title(fresh) == next_title

    second = chromium_browser.new_context(viewport={"width": 1300, "height": 1000})
    other = second.new_page()
    sign_in_rater(other, server.url, "e2e_ben")
    assert "e2e_ana" not in other.inner_text("body")
    assert current_title(other) not in (title, next_title)
    first.close()
    second.close()
    store.dispose()


def _slider_to(page, steps: int) -> None:
    """Move the rating slider ``steps`` notches right with the keyboard (0.05 each), as a user can."""
    page.locator('[data-testid="stSlider"] input[type=range]').first.focus()
    for _ in range(steps):
        page.keyboard.press("ArrowRight")
    page.get_by_text(f"Your rating: +{steps * 0.05:.2f}").first.wait_for(timeout=30_000)
    wait_ready(page, "Your rating:")
    page.wait_for_function("() => [...document.querySelectorAll('button')].some("
                           "b => b.innerText.includes('Submit') && !b.disabled)", timeout=30_000)


def test_one_rater_in_two_tabs_the_later_rating_corrects_the_earlier(chromium_browser, labeling_server):
    """Two browser contexts of one rater (a laptop and a phone) show the same item; A submits +0.20,
    B submits +0.40: both rows are stored, B's in force, and B's page says so (no silent "Saved")."""
    server, ws = labeling_server
    tabs = [chromium_browser.new_context(viewport={"width": 1300, "height": 1000}).new_page() for _ in range(2)]
    for tab in tabs:
        tab.goto(f"{server.url}/labeling?rater=e2e_cleo")
        wait_ready(tab, "Rating as e2e_cleo")
    a, b = tabs
    assert current_title(a) == current_title(b)
    _slider_to(a, 4)
    a.get_by_role("button", name="Submit").click()
    wait_ready(a, "0 is my answer")
    _slider_to(b, 8)
    b.get_by_role("button", name="Submit").click()
    wait_ready(b, "in another tab")
    body = b.inner_text("body")
    assert "You had rated this item +0.20 in another tab; your +0.40 replaces it (both kept in the history)." in body
    assert "Saved +0.40" not in body
    store = LabelStore(labels_url(ws.root))
    with store.read() as conn:
        rows = conn.execute(select(ratings).where(ratings.c.rater == "e2e_cleo").order_by(ratings.c.rating_id)).all()
    assert [(r.score, r.supersedes) for r in rows] == [(0.2, None), (0.4, rows[0].rating_id)]
    b.get_by_text("Your recent ratings").click()  # the rater can change it again: the one in force is listed
    b.get_by_text("+0.40 · item #").first.wait_for(timeout=30_000)
    assert b.get_by_text("+0.20 · item #").count() == 0
    SHOTS.mkdir(parents=True, exist_ok=True)
    b.screenshot(path=str(SHOTS / "08_e2e_two_tabs_tab_b.png"))
    for tab in tabs:
        tab.context.close()
    store.dispose()
