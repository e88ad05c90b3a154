"""A release opened in a real Chromium from ``file://``: every request outside its folder refused (none is
made), its Altair charts drawn with the Vega it carries, every run named with the ordinal AUPRC
``runs show`` prints (``release verify`` on a release of the same demo: tests/core/release)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


@pytest.fixture(scope="module")
def release_out(small_demo, tmp_path_factory) -> Path:
    """``release --out DIR`` of the small demo, by the command line."""
    out = tmp_path_factory.mktemp("release-e2e") / "rel"
    made = subprocess.run([sys.executable, "-m", "core", "--workspace", str(small_demo), "release", "--out", str(out)],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    return out


def _auprc_as_runs_show_prints(ws: Path, run_id: str, capsys) -> str:
    capsys.readouterr()
    assert main(["--workspace", str(ws), "runs", "show", run_id]) == 0
    return re.search(r"ordinal AUPRC (\S+)", capsys.readouterr().out).group(1)


def test_release_opens_from_file_without_a_request_outside_its_folder(chromium_browser, release_out, small_demo,
                                                                       capsys):
    inside, outside, errors = release_out.resolve().as_uri() + "/", [], []
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})

    def refuse_outside(route) -> None:
        if route.request.url.startswith(inside):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", refuse_outside)
    page = context.new_page()
    page.on("request", lambda r: None if r.url.startswith(inside) else outside.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(inside + "index.html")
        page.wait_for_function("() => document.body.dataset.ready === '1' && [...document.querySelectorAll("
                               "'#results .chart')].every(c => c.dataset.drawn === '1')", timeout=30_000)
        assert page.locator("#results .chart").count() >= 3
        assert page.locator("#results .chart svg .mark-symbol path, #results .chart svg .mark-line path").count() > 10
        rows = {r.get_attribute("data-run"): r.inner_text() for r in page.locator("#runs-table tbody tr").all()}
        runs = sorted(p.name for p in (small_demo / "runs").iterdir() if (p / "results.json").exists())
        assert sorted(rows) == runs
        for run_id in runs:
            assert _auprc_as_runs_show_prints(small_demo, run_id, capsys) in rows[run_id].split(), (run_id, rows[run_id])
        page.get_by_role("link", name="Ground truth").click()
        page.locator("#gt .chart[data-drawn='1'] svg").first.wait_for(timeout=15_000)
        page.get_by_role("link", name="Datasheet").click()
        page.get_by_text("How the ground truth was made").wait_for(timeout=5_000)
        assert outside == [] and errors == [], (outside, errors)
    finally:
        context.close()
