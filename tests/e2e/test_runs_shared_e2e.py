"""Issue 26, shared servers, in a real Chromium against ``streamlit run`` in the demo mode: two
visitors (browser contexts) where B cannot cancel A's run and does not see it, a server-wide cap
on launches that new tabs do not reset, a refused download that says so at once, Results listing
the shipped runs and one's own only, and a reload that keeps one's runs (the visitor cookie)."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.files import write_json_atomic
from core.jobs import list_jobs
from core.workspace import Workspace
from tests.e2e.conftest import StreamlitServer, wait_ready

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("runs-shared")]
SHOTS = Path(os.environ.get("WORKBENCH_SCREENSHOTS", "/tmp/hosted-shots"))


@pytest.fixture(scope="module")
def shared_demo(small_demo, tmp_path_factory) -> Iterator[tuple[StreamlitServer, Path]]:
    root = tmp_path_factory.mktemp("runs-shared") / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    server = StreamlitServer(root, extra_env={"WORKBENCH_MODE": "demo", "WORKBENCH_RATE_LIMIT_LAUNCH": "5/60",
                                              "WORKBENCH_RATE_LIMIT_LAUNCH_SERVER": "2/600",
                                              "WORKBENCH_RATE_LIMIT_DOWNLOAD": "1/600"})
    yield server, root
    server.stop()


def _visitor(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    context.set_default_timeout(60_000)
    return context, context.new_page()


def _launch(page, url: str) -> None:
    page.goto(f"{url}/runs")
    wait_ready(page, "Launch a run", timeout=60_000)
    page.get_by_role("button", name="Launch run").click()
    page.wait_for_timeout(300)


def _wait_jobs(root: Path, n: int) -> list[dict]:
    deadline = time.monotonic() + 90  # a loaded CI machine
    while time.monotonic() < deadline and len(list_jobs(Workspace(root), "run")) < n:
        time.sleep(0.1)
    return list_jobs(Workspace(root), "run")


def _going(root: Path, owner: str) -> None:
    """A run of ``owner`` going (this test's pid stands for its worker), as a long run would be."""
    ws = Workspace(root)
    write_json_atomic(ws.jobs_dir / "job-long.json", {
        "job_id": "job-long", "kind": "run", "label": "", "args": {"config": {"run_id": "long-run"}, "owner": owner},
        "status": "running", "pid": os.getpid(), "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00", "progress": {}, "result": None, "error": None})
    (ws.runs_dir / "long-run").mkdir(parents=True, exist_ok=True)
    write_json_atomic(ws.runs_dir / "long-run" / "status.json", {"run_id": "long-run", "status": "running",
                                                                 "done": 57, "total": 100, "pid": os.getpid()})


def test_visitor_b_cannot_cancel_a_and_the_server_cap_holds_across_new_tabs(shared_demo, chromium_browser):
    server, root = shared_demo
    ctx_a, a = _visitor(chromium_browser)
    _launch(a, server.url)  # server-wide launch 1 of 2
    owner_a = _wait_jobs(root, 1)[0]["args"]["owner"]
    assert owner_a.startswith("visitor:")
    _going(root, owner_a)  # A's long run, going
    ctx_b, b = _visitor(chromium_browser)
    b.goto(f"{server.url}/runs")
    b.get_by_text("long-run: 57/100 samples").wait_for()
    cancels_b = b.get_by_role("button", name="Cancel")  # A's launched run may still be going too: both A's
    assert cancels_b.count() >= 1 and all(cancels_b.nth(i).is_disabled() for i in range(cancels_b.count()))
    b.get_by_text("launched by another visitor: only they (or an admin) may cancel it").first.wait_for()
    cancels_b.last.click(force=True)  # a click on the disabled button does nothing
    b.wait_for_timeout(500)
    assert not (Workspace(root).jobs_dir / "job-long.cancel").exists()
    SHOTS.mkdir(parents=True, exist_ok=True)
    b.screenshot(path=str(SHOTS / "e2e-runs-b-cannot-cancel-a.png"), full_page=True)
    a.get_by_text("long-run: 57/100 samples").wait_for()  # A's own tab (its session): the live rows refresh
    cancels_a = a.get_by_role("button", name="Cancel")
    assert all(cancels_a.nth(i).is_enabled() for i in range(cancels_a.count()))  # the owner may
    b.get_by_role("button", name="Launch run").click()  # server-wide launch 2 of 2
    _wait_jobs(root, 3)
    ctx_c, c = _visitor(chromium_browser)  # a new tab, a new session: its own limit starts again, the server's not
    _launch(c, server.url)
    c.get_by_text(re.compile(r"Too many run launches on this server: try again in \d+ s\.")).wait_for()
    c.screenshot(path=str(SHOTS / "e2e-runs-server-cap-new-tab.png"), full_page=True)
    ctx_c.close()
    assert len(list_jobs(Workspace(root), "run")) == 3
    ctx_a.close()
    ctx_b.close()


def test_a_refused_download_says_so_at_once(shared_demo, page):
    server, _ = shared_demo
    page.goto(f"{server.url}/ground_truth")
    wait_ready(page, "Verdicts by K", timeout=60_000)
    page.get_by_role("tab", name="Export").click()
    button = page.get_by_test_id("stDownloadButton").get_by_role("button")
    with page.expect_download(timeout=30_000):
        button.click()
    button.click()  # over the limit: nothing built; the page reruns and says why, with no other click
    page.get_by_text(re.compile(r"Too many requests \(download\) in this session: try again in \d+ s\.")).first.wait_for(
        timeout=15_000)
    assert button.is_disabled()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "e2e-demo-download-refused-at-once.png"), full_page=True)


