"""The whole-app browser suite (issue 17): a newcomer's tour of every page on the demo workspace, two
raters labeling at once, and the role gates, in Debian's Chromium against `streamlit run`.

Every page is screenshotted (into ``$WORKBENCH_SCREENSHOTS``, else the test's tmp folder) and the suite
fails on any Streamlit exception element or browser console error (see tour_helpers.Watch)."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from core.base.settings import labels_url
from core.gold import store as gold_store
from core.gold.demo import DEMO_SET
from core.jobs import list_jobs
from core.labeling.store import LabelStore, close_stores, integrity_problems, items, projects, ratings
from core.runs import run_status
from core.workspace import Workspace
from tests.e2e.conftest import StreamlitServer, sign_in_rater, wait_ready
from tests.e2e.tour_helpers import Watch, _add_chip, pick, rate, wait_idle

# The tour on one xdist worker, the two tests sharing the gated server on one worker (possibly the other).
pytestmark = pytest.mark.e2e
PROJECT = "demo-allergy-answers"


@pytest.fixture()
def watch(tmp_path) -> Watch:
    shots = Path(os.environ.get("WORKBENCH_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    return Watch(shots)


@pytest.fixture()
def demo_copy(small_demo, tmp_path) -> Path:
    """A writable copy of the small demo (the tour launches a run, rates and saves a report)."""
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("jobs", "cache"))
    return root


@pytest.fixture(scope="module")
def gated(small_demo, tmp_path_factory):
    """One server for the role gates and the two raters, on its own demo copy: sign-in configured (an
    [auth] section in the secrets: st.login, though nobody signs in here) in the local mode, an LLM endpoint
    configured (never called: every paid action is refused before it). The demo and team modes' gates are
    tests/e2e/test_hosted_e2e.py's."""
    base = tmp_path_factory.mktemp("tour_gated")
    root = base / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("jobs", "cache"))
    secrets = base / "secrets.toml"
    secrets.write_text('[auth]\nredirect_uri = "http://127.0.0.1:9/oauth2callback"\ncookie_secret = "e2e-only"\n'
                       'client_id = "e2e"\nclient_secret = "e2e"\n'
                       'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n')
    server = StreamlitServer(root, extra_env={
        "STREAMLIT_SECRETS_FILES": str(secrets), "WORKBENCH_ADMINS": "ana@example.org",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "e2e-key-never-used"})
    yield server, root
    server.stop()
    close_stores()


def _ratings(root: Path, project: str = PROJECT) -> list:
    store = LabelStore(labels_url(root))
    try:
        with store.read() as conn:
            return conn.execute(
                select(ratings.c.rater, ratings.c.item_id, ratings.c.score, ratings.c.is_repeat, items.c.n_raters)
                .join(items, items.c.item_id == ratings.c.item_id)
                .where(items.c.project_id == _project_id(conn, project))).all()
    finally:
        store.dispose()


