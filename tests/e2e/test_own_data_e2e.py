"""Issue 8 acceptance: the real-data path in a real browser. Import a SCALE file and real judgments
with the installed `workbench` command from another folder into a fresh workspace, serve it with
`WORKBENCH_WORKSPACE=… PORT=… make run` (the repository's .venv, which `make test` creates, is reused),
see it on Home, and find exactly the files the user created (no demo, nothing beside it); the server's
process group is ended at the end."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, _free_port, wait_for_health, wait_ready
from tests.helpers.install import install_workbench

pytestmark = [pytest.mark.e2e, pytest.mark.fixtures]


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): "<dir>" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))}


def cli(workbench: Path, args: list[str], cwd: Path) -> str:
    """The installed `workbench` command run from ``cwd`` (not the repository), as a user would."""
    env = {k: v for k, v in os.environ.items() if k not in ("WORKBENCH_WORKSPACE", "PYTHONPATH")}
    done = subprocess.run([str(workbench), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout


class MakeRun:
    """``make run`` in its own process group (make, then streamlit under it), on a free port."""

    def __init__(self, workspace: Path, log_dir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"make-run-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "PYTHONPATH")}
        env.update(WORKBENCH_WORKSPACE=str(workspace), PORT=str(self.port), ADDRESS="127.0.0.1")
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(["make", "-s", "-C", str(ROOT), "run"], env=env, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_healthy(self, timeout: float = 180) -> None:
        def alive() -> None:
            if self.proc.poll() is not None:
                raise RuntimeError(f"make run exited with {self.proc.returncode}:\n{self.log_text()[-3000:]}")

        if not wait_for_health(self.url, timeout=timeout, interval=0.3, alive=alive):
            raise RuntimeError(f"make run did not serve within {timeout} s:\n{self.log_text()[-3000:]}")

    def stop(self) -> None:
        """End the whole process group (make and the streamlit it started), SIGKILL after 15 s."""
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            deadline = time.time() + wait
            while time.time() < deadline and not self.group_gone():
                time.sleep(0.2)
            if self.group_gone():
                break
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def group_gone(self) -> bool:
        self.proc.poll()  # reap make itself, so only live members count
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            return True
        return False


@contextlib.contextmanager
def make_run(workspace: Path, log_dir: Path) -> Iterator[MakeRun]:
    server = MakeRun(workspace, log_dir)
    try:
        server.wait_healthy()
        yield server
    finally:
        server.stop()


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_own_data_path_in_the_browser(chromium_browser, fixtures_dir, tmp_path):
    home, logs = tmp_path / "home", tmp_path / "logs"
    elsewhere, parent = home / "elsewhere", home / "projects"
    for folder in (elsewhere, parent, logs):
        folder.mkdir(parents=True)
    ws = parent / "my-bench"
    workbench = install_workbench(tmp_path / "venv")  # what `make run` installs into .venv
    out = cli(workbench, ["--workspace", str(ws), "datasets", "import", str(fixtures_dir / "xnot/dataset_K25_subset.jsonl"),
               "--name", "k25"], elsewhere)
    assert "imported k25: 6 restaurants, 150 reviews" in out
    out = cli(workbench, ["--workspace", str(ws), "judgments", "import",
               str(fixtures_dir / "xnot/semantic_gt/task_G1a/judgments.json")], elsewhere)
    assert "matched 25 of 2,173 judgments" in out and "k25/G1a" in out
    created = snapshot(ws)
    assert {p for p in created if "/" not in p} == {"workspace.json", "datasets", "judgments"}

    # `WORKBENCH_WORKSPACE=… PORT=… make run`, as the README says: the repository's .venv (made by
    # `make test`/`make install`) is reused; the demo step leaves the user's folder as it is
    with make_run(ws, logs) as server:
        startup = server.log_text()
        assert "as it is" in startup, startup
        assert f"Scale Workbench: http://127.0.0.1:{server.port}  (workspace: {ws})" in startup, startup
        context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(server.url)
        wait_ready(page, "Datasets")
        for label in ("Datasets", "Reviews"):  # the metrics are drawn after the heading: wait for them
            page.locator('[data-testid="stMetric"]', has_text=label).first.wait_for(timeout=60_000)
        body = page.inner_text("body")
        assert "not a workspace" not in body and "make run" not in body
        assert str(ws) in body  # Home names the workspace it serves
        metrics = page.locator('[data-testid="stMetric"]').all_inner_texts()
        assert any("Datasets" in m and "1" in m for m in metrics)
        assert any("Reviews" in m and "150" in m for m in metrics)
        picker = page.locator('[data-testid="stSidebar"] input[aria-label="Dataset"]')
        assert picker.input_value() == "k25"  # the sidebar's dataset picker
        page.goto(f"{server.url}/labeling")
        wait_ready(page, "Labeling")
        page.goto(f"{server.url}/data")
        wait_ready(page, "Data")
        context.close()
    assert server.group_gone(), "make run left processes behind"

    # exactly what the user created: no demo dataset, no demo raters or label store, nothing beside it
    assert snapshot(ws) == created
    assert sorted(p.name for p in parent.iterdir()) == ["my-bench"]
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    assert not (ws / "labels.sqlite").exists() and not (ws / "sources").exists()
    assert not (ws / "datasets" / "demo").exists()
