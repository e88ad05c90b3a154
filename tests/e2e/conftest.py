"""Browser tests: Playwright drives Debian's Chromium against a real ``streamlit run``.

Never run ``playwright install``: the browser is /usr/bin/chromium from Debian (``.ci/run``
installs it). Where it is missing these tests skip, which strict mode turns into failures.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-quic", "--disable-component-update", "--disable-sync",
]

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_health(url: str, *, timeout: float, interval: float, alive: Callable[[], None] | None = None) -> bool:
    """Poll ``url``'s ``/_stcore/health`` until it answers 200 (True) or ``timeout`` seconds pass
    (False); ``alive`` is called before each try and raises when the server process has died."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if alive is not None:
            alive()
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(interval)
    return False


def sign_in_rater(page, url: str, code: str, query: str = "") -> None:
    """Open the Labeling page (``query``: e.g. ``?project=P``) and sign in with a rater code."""
    page.goto(f"{url}/labeling{query}")
    wait_ready(page, "Rater code")
    page.get_by_label("Rater code").fill(code)
    page.get_by_role("button", name="Start rating").click()
    wait_ready(page, f"Rating as {code}")


class StreamlitServer:
    """A ``streamlit run app.py`` process on a free loopback port, on one workspace."""

    live: set[StreamlitServer] = set()  # running ones: a failed test's report shows their logs' ends

    def __init__(self, workspace: Path, extra_env: dict[str, str] | None = None, log_dir: Path | None = None) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "WORKBENCH_WORKSPACE": str(workspace), **(extra_env or {})}
        self.log = open((log_dir or workspace.parent) / f"streamlit-{self.port}.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true",
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        if not wait_for_health(self.url, timeout=60, interval=0.2):
            self.stop()
            raise RuntimeError(f"streamlit did not start; see {self.log.name}")
        StreamlitServer.live.add(self)

    def tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines the server printed."""
        self.log.flush()
        return "\n".join(Path(self.log.name).read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        StreamlitServer.live.discard(self)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test's report carries the page's address and the end of every live server's log."""
    report = yield
    if report.failed and call.when == "call":
        page = item.funcargs.get("page")
        if page is not None and not page.is_closed():
            report.sections.append(("page", f"url: {page.url}"))
        for server in sorted(StreamlitServer.live, key=lambda s: s.port):
            report.sections.append((f"streamlit {server.url} (last lines)", server.tail()))
    return report


@pytest.fixture(scope="session")
def chromium_browser():
    """A headless Debian Chromium driven by Playwright (skips when either is missing)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: apt-get install -y chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def e2e_workspace(small_demo) -> Path:
    """The small demo workspace (tests/conftest.py) served to the browser tests (read-only)."""
    return small_demo


@pytest.fixture(scope="session")
def app_server(e2e_workspace) -> Iterator[StreamlitServer]:
    server = StreamlitServer(e2e_workspace)
    yield server
    server.stop()


def wait_ready(page, text: str, timeout: float = 60_000) -> None:
    """Wait until ``text`` is shown and Streamlit has finished running the script."""
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout)
    page.wait_for_timeout(300)  # the "Running…" widget shows a moment after a rerun starts
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout
    )


@pytest.fixture()
def page(chromium_browser):
    """A page in a fresh browser context: its own cookies, so a new session that is not signed in."""
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1100})
    context.set_default_timeout(60_000)  # a fresh server's first page opens on a loaded CI machine
    page = context.new_page()
    yield page
    context.close()
