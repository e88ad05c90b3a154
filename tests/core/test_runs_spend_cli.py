"""Issue 26, spend that cannot run away, at the command line (a dry run: nothing is asked or written):
a model without a price on a remote endpoint needs a price or an explicit ``--unpriced`` (and then
takes no dollar cap); the pre-flight gives a cost range; the workspace default cap (``workspace.json``
``max_cost_usd``, else ``$WORKBENCH_MAX_COST``) applies when ``--max-cost`` is not given."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from core.cli import main

RUN = ("run", "--dataset", "demo", "--method", "direct", "-n", "3", "--dry-run")


@pytest.fixture()
def ws(small_demo, tmp_path, monkeypatch):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    monkeypatch.setenv("OPENAI_BASE_URL", "https://llm.example.invalid/v1")  # remote: never called by a dry run
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("WORKBENCH_MAX_COST", raising=False)
    monkeypatch.delenv("WORKBENCH_PRICES", raising=False)
    return root


def _run(capsys, root, *args: str) -> tuple[int, str, str]:
    code = main(["--workspace", str(root), "--no-progress", *RUN, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_model_without_a_price_needs_a_price_or_unpriced(ws, capsys):
    code, _, err = _run(capsys, ws, "--model", "my-own-model")
    assert code == 1 and err.count("\n") == 1, err
    assert "--price INPUT,OUTPUT" in err and "--unpriced" in err and "has no price" in err
    code, out, _ = _run(capsys, ws, "--model", "my-own-model", "--unpriced")
    assert code == 0 and "cost unknown (model has no price)" in out
    code, _, err = _run(capsys, ws, "--model", "my-own-model", "--unpriced", "--max-cost", "1")
    assert code == 1 and "--max-cost needs a price for model 'my-own-model'" in err
    code, out, _ = _run(capsys, ws, "--model", "my-own-model", "--price", "1,2")
    low, high = (float(x) for x in re.search(r"cost \$([\d.]+)–\$([\d.]+)", out).groups())
    assert code == 0 and 0 < low < high  # a range: low and high output tokens
    assert not (ws / "runs").exists()


def test_the_workspace_default_cap_applies_unless_max_cost_is_given(ws, capsys, monkeypatch):
    code, out, _ = _run(capsys, ws, "--model", "gpt-4o-mini")
    assert code == 0 and "no spending cap (--max-cost USD sets one)" in out
    monkeypatch.setenv("WORKBENCH_MAX_COST", "0.25")
    assert "spending cap $0.2500" in _run(capsys, ws, "--model", "gpt-4o-mini")[1]
    meta = json.loads((ws / "workspace.json").read_text())
    (ws / "workspace.json").write_text(json.dumps({**meta, "max_cost_usd": 0.05}), encoding="utf-8")
    assert "spending cap $0.0500" in _run(capsys, ws, "--model", "gpt-4o-mini")[1]  # the workspace's comes first
    assert "spending cap $0.0100" in _run(capsys, ws, "--model", "gpt-4o-mini", "--max-cost", "0.01")[1]
    (ws / "workspace.json").write_text(json.dumps({**meta, "max_cost_usd": "lots"}), encoding="utf-8")
    code, _, err = _run(capsys, ws, "--model", "gpt-4o-mini")
    assert code == 1 and "workspace.json: max_cost_usd must be a number of US dollars" in err, err
