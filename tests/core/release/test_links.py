"""Deep links: ``run``, ``score`` and ``show --json`` print the Results link of what they made when
``WORKBENCH_BASE_URL`` says where the app serves the workspace, and nothing without it."""

from __future__ import annotations

import json
import shutil

import pytest

from core.cli import main

BASE = "https://bench.example.org/"


@pytest.fixture()
def ws(small_demo, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(small_demo, root)
    return root


def _json(capsys, argv: list[str]) -> object:
    capsys.readouterr()
    main(["--json", *argv])
    return json.loads(capsys.readouterr().out)


def test_show_and_score_print_the_results_link(ws, capsys, monkeypatch):
    a, b = ws / "runs" / "demo-keyword-K25", ws / "runs" / "demo-amos-K25"
    assert all(p["link"] is None for p in _json(capsys, ["--workspace", str(ws), "show", str(a), str(b)]))
    monkeypatch.setenv("WORKBENCH_BASE_URL", BASE)
    shown = _json(capsys, ["--workspace", str(ws), "show", str(a), str(b)])
    assert [p["link"] for p in shown] == ["https://bench.example.org/results?run=demo-keyword-K25",
                                          "https://bench.example.org/results?run=demo-amos-K25&baseline=demo-keyword-K25"]
    scored = _json(capsys, ["--workspace", str(ws), "score", str(b / "results.json"), "--n-boot", "0"])
    assert scored["link"] == "https://bench.example.org/results?run=demo-amos-K25"


def test_run_prints_the_link_of_the_run_it_made(ws, capsys, monkeypatch):
    monkeypatch.setenv("WORKBENCH_BASE_URL", BASE)
    out = _json(capsys, ["--workspace", str(ws), "run", "--dataset", "demo", "--method", "keyword", "--k", "25",
                         "-n", "3", "--run-id", "linked"])
    assert out["link"] == "https://bench.example.org/results?run=linked"
