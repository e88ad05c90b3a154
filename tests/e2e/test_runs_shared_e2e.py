"""Issue 26, shared servers, in a real Chromium against ``streamlit run`` in the demo mode: two
visitors (browser contexts) where B cannot cancel A's run and does not see it, a server-wide cap
on launches that new tabs do not reset, and a refused download that says so at once."""

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
