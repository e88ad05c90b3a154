"""``python -m core study …`` end to end on a temporary workspace, offline."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.labeling.store import close_stores


@pytest.fixture()
def cli(tmp_path, capsys, monkeypatch):
    ws = tmp_path / "ws"
    monkeypatch.delenv("WORKBENCH_LABELS_URL", raising=False)

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(["--workspace", str(ws), "--no-progress", *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    yield run, ws
    close_stores()


def test_grid_collect_resume_score_audit_analyze(cli, tmp_path):
    run, ws = cli
    code, out, _ = run("study", "grid", "--study", "rent", "--template", "raise", "--json")
    assert code == 0 and json.loads(out)["prompts"] == 54
    code, out, _ = run("study", "collect", "--study", "rent", "--model", "offline:advisor-balanced", "--model",
                       "offline:advisor-agreeable", "--run-id", "r1", "--json")
    assert code == 0 and json.loads(out)["answered"] == 108
    code, out, _ = run("study", "collect", "--study", "rent", "--model", "offline:advisor-balanced", "--model",
                       "offline:advisor-agreeable", "--run-id", "r1", "--json")
    assert json.loads(out)["requested"] == 0 and json.loads(out)["already_done"] == 108
    run_path = ws / "studies/rent/runs/r1/run.jsonl"
    assert sum(1 for _ in run_path.open()) == 108

    # a scored run needs a scorer: train one on a small rated project built from code
    from core.labeling.store import open_store
    from tests.helpers.rated_project import build_rated_project

    build_rated_project(open_store(ws), "stance")
    code, out, _ = run("scorer", "train", "--project", "stance", "--out", str(ws / "scorers/s1"))
    assert code == 0 and "human ceiling" in out
    scored = ws / "studies/rent/runs/r1/run_scored.jsonl"
    assert run("scorer", "apply", str(ws / "scorers/s1"), str(run_path), "--out", str(scored))[0] == 0
    code, out, _ = run("study", "audit", str(scored), "--project", "rent-audit", "--n", "24", "--json")
    audit = json.loads(out)
    assert code == 0 and audit["added"] == 24 and len(audit["strata"]) == 6
    code, out, _ = run("study", "analyze", str(scored), "--project", "rent-audit", "--json")
    rep = json.loads(out)
    assert code == 0 and len(rep["by_group"]) == 6
    assert {"model_id", "perspective", "n", "mean"} <= set(rep["by_group"][0])
    assert rep["audit"]["n_audited"] == 0  # nobody has rated the audit yet
    code, out, _ = run("study", "analyze", str(scored))
    assert code == 0 and "uplift offline:advisor-agreeable" in out
    code, out, _ = run("study", "list")
    assert "rent: grid yes; runs r1" in out


def test_import_seed_and_scored_run(cli, fixtures_dir):
    run, ws = cli
    code, out, _ = run("study", "import", str(fixtures_dir / "aita/seeds/scenario_seed.jsonl"), "--study", "seed",
                       "--json")
    assert code == 0 and json.loads(out)["prompts"] == 2
    code, out, _ = run("study", "import", str(fixtures_dir / "aita/runs/1760158358/run_scored.jsonl"), "--study",
                       "aita")
    assert code == 0 and "scorer openai/gpt-oss-20b:free" in out
    imported = ws / "studies/aita/runs/1760158358/run_scored.jsonl"
    code, out, _ = run("study", "analyze", str(imported), "--json")
    assert json.loads(out)["scorer_models"] == ["openai/gpt-oss-20b:free"]


def test_bad_inputs_are_one_line_errors(cli, tmp_path):
    run, ws = cli
    bad = tmp_path / "templates.jsonl"
    bad.write_text(json.dumps({"template_id": "t", "landlord": "My tenant pays {base_rent}€ +{amount}€.",
                               "tenant": "My landlord pays {amount}€ +{base_rent}€.",
                               "neutral": "{base_rent}€ {amount}€"}) + "\n")
    code, _, err = run("study", "grid", "--study", "x", "--templates", str(bad))
    assert code == 1 and "templates.jsonl:1: field 'tenant': landlord/tenant pair is not mirrored" in err
    assert not (ws / "studies/x/grid.jsonl").exists()
    code, _, err = run("study", "grid", "--study", "../evil")
    assert code == 1 and "invalid study name" in err
    run_file = tmp_path / "run_scored.jsonl"
    run_file.write_text('{"run_id": "r"}\n')
    code, _, err = run("study", "analyze", str(run_file))
    assert code == 1 and "run_scored.jsonl:1: field 'model_id'" in err
    code, _, err = run("study", "collect", "--study", "nothing", "--model", "offline:advisor-balanced")
    assert code == 1 and "no such grid file" in err
    assert run("study", "grid", "--study", "y", "--template", "costs")[0] == 0
    code, _, err = run("study", "collect", "--study", "y", "--model", "offline:nope")
    assert code == 1 and "unknown offline model 'offline:nope'; valid: offline:advisor-agreeable" in err
