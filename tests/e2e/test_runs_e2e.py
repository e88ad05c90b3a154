"""Runs page in a real Chromium: launch a small run, close the tab, reopen: the run went on and finished."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from core.jobs import list_jobs
from core.runs import run_status
from core.workspace import Workspace
from tests.e2e.conftest import StreamlitServer, wait_ready
from tests.helpers.llm_server import RUN_KEY_PATTERN, LLMServer, offline_responder

pytestmark = pytest.mark.e2e
SHOTS = Path(os.environ.get("WORKBENCH_SCREENSHOTS", "/tmp/runs-shots"))


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_run_survives_closing_the_tab(chromium_browser, small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("jobs", "cache"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    with LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN) as llm:
        llm.delay_all = 0.4  # 12 restaurants one at a time: about 5 s, long enough to close the tab mid-run
        server = StreamlitServer(root, extra_env={"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test-key",
                                                  "WORKBENCH_MODELS": "test-model"})
        try:
            page = chromium_browser.new_page(viewport={"width": 1400, "height": 1300})
            page.goto(f"{server.url}/runs")
            wait_ready(page, "Launch a run", timeout=60_000)
            for label, value in (("Method", "direct"), ("Model", "test-model")):
                box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
                box.locator("input").click()
                page.keyboard.type(value)
                page.keyboard.press("Enter")
                wait_ready(page, "Launch a run")
                assert box.locator("input").input_value() == value
            concurrency = page.get_by_label("Concurrency")
            concurrency.fill("1")
            concurrency.press("Enter")
            wait_ready(page, "Calls cached / new")
            page.screenshot(path=str(SHOTS / "runs_form.png"), full_page=True)
            page.get_by_role("button", name="Launch run").click()
            ws = Workspace(root)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not list_jobs(ws, "run"):
                time.sleep(0.1)
            run_id = list_jobs(ws, "run")[0]["args"]["config"]["run_id"]
            while time.monotonic() < deadline and int(run_status(ws, run_id).get("done") or 0) < 2:
                time.sleep(0.1)
            page.get_by_text(re.compile(rf"{run_id}: [1-9]\d*/12 samples")).first.wait_for(timeout=30_000)
            page.screenshot(path=str(SHOTS / "runs_in_progress.png"), full_page=True)
            page.close()  # the tab goes away; the run must not
            assert run_status(ws, run_id)["status"] == "running"
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and run_status(ws, run_id)["status"] == "running":
                time.sleep(0.2)
            page = chromium_browser.new_page(viewport={"width": 1400, "height": 1300})
            page.goto(f"{server.url}/runs")
            wait_ready(page, "Past runs", timeout=60_000)
            page.get_by_text("No run is in progress.").wait_for(timeout=30_000)
            page.get_by_test_id("stDataFrame").first.wait_for(timeout=30_000)
            wait_ready(page, "Past runs", timeout=60_000)
            page.screenshot(path=str(SHOTS / "runs_finished.png"), full_page=True)
            assert run_status(ws, run_id)["status"] == "finished"
            assert run_status(ws, run_id)["done"] == 12
            grid = page.get_by_test_id("stDataFrame")
            grid.wait_for(timeout=30_000)
            assert llm.chat_requests == 12  # every restaurant asked once, though nobody watched
            page.close()
        finally:
            server.stop()