def _project_id(conn, name: str) -> int:
    return conn.execute(select(projects.c.project_id).where(projects.c.name == name)).scalar_one()


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
@pytest.mark.xdist_group("tour")
def test_newcomers_tour_of_every_page(chromium_browser, demo_copy, watch):
    server = StreamlitServer(demo_copy)
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = watch.attach(context.new_page())
    try:
        # Home: what is in the workspace, and a card per page
        page.goto(server.url)
        wait_ready(page, "Pages")
        main = page.get_by_test_id("stMain")
        main.locator("h3").filter(has_text="Labeling").first.wait_for(timeout=30_000)  # the last section
        page.wait_for_function(  # datasets, tasks, judgments, GT files, runs, labeling: each a table
            "() => document.querySelectorAll('[data-testid=\"stMain\"] [data-testid=\"stDataFrame\"]').length >= 6",
            timeout=30_000)
        watch.check(page, "01_home", "Method runs")
        for link in main.get_by_test_id("stPageLink").all():  # every title whole on its card, not "H…"
            assert link.evaluate("(e) => [...e.querySelectorAll('*')].every(x => x.scrollWidth <= x.clientWidth + 1)"), \
                link.inner_text()
        for label in ("Datasets", "Restaurants", "Reviews"):
            main.get_by_test_id("stMetric").filter(has_text=label).first.wait_for(timeout=30_000)
        assert "2,400" in main.get_by_test_id("stMetric").filter(has_text="Reviews").first.inner_text()
        for title in ("Data", "Ground truth", "Trace", "Runs", "Results", "Labeling", "Label review", "Analysis",
                      "Gold answers"):
            main.get_by_test_id("stPageLink").filter(has_text=title).first.wait_for(state="visible")

        # Home → Data: open a restaurant (the second row of the list)
        main.get_by_test_id("stPageLink").filter(has_text="Data").first.click()
        page.wait_for_url(re.compile(r"/data"), timeout=30_000)
        wait_ready(page, "Restaurants of demo")
        page.get_by_text("idx 0 ·").first.wait_for(timeout=30_000)
        heading = main.locator("h3").nth(1)  # under "Restaurants of demo": the open restaurant's name
        first = heading.inner_text()
        grid = page.get_by_test_id("stDataFrame").first
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 15, box["y"] + 35 + 35 + 35 // 2)  # header, first row: the second row's selector
        page.wait_for_url(re.compile(r"business_id="), timeout=30_000)
        page.wait_for_function(
            "(f) => document.querySelector('[data-testid=\"stMain\"]').querySelectorAll('h3')[1]?.innerText !== f",
            arg=first, timeout=30_000)
        opened = heading.inner_text()
        assert opened != first and opened in grid.locator("table").inner_text()  # the grid's accessible table
        watch.check(page, "02_data_restaurant", "Reviews 1–20 of 200")
        assert "reviews stored" in page.inner_text("body") and page.get_by_text("idx 1 ·").first.is_visible()

        # Ground truth: add K=75, select another restaurant
        page.goto(f"{server.url}/ground_truth")
        wait_ready(page, "Open the trace")
        select_k = page.get_by_test_id("stMultiSelect").first
        _add_chip(page, select_k, select_k.locator("input"), "75")
        page.keyboard.press("Escape")
        wait_ready(page, "K=75 ·")
        restaurant = page.get_by_test_id("stSelectbox").filter(has_text="Restaurant").first.locator("input")
        before = restaurant.input_value()
        restaurant.click()
        options = page.get_by_role("option")
        target = next(t for t in options.all_inner_texts() if t.strip() and t.strip() != before).strip()
        options.filter(has_text=target).first.click()
        wait_idle(page)
        assert restaurant.input_value() == target
        page.get_by_text("Verdict along K: ").first.wait_for()
        verdicts = page.get_by_text("Verdict along K: ").first.inner_text()
        assert "(75)" in verdicts and "(200)" in verdicts, verdicts
        watch.check(page, "03_ground_truth", "K=75 ·")
        grid_chart = page.get_by_test_id("stVegaLiteChart").first  # the restaurant × K grid
        legend = grid_chart.locator("g.role-legend text").filter(has_text="Critical Risk").first.bounding_box()
        column = grid_chart.locator("xpath=ancestor::div[@data-testid='stColumn'][1]").bounding_box()
        assert legend["x"] + legend["width"] <= column["x"] + column["width"] + 1, (legend, column)  # not cut off

        # GT → Trace: follow the K=200 link of that restaurant
        page.get_by_test_id("stPageLink").filter(has_text="K=200 · ").first.click()
        page.wait_for_url(re.compile(r"/trace\?.*k=200"), timeout=30_000)
        assert "business_id=" in page.url
        wait_ready(page, target)
        page.locator(".gt-tree .gt-node").first.wait_for(timeout=30_000)
        assert page.locator(".gt-tree .gt-node").count() > 5
        watch.check(page, "04_trace", target)

        # Runs: launch a run with the offline model and watch it to the end
        page.goto(f"{server.url}/runs")
        wait_ready(page, "Launch a run")
        pick(page, "Method", "direct")
        pick(page, "Model", "heuristic")
        page.get_by_test_id("stMetric").filter(has_text="LLM calls").first.wait_for(timeout=30_000)
        assert "offline model" in page.get_by_test_id("stMetric").filter(has_text="LLM calls").first.inner_text()
        assert "Samples to run" in page.inner_text("body")
        watch.check(page, "05_runs_form", "Launch a run")
        ws = Workspace(demo_copy)
        page.get_by_role("button", name="Launch run").click()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list_jobs(ws, "run"):
            time.sleep(0.1)
        run_id = list_jobs(ws, "run")[0]["args"]["config"]["run_id"]
        # the live panel shows the run ("starting…", then n/12 samples) until it ends; then the past-runs
        # table lists it as finished
        page.get_by_test_id("stProgress").filter(has_text=f"{run_id}: ").first.wait_for(timeout=60_000)
        watch.screenshot(page, "06_runs_in_progress")
        page.get_by_text("No run is in progress.").wait_for(timeout=120_000)
        page.wait_for_function("(id) => document.querySelector('[data-testid=\"stDataFrame\"] table')?.innerText"
                               ".includes(id)", arg=run_id, timeout=60_000)
        grid = page.get_by_test_id("stDataFrame").first.locator("table")
        row = next(r for r in grid.locator("tr").all_inner_texts() if run_id in r)
        assert "finished" in row and "heuristic" in row, row
        assert run_status(ws, run_id)["status"] == "finished" and run_status(ws, run_id)["done"] == 12
        main.locator("h3").filter(has_text="Past runs").first.wait_for(timeout=30_000)
        watch.check(page, "07_runs_done", None)

        # Results: that run (the link of the past-runs table) and its drilldown
        page.goto(f"{server.url}/results?run={run_id}")
        wait_ready(page, "Samples ranked by")
        body = page.inner_text("body")
        assert "method direct · model heuristic" in body and "95 % CI" in body and "K=25" in body
        assert page.get_by_test_id("stSelectbox").filter(has_text="Run (newest first)").locator("input").input_value() == run_id
        watch.check(page, "08_results", "Samples ranked by")
        page.get_by_role("tab", name="Restaurants").click()
        wait_ready(page, "Evidence the method claimed")
        assert page.get_by_role("link", name="Open this restaurant in Trace").first.is_visible()
        watch.check(page, "09_results_drilldown", "Evidence the method claimed")

        # Labeling: sign in as the demo rater and rate one item
        page.goto(f"{server.url}/labeling?project={PROJECT}")
        wait_ready(page, "Rater code")
        page.get_by_label("Rater code").fill("demo_chloe")
        page.get_by_role("button", name="Start rating").click()
        wait_ready(page, "Rating as demo_chloe")
        body = page.inner_text("body")
        assert "Rating as demo_chloe (rater)" in body and "Guidelines" in body and "Response" in body, body[:2000]
        assert page.get_by_test_id("stSelectbox").filter(has_text="Project").locator("input").input_value() == PROJECT
        assert "Workspace folder" not in body  # raters do not see the workspace controls
        title = page.locator("h5").first.inner_text()
        before = len(_ratings(demo_copy))
        rate(page, 6)
        watch.check(page, "10_labeling", "Your rating: +0.30")
        page.get_by_role("button", name="Submit").click()
        page.wait_for_function("(t) => document.querySelector('h5')?.innerText !== t", arg=title, timeout=30_000)
        wait_idle(page)
        mine = [r for r in _ratings(demo_copy) if r.rater == "demo_chloe"]
        assert len(_ratings(demo_copy)) == before + 1 and any(r.score == pytest.approx(0.30) for r in mine)

        # Label review as the admin
        page.goto(f"{server.url}/label-review?rater=demo_ana&project={PROJECT}")
        wait_ready(page, "Signed in as")
        assert "demo_ana** (admin)" in page.content() or "demo_ana (admin)" in page.inner_text("body")
        watch.check(page, "11_label_review_coverage", "Signed in as")
        page.get_by_test_id("stButtonGroup").get_by_text("Disagreements", exact=True).click()
        watch.check(page, "12_label_review_disagreements", "Click a row")
        page.get_by_test_id("stButtonGroup").get_by_text("Agreement", exact=True).click()
        wait_ready(page, "Signed in as")
        watch.check(page, "13_label_review_agreement", None)
        page.get_by_test_id("stButtonGroup").get_by_text("Raters", exact=True).click()
        watch.check(page, "14_label_review_raters", "Grant a role")

        # Analysis: the demo study
        page.goto(f"{server.url}/analysis")
        wait_ready(page, "Largest disagreements")
        page.wait_for_function("() => document.querySelectorAll('.vega-embed').length >= 2", timeout=30_000)
        assert "Uplift against neutral" in page.inner_text("body")
        watch.check(page, "15_analysis", "Scorer against the human audit")

        # Gold answers: score the set's other offline answers with another accuracy method, save the report
        page.goto(f"{server.url}/gold")
        wait_ready(page, "By domain")
        pick(page, "Answers", "Answers: offline-retrieval-top1")
        pick(page, "Accuracy method", "jaccard")
        wait_ready(page, "accuracy by jaccard")
        page.get_by_test_id("stMetric").filter(has_text="Pass rate").first.wait_for(timeout=30_000)
        caption = page.get_by_text("accuracy by jaccard").first.inner_text()
        assert "answers: offline-retrieval-top1" in caption and "samples from" in caption, caption
        page.locator("[data-testid='stVegaLiteChart'] svg.marks").nth(1).wait_for(timeout=30_000)  # by task, by domain
        watch.check(page, "16_gold", "By domain")
        page.get_by_role("tab", name="Save and send").click()
        wait_ready(page, "Save report")
        before = len(gold_store.history(ws, DEMO_SET))
        page.get_by_role("button", name="Save report").click()
        watch.check(page, "17_gold_saved", "Saved ")
        assert len(gold_store.history(ws, DEMO_SET)) == before + 1
    except BaseException:
        watch.screenshot(page, "tour_FAILED")  # what the page showed when the step failed
        raise
    finally:
        print("tour seconds per page:", watch.seconds)
        context.close()
        server.stop()
        close_stores()


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
@pytest.mark.xdist_group("tour_gated")
def test_two_raters_labeling_at_once(chromium_browser, gated, watch):
    """Two browser contexts rate the demo project at the same time; the store keeps every rating, never
    gives one rater an item twice, and fills the most-rated items first without passing the target."""
    server, demo_copy = gated
    store = LabelStore(labels_url(demo_copy))
    with store.read() as conn:
        pid = _project_id(conn, PROJECT)
        n_before = dict(conn.execute(select(items.c.item_id, items.c.n_raters).where(items.c.project_id == pid)).all())
        (target,) = conn.execute(select(projects.c.target_raters).where(projects.c.project_id == pid)).one()
    store.dispose()
    assert sum(n == target - 1 for n in n_before.values()) >= 6  # enough items one rating short of the target
    old = len(_ratings(demo_copy))
    contexts = [chromium_browser.new_context(viewport={"width": 1300, "height": 1000}) for _ in range(2)]
    codes, steps = ("e2e_rater_a", "e2e_rater_b"), (2, -2)
    try:
        pages = [watch.attach(c.new_page(), who=code) for c, code in zip(contexts, codes, strict=True)]
        for page, code in zip(pages, codes, strict=True):
            sign_in_rater(page, server.url, code, f"?project={PROJECT}")
        for round_ in range(3):
            for page, step in zip(pages, steps, strict=True):
                rate(page, step * (round_ + 1))
            for page in pages:  # both submissions in flight together
                page.get_by_role("button", name="Submit").click(no_wait_after=True)
            for page, code in zip(pages, codes, strict=True):
                wait_ready(page, f"You: {round_ + 1} of ")
                assert f"Rating as {code}" in page.inner_text("body")
        for page, code in zip(pages, codes, strict=True):
            watch.check(page, f"20_two_raters_{code}", "You: 3 of ")
    finally:
        print("two raters seconds:", watch.seconds)
        for c in contexts:
            c.close()
    rows = _ratings(demo_copy)
    assert len(rows) == old + 6  # no rating lost
    for code, step in zip(codes, steps, strict=True):
        mine = [r for r in rows if r.rater == code]
        assert sorted(r.score for r in mine) == pytest.approx(sorted(0.05 * step * k for k in (1, 2, 3)))
        assert not any(r.is_repeat for r in mine)
        assert len({r.item_id for r in mine}) == 3  # never the same item twice to one rater
    new_items = [r.item_id for r in rows if r.rater in codes]
    # balanced: the items one short of the target are filled first, and an item's last slot went to one rater only
    assert len(set(new_items)) == 6 and all(n_before[i] == target - 1 for i in new_items)
    store = LabelStore(labels_url(demo_copy))
    with store.read() as conn:
        after = dict(conn.execute(select(items.c.item_id, items.c.n_raters).where(items.c.project_id == pid)).all())
    assert max(after.values()) <= target and all(after[i] == target for i in new_items)
    assert integrity_problems(store) == []
    store.dispose()


