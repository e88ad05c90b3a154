"""Issue 8 acceptance: the real-data path in a real browser. Import a SCALE file and real judgments
with the installed `workbench` command from another folder into a fresh workspace, run `make run`'s own startup line on it,
serve it, see it on Home, and find exactly the files the user created (no demo, nothing beside it)."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.test_workspace_path import install_workbench
from tests.e2e.conftest import ROOT, StreamlitServer, wait_ready

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

    # `make run WORKBENCH_WORKSPACE=…`: its startup line (the demo gating) runs on the user's folder
    dry = subprocess.run(["make", "-s", "-n", "-C", str(ROOT), "run", f"WORKBENCH_WORKSPACE={ws}"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    startup = shlex.split(next(line for line in dry if " -m core " in line))
    done = subprocess.run([sys.executable, *startup[1:]], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and "as it is" in done.stdout, done.stderr
    serve = next(line for line in dry if "streamlit run" in line)
    assert f'WORKBENCH_WORKSPACE="{ws}"' in serve

    server = StreamlitServer(ws, log_dir=logs)
    try:
        context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(server.url)
        wait_ready(page, "Datasets")
        for label in ("Datasets", "Reviews"):  # the metrics are drawn after the heading: wait for them
            page.locator('[data-testid="stMetric"]', has_text=label).first.wait_for(timeout=60_000)
        body = page.inner_text("body")
        assert "not a workspace" not in body and "make run" not in body
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
    finally:
        server.stop()

    # exactly what the user created: no demo dataset, no demo raters or label store, nothing beside it
    assert snapshot(ws) == created
    assert sorted(p.name for p in parent.iterdir()) == ["my-bench"]
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    assert not (ws / "labels.sqlite").exists() and not (ws / "sources").exists()
    assert not (ws / "datasets" / "demo").exists()
