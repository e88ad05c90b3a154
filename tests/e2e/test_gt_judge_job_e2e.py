"""Ground truth page in a real Chromium: judge with the OpenAI-compatible judge as a background job, close the
tab, open the page again in a new tab: the job went on, its progress shows, then its completion."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from core.jobs import list_jobs
from core.judgments.judges.job import JOB_KIND
from core.workspace import Workspace
from tests.e2e.conftest import StreamlitServer, wait_ready
from tests.helpers.llm_server import LLMServer, heuristic_responder

pytestmark = pytest.mark.e2e
SHOTS = Path(os.environ.get("WORKBENCH_SCREENSHOTS", "/tmp/gt-judge-job-shots"))
VIEWPORT = {"width": 1400, "height": 1100}


def _judging_tab(page) -> None:
    page.get_by_role("tab", name="Judging").click()
    wait_ready(page, "Keyword-matched", timeout=60_000)


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_judging_survives_closing_the_tab(chromium_browser, small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("jobs", "cache", "runs"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    ws = Workspace(root)
    with LLMServer(heuristic_responder) as llm:
        llm.delay_all = 0.25  # 446 matched reviews, 4 at a time: about 30 s, time to reopen the page mid-run
        server = StreamlitServer(root, extra_env={"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test-key",
                                                  "WORKBENCH_JUDGE_MODEL": "gpt-4o-mini"})
        try:
            page = chromium_browser.new_page(viewport=VIEWPORT)
            page.goto(f"{server.url}/ground_truth")
            wait_ready(page, "Restaurant × K", timeout=60_000)
            _judging_tab(page)
            page.get_by_text("Use the OpenAI-compatible judge").click()
            page.get_by_role("button", name="Judge with the OpenAI judge…").click()
            wait_ready(page, "Confirm a paid run")
            assert llm.chat_requests == 0  # nothing sent before the confirmation
            page.get_by_role("button", name="Confirm and judge").click()
            page.get_by_text(re.compile(r"Judging job demo/G1a · OpenAI-compatible judge: (starting|running)")).first.wait_for(
                timeout=60_000)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and llm.chat_requests < 8:
                time.sleep(0.1)
            job = list_jobs(ws, JOB_KIND)[0]
            page.close()  # the tab goes away; the judging must not
            asked = llm.chat_requests
            time.sleep(1.5)
            assert llm.chat_requests > asked  # still judging with nobody watching
            page = chromium_browser.new_page(viewport=VIEWPORT)
            page.goto(f"{server.url}/ground_truth")
            wait_ready(page, "Restaurant × K", timeout=60_000)
            _judging_tab(page)
            running = page.get_by_text(re.compile(r"Judging job demo/G1a · OpenAI-compatible judge: running — [1-9][\d,]*/446 reviews"))
            running.first.wait_for(timeout=30_000)
            page.screenshot(path=str(SHOTS / "gt_judge_job_running.png"), full_page=True)
            assert list_jobs(ws, JOB_KIND)[0]["status"] == "running"  # the screenshot shows the job mid-run
            page.get_by_text(re.compile(r"gpt-4o-mini: judged [\d,]+ reviews")).first.wait_for(timeout=120_000)
            wait_ready(page, "job finished")
            page.screenshot(path=str(SHOTS / "gt_judge_job_finished.png"), full_page=True)
            record = list_jobs(ws, JOB_KIND)[0]
            assert record["job_id"] == job["job_id"] and record["status"] == "finished"
            assert record["result"]["judged"] == 446 and llm.chat_requests == 446  # each review asked once
            assert not page.get_by_role("button", name="Cancel").count()
            page.close()
        finally:
            server.stop()
