"""``python -m core run`` / ``runs`` in-process: dry run, JSON output, list, show, cancel, errors."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest

from core.cli import main


@pytest.fixture()
def root(small_demo, tmp_path):
    target = tmp_path / "ws"
    shutil.copytree(small_demo, target, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    return str(target)


def test_dry_run_prints_preflight_and_writes_nothing(root, capsys):
    assert main(["--workspace", root, "--json", "run", "--dataset", "demo", "--method", "amos", "--k", "50", "-n", "4",
                 "--dry-run"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["n_samples"] == 4 and plan["preflight"]["offline"] and plan["gt"]["k"] == 50
    assert main(["--workspace", root, "runs", "list"]) == 0
    assert "no runs" in capsys.readouterr().out


def test_run_list_show_cancel(root, capsys):
    ids = pl.read_parquet(f"{root}/datasets/demo/restaurants.parquet")["business_id"].sort().to_list()
    assert main(["--workspace", root, "run", "--dataset", "demo", "--method", "keyword", "--samples", "nope"]) == 1
    assert "unknown sample(s) in dataset demo: nope" in capsys.readouterr().err
    assert main(["--workspace", root, "--no-progress", "run", "--dataset", "demo", "--method", "keyword",
                 "--run-id", "kw", "--samples", ",".join(ids[:2])]) == 0
    out = capsys.readouterr().out
    assert "finished: 2/2 samples" in out and "runs/kw\n" in out
    assert "AUPRC" in out and "Snippet Validity" in out  # the scores, as `show` prints them
    assert main(["--workspace", root, "--json", "runs", "list"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["run_id"], r["status"], r["done"]) for r in rows] == [("kw", "finished", 2)]
    assert main(["--workspace", root, "--json", "runs", "show", "kw"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["results"]["n"] == 2 and "results" not in shown["results"]
    assert main(["--workspace", root, "runs", "cancel", "kw"]) == 0
    assert "is finished, nothing to cancel" in capsys.readouterr().out
    assert main(["--workspace", root, "runs", "show", "nope"]) == 1
    assert "no run 'nope'" in capsys.readouterr().err
    assert main(["--workspace", root, "run", "--dataset", "demo", "--method", "keyword", "--run-id", "../x"]) == 1
    assert "invalid run name" in capsys.readouterr().err
