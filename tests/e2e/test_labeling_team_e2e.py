"""Raters are who they say they are, in a real Chromium against a team-mode ``streamlit run``:
a personal rater link opens Labeling only (and keeps working from its cookie), a typed
``?rater=`` never makes anyone another rater, an adjudicator's link opens Label review too, a
member (the shared access code) cannot rate as anybody, and an admin creates a link that works."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.settings import labels_url
from core.labeling import links
from core.labeling.store import LabelStore, close_stores
from tests.e2e.conftest import StreamlitServer, wait_ready

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("team_labeling")]
SHOTS = Path(os.environ.get("WORKBENCH_SCREENSHOTS", "/tmp/labels-shots"))
MEMBER_CODE, ADMIN_CODE = "team-member-5531", "team-admin-8842"
OTHER_PAGES = ("Ground truth", "Runs", "Results", "Gold answers")


@pytest.fixture(scope="module")
def team(small_demo, tmp_path_factory) -> Iterator[tuple[StreamlitServer, dict[str, str], Path]]:
    tmp = tmp_path_factory.mktemp("team-labeling")
    root = tmp / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    store = LabelStore(labels_url(root))
    tokens = {code: links.create_link(store, code, by="test") for code in ("demo_chloe", "demo_ben", "gone_rater")}
    links.revoke_links(store, "gone_rater")
    store.dispose()
    server = StreamlitServer(root, log_dir=tmp, extra_env={
        "WORKBENCH_MODE": "team", "WORKBENCH_ACCESS_CODE": MEMBER_CODE, "WORKBENCH_ADMIN_CODE": ADMIN_CODE,
        "WORKBENCH_LABELS_URL": "", "STREAMLIT_SECRETS_FILES": str(tmp / "no-secrets.toml")})
    yield server, tokens, root
    server.stop()
    close_stores()


def _no_other_pages(page) -> None:
    header = page.locator("header").first.inner_text() if page.locator("header").count() else ""
    for title in OTHER_PAGES:
        assert title not in header, f"{title} is offered to a rater"


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def test_a_rater_link_opens_labeling_only_and_no_code_makes_them_someone_else(team, chromium_browser):
    server, tokens, _ = team
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.goto(f"{server.url}/labeling?key={tokens['demo_chloe']}")
    wait_ready(page, "Rating as demo_chloe")
    assert "key=" not in page.url  # the token left the address bar for a cookie
    page.wait_for_function("() => document.cookie.includes('workbench_rater_key=')", timeout=30_000)
    assert "Signed in as rater demo_chloe (personal link)" in page.get_by_test_id("stSidebar").inner_text()
    assert page.get_by_label("Workspace folder").count() == 0 and page.get_by_text("Dataset").count() == 0
    _no_other_pages(page)
    _shot(page, "07_team_rater_labeling_only")
    for path in ("runs", "ground_truth", "label-review", "home"):
        page.goto(f"{server.url}/{path}")
        wait_ready(page, "Labeling only")
        assert page.get_by_text("Launch a run").count() == 0
    page.goto(f"{server.url}/labeling?rater=demo_ben")  # typing another rater's code
    wait_ready(page, "Rating as demo_chloe")
    assert page.get_by_text("Rating as demo_ben").count() == 0
    fresh = context.new_page()  # a new tab: the cookie signs it in
    fresh.goto(f"{server.url}/labeling")
    wait_ready(fresh, "Rating as demo_chloe")
    context.close()


def test_a_member_cannot_rate_as_anybody(team, chromium_browser):
    server, _, _ = team
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.goto(server.url)
    wait_ready(page, "sign in to continue")
    page.get_by_label("Access code").fill(MEMBER_CODE)
    page.get_by_role("button", name="Sign in").click()
    wait_ready(page, "Signed in as a team member.")
    page.wait_for_function("() => document.cookie.includes('workbench_team=member.')", timeout=30_000)
    page.goto(f"{server.url}/labeling?rater=demo_ben")
    wait_ready(page, "open your personal rater link")
    assert page.get_by_text("Rating as demo_ben").count() == 0 and page.get_by_label("Rater code").count() == 0
    page.goto(f"{server.url}/label-review?rater=demo_ben")
    wait_ready(page, "Sign in on the Labeling page first.")
    page.goto(f"{server.url}/runs")  # a member has the rest of the workbench
    wait_ready(page, "Launch a run")
    context.close()


def test_an_adjudicator_link_opens_label_review_but_grants_nothing(team, chromium_browser):
    server, tokens, _ = team
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.goto(f"{server.url}/labeling?key={tokens['demo_ben']}")
    wait_ready(page, "Rating as demo_ben")
    page.wait_for_function("() => document.cookie.includes('workbench_rater_key=')", timeout=30_000)
    page.goto(f"{server.url}/label-review")
    wait_ready(page, "Signed in as demo_ben (adjudicator)")
    page.get_by_test_id("stButtonGroup").get_by_text("Raters", exact=True).click()
    wait_ready(page, "Only admins grant roles")
    page.goto(f"{server.url}/runs")
    wait_ready(page, "Labeling only")
    context.close()


def test_an_admin_creates_a_link_that_works_and_a_revoked_one_does_not(team, chromium_browser):
    server, tokens, _ = team
    context = chromium_browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.goto(server.url)
    wait_ready(page, "sign in to continue")
    page.get_by_label("Access code").fill(ADMIN_CODE)
    page.get_by_role("button", name="Sign in").click()
    wait_ready(page, "Signed in as a team admin.")
    page.wait_for_function("() => document.cookie.includes('workbench_team=admin.')", timeout=30_000)
    page.goto(f"{server.url}/label-review")
    wait_ready(page, "without a personal rater identity")
    page.get_by_role("button", name="Create link").wait_for(timeout=60_000)  # the page renders on: a loaded machine
    page.get_by_label("Rater code").first.fill("new_rater")
    page.get_by_role("button", name="Create link").click()
    wait_ready(page, "shown once")
    link = page.locator("code").filter(has_text="/labeling?key=").first.inner_text().strip()
    token = link.split("key=")[1]
    assert links.is_token(token)
    newcomer = chromium_browser.new_context(viewport={"width": 1300, "height": 1000}).new_page()
    newcomer.goto(f"{server.url}/labeling?key={token}")
    wait_ready(newcomer, "Rating as new_rater")
    newcomer.context.close()
    gone = chromium_browser.new_context().new_page()
    gone.goto(f"{server.url}/labeling?key={tokens['gone_rater']}")
    wait_ready(gone, "This rater link is not valid")
    assert gone.get_by_text("Rating as gone_rater").count() == 0
    gone.context.close()
    context.close()