# -- the demo's runs are each visitor's: Results lists the shipped runs and one's own; a reload keeps them --
@pytest.fixture(scope="module")
def shipped_demo(small_demo, tmp_path_factory) -> Iterator[tuple[StreamlitServer, Path]]:
    root = tmp_path_factory.mktemp("runs-own") / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("jobs", "cache"))  # with its shipped runs
    server = StreamlitServer(root, extra_env={"WORKBENCH_MODE": "demo"})
    yield server, root
    server.stop()


def _token(context) -> str:
    """The visitor token this browser's cookie holds, once the page has written it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [c["value"] for c in context.cookies() if c["name"] == "workbench_visitor"]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no visitor cookie: {context.cookies()}")


def _finished(root: Path, run_id: str, owner: str) -> None:
    """A finished run of ``owner``: a shipped run's results under a new id, with its job record."""
    ws = Workspace(root)
    shipped = sorted(ws.runs_dir.glob("*/results.json"))[0]
    (ws.runs_dir / run_id).mkdir(parents=True)
    (ws.runs_dir / run_id / "results.json").write_text(shipped.read_text().replace(
        f'"{shipped.parent.name}"', f'"{run_id}"'), encoding="utf-8")
    write_json_atomic(ws.jobs_dir / f"job-{run_id}.json", {
        "job_id": f"job-{run_id}", "kind": "run", "label": "", "args": {"config": {"run_id": run_id}, "owner": owner},
        "status": "finished", "pid": None, "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2099-01-01T00:00:00+00:00", "progress": {}, "result": None, "error": None})


def _run_options(page, url: str) -> set[str]:
    page.goto(f"{url}/results")
    wait_ready(page, "Run (newest first)", timeout=60_000)
    page.get_by_test_id("stMain").get_by_test_id("stSelectbox").first.click()  # not the sidebar's Dataset
    options = page.get_by_role("option")
    options.first.wait_for()
    return {options.nth(i).inner_text().strip() for i in range(options.count())}


def test_results_lists_shipped_and_own_runs_and_a_reload_keeps_ones_runs(shipped_demo, chromium_browser):
    server, root = shipped_demo
    shipped = {p.parent.name for p in (root / "runs").glob("*/results.json")}
    ctx_a, a = _visitor(chromium_browser)
    a.goto(f"{server.url}/runs")
    wait_ready(a, "Launch a run", timeout=60_000)
    token_a = _token(ctx_a)
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", token_a) and token_a not in a.inner_text("body")  # never shown
    ws = Workspace(root)
    ws.jobs_dir.mkdir(parents=True, exist_ok=True)
    _finished(root, "run-of-a", f"visitor:{token_a}")
    write_json_atomic(ws.jobs_dir / "job-long.json", {
        "job_id": "job-long", "kind": "run", "label": "", "args": {"config": {"run_id": "long-run"},
                                                                   "owner": f"visitor:{token_a}"},
        "status": "running", "pid": os.getpid(), "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00", "progress": {}, "result": None, "error": None})
    (ws.runs_dir / "long-run").mkdir()
    write_json_atomic(ws.runs_dir / "long-run" / "status.json", {"run_id": "long-run", "status": "running",
                                                                 "done": 57, "total": 100, "pid": os.getpid()})
    a.reload()  # a new session of the same browser: still A, who may cancel their run
    a.get_by_text("long-run: 57/100 samples").wait_for()
    cancel = a.get_by_role("button", name="Cancel")
    assert cancel.count() == 1 and cancel.first.is_enabled()
    assert _run_options(a, server.url) == shipped | {"run-of-a"}

    ctx_b, b = _visitor(chromium_browser)
    b.goto(f"{server.url}/results")
    wait_ready(b, "Run (newest first)", timeout=60_000)
    token_b = _token(ctx_b)
    assert token_b != token_a
    _finished(root, "run-of-b", f"visitor:{token_b}")
    assert _run_options(b, server.url) == shipped | {"run-of-b"}  # not A's
    SHOTS.mkdir(parents=True, exist_ok=True)
    b.screenshot(path=str(SHOTS / "e2e-results-visitor-b-own-and-shipped.png"), full_page=True)
    b.keyboard.press("Escape")
    b.get_by_text("Compare runs").click()
    wait_ready(b, "Runs to compare", timeout=60_000)
    b.get_by_test_id("stMultiSelect").click()
    b.get_by_role("option").first.wait_for()
    listed = {b.get_by_role("option").nth(i).inner_text().strip() for i in range(b.get_by_role("option").count())}
    assert "run-of-a" not in listed and "run-of-a" not in b.inner_text("body"), listed  # Compare runs: not A's either
    ctx_a.close()
    ctx_b.close()