@pytest.mark.xdist_group("tour_gated")
def test_role_gates(chromium_browser, gated, watch):
    """As on main: a rater cannot open Label review, an adjudicator cannot grant roles, an admin can; with
    sign-in configured a paid judge needs a signed-in admin (the demo and team modes: test_hosted_e2e.py)."""
    server, _ = gated
    contexts = [chromium_browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    rater, adjudicator, admin = (watch.attach(c.new_page(), who) for c, who in
                                 zip(contexts, ("rater", "adjudicator", "admin"), strict=True))
    try:
        rater.goto(f"{server.url}/label-review?rater=demo_chloe")
        watch.check(rater, "30_gate_rater_label_review", "This page is for adjudicators and admins")
        body = rater.inner_text("body")
        assert "demo_chloe has the role rater" in body
        assert not rater.get_by_test_id("stButtonGroup").count() and "Grant a role" not in body
        assert "Workspace folder" not in body

        adjudicator.goto(f"{server.url}/label-review?rater=demo_ben")
        wait_ready(adjudicator, "Signed in as")
        adjudicator.get_by_test_id("stButtonGroup").get_by_text("Raters", exact=True).click()
        watch.check(adjudicator, "31_gate_adjudicator_raters", "Only admins grant roles")
        assert "Grant a role" not in adjudicator.inner_text("body")

        admin.goto(f"{server.url}/label-review?rater=demo_ana")
        wait_ready(admin, "Signed in as")
        admin.get_by_test_id("stButtonGroup").get_by_text("Raters", exact=True).click()
        watch.check(admin, "32_gate_admin_raters", "Grant a role")
        assert "Retire a mistyped code" in admin.inner_text("body")

        # sign-in configured: a paid judge needs a signed-in (st.login) admin; a rater-code admin is refused too
        admin.goto(f"{server.url}/ground_truth")
        wait_ready(admin, "Open the trace")
        admin.get_by_role("tab", name="Judging").click()
        admin.get_by_text("Use the OpenAI-compatible judge").first.click()
        wait_ready(admin, "Sign in as an admin to run a paid judge")
        assert admin.get_by_role("button", name="Judge with the OpenAI judge").is_disabled()
        watch.check(admin, "33_gate_paid_judge", "Sign in as an admin to run a paid judge")

    finally:
        print("gate seconds per page:", watch.seconds)
        for c in contexts:
            c.close()
