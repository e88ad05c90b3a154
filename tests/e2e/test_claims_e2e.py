"""A claim copied from the Results page in a real Chromium, checked by ``claim check``: it holds on the
same workspace (a copy of the one served), and after an override that moves its figure it has changed,
with the new figure."""

from __future__ import annotations

import shutil

import pytest

from core.cli import main
from core.release.claims import decode
from core.workspace import Workspace
from tests.core.release.test_claim_check import _moving_override
from tests.e2e.conftest import wait_ready

pytestmark = pytest.mark.e2e


def _copied_claim(page, url: str) -> str:
    page.goto(f"{url}/results")
    wait_ready(page, "Copy claim", timeout=60_000)
    page.get_by_role("button", name="Copy claim").first.click()
    code = page.get_by_test_id("stPopoverBody").get_by_test_id("stCode").first
    code.wait_for(timeout=20_000)
    return code.inner_text()


def test_a_claim_copied_from_results_holds_then_changes_after_an_override(page, app_server, e2e_workspace,
                                                                           tmp_path, capsys):
    markdown = _copied_claim(page, app_server.url)  # the session's server (read-only small demo)
    claims_root = tmp_path / "ws"  # a copy is the same workspace to a claim: its dataset is its content
    shutil.copytree(e2e_workspace, claims_root)
    claim = decode(markdown)
    assert claim["kind"] == "score" and claim["metric"] == "ordinal_auprc" and "[check this claim](" in markdown
    capsys.readouterr()
    assert main(["--workspace", str(claims_root), "claim", "check", markdown]) == 0
    assert "\nholds: " in capsys.readouterr().out
    _moving_override(Workspace(claims_root), claim["runs"][0])
    assert main(["--workspace", str(claims_root), "claim", "check", markdown]) == 3
    out = capsys.readouterr().out
    assert "\nchanged: now " in out and "overrides in force changed (0 →" in out, out
    now = out.split("changed: now ")[1].split(" ordinal AUPRC")[0]
    assert now != f"{claim['figure']['value']:.2f}", out
