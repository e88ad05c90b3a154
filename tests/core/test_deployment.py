"""Deployment modes (core.base.settings): which mode, what a read-only demo refuses in every core write
path (and that nothing is written), the rate-limit settings, where labels go, and secrets that
never reach results, exports, job records or logs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import core.judgments.judges.job  # noqa: F401 - registers the judge job kind
import core.runs.job  # noqa: F401 - registers the run job kind
from core.base import settings
from core.base.errors import ReadOnlyError
from core.jobs import list_jobs, read_job, start_job
from core.labeling import export as label_export
from core.labeling import identity, items
from core.labeling.store import LabelStore, close_stores
from core.llm import OFFLINE_MODEL, describe_error
from core.workspace import Workspace
from tests.helpers.llm_server import RUN_KEY_PATTERN, LLMServer, offline_responder

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-planted-secret-7c1e9a"


@pytest.fixture()
def demo_ws(small_demo, tmp_path) -> Workspace:
    target = tmp_path / "ws"
    shutil.copytree(small_demo, target, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    yield Workspace(target)
    close_stores()


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and mtime (ns): equal trees mean nothing was written.

    SQLite's ``-wal``/``-shm`` companions appear when the label store is merely opened (WAL mode);
    the label store itself is ``labels.sqlite``, compared like every other file."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(("-wal", "-shm"))}


# -- which mode ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("env", "expected"), [
    ({}, "local"), ({"WORKBENCH_MODE": "demo"}, "demo"), ({"WORKBENCH_MODE": " Team "}, "team"),
    ({"WORKBENCH_HOSTED": "1"}, "demo"), ({"WORKBENCH_HOSTED": "0"}, "local"),
    ({"WORKBENCH_MODE": "local", "WORKBENCH_HOSTED": "1"}, "local"),  # the explicit mode wins over the alias
])
def test_the_mode_comes_from_the_environment(monkeypatch, env, expected):
    monkeypatch.delenv("WORKBENCH_MODE", raising=False)
    monkeypatch.delenv("WORKBENCH_HOSTED", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert settings.deployment_mode() == expected
    assert settings.read_only() is (expected == "demo")


def test_an_unknown_mode_is_refused_not_guessed(monkeypatch):
    monkeypatch.setenv("WORKBENCH_MODE", "public")
    with pytest.raises(ValueError, match="not a deployment mode; use one of local, demo, team"):
        settings.deployment_mode()


# -- demo: every core write path refuses, and nothing is written ------------------------------
def _store(ws: Workspace) -> LabelStore:
    return LabelStore(settings.labels_url(ws.root))


WRITES = {
    "import a dataset": lambda ws: __import__("core.datasets.importer", fromlist=["x"]).import_dataset(
        ws, "other", ws.root / "sources" / "demo" / "review.json"),
    "import judgments": lambda ws: __import__("core.judgments.xnot_files", fromlist=["x"]).import_xnot_judgments(
        ws, ws.root / "nothing.json"),
    "import a GT file": lambda ws: __import__("core.ground_truth.gt_files", fromlist=["x"]).import_gt_file(
        ws, next((ws.root / "gt" / "demo" / "G1a").glob("*.json"))),
    "record an override": lambda ws: __import__("core.judgments.overrides", fromlist=["x"]).add_override(
        ws, "demo", "G1a", business_id="b", idx=0, corrected={"incident_severity": "severe"}, reason="r", author="a"),
    "revert an override": lambda ws: __import__("core.judgments.overrides", fromlist=["x"]).revert_override(
        ws, "demo", "G1a", "ov-1", reason="r", author="a"),
    "save a variant": lambda ws: __import__("core.ground_truth.variants", fromlist=["x"]).save_variant(
        ws, "mine", "G1_allergy_V2", {}),
    "delete a variant": lambda ws: __import__("core.ground_truth.variants", fromlist=["x"]).delete_variant(ws, "mine"),
    "judge reviews": lambda ws: __import__("core.ground_truth.views", fromlist=["x"]).run_index_and_judge(ws, "demo", "G1a"),
    "build the keyword index": lambda ws: __import__("core.tasks.keyword_index", fromlist=["x"]).build_index(ws, "demo"),
    "choose the GT judge": lambda ws: __import__("core.judgments.catalog", fromlist=["x"]).set_gt_judge(
        ws, "demo", "G1a", "heuristic-v2"),
    "change a rater's role": lambda ws: identity.set_role(_store(ws), "ana", "admin"),
    "retire a rater code": lambda ws: identity.retire_rater(_store(ws), "ana", by="boss"),
    "create a labeling project": lambda ws: items.create_project(_store(ws), "new"),
    "write label exports into the workspace": lambda ws: label_export.export_project(
        _store(ws), items.list_projects(_store(ws))[0], ws.root / "exports"),
    "save a gold report": lambda ws: __import__("core.gold.store", fromlist=["x"]).save_report(
        ws, {}, set_name="s", name="n", source="expected", accuracy="exact"),
    "write an answers file": lambda ws: __import__("core.gold.answers", fromlist=["x"]).write_answers_file(
        ws.root / "gold" / "answers" / "x.jsonl", [], {}),
    "send answers to a labeling project": lambda ws: __import__("core.gold.send", fromlist=["x"]).send_to_labeling(
        ws, {}, report_name="r", set_name="s", project="p"),
    "call an LLM endpoint": lambda ws: __import__("core.llm", fromlist=["x"]).AsyncLLM("m", api_key="sk-x"),
    "import a run": lambda ws: __import__("core.runs.imports", fromlist=["x"]).import_run_file(ws, ws.root / "r.json"),
    "start a judging job": lambda ws: start_job(ws, "judge", {"dataset": "demo", "task": "G1a"}),
    "run a paid model": lambda ws: start_job(ws, "run", {"config": {"dataset": "demo", "task": "G1a", "method": "direct",
                                                                    "model": "gpt-4o-mini", "k": 25}}),
}


@pytest.mark.parametrize("action", list(WRITES))
def test_the_demo_refuses_every_workspace_write_in_core_and_writes_nothing(demo_ws, monkeypatch, action):
    before = _tree(demo_ws.root)
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    with pytest.raises(ReadOnlyError, match="read-only demo"):
        WRITES[action](demo_ws)
    assert _tree(demo_ws.root) == before


def test_the_same_writes_go_through_outside_the_demo(demo_ws, monkeypatch):
    """The refusals above come from the mode, not from bad arguments: team mode writes."""
    monkeypatch.setenv("WORKBENCH_MODE", "team")
    identity.set_role(_store(demo_ws), "ana", "adjudicator")
    assert identity.get_role(_store(demo_ws), "ana") == "adjudicator"
    items.create_project(_store(demo_ws), "new")
    report = WRITES["build the keyword index"](demo_ws)
    assert report


def test_the_demo_launches_the_offline_model_and_a_deployer_may_build_the_demo(demo_ws, monkeypatch):
    from core.runs.job import admit_run

    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    admit_run(demo_ws, {"config": {"model": OFFLINE_MODEL}})  # allowed: no exception
    with pytest.raises(ReadOnlyError, match="only the offline model"):
        admit_run(demo_ws, {"config": {"model": "gpt-4o"}})
    with settings.deployment_setup():  # `workbench demo` builds the demo workspace in a demo container
        identity.set_role(_store(demo_ws), "ana", "adjudicator")
    with pytest.raises(ReadOnlyError):
        identity.set_role(_store(demo_ws), "ana", "rater")


def test_an_offline_run_job_in_demo_mode_finishes(demo_ws, monkeypatch):
    monkeypatch.setenv("WORKBENCH_MODE", "demo")
    start_job(demo_ws, "run", {"config": {"dataset": "demo", "task": "G1a", "policy": "G1_allergy_V2",
                                          "method": "direct", "model": OFFLINE_MODEL, "k": 25, "run_id": "offline"}})
    record = _wait_job(demo_ws)
    assert record["status"] == "finished", record.get("error")
    assert (demo_ws.runs_dir / "offline" / "results.json").exists()


def _wait_job(ws: Workspace, timeout: float = 90.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = list_jobs(ws, "run")
        if jobs and jobs[0]["status"] in ("finished", "failed", "cancelled"):
            return read_job(ws, jobs[0]["job_id"])
        time.sleep(0.2)
    raise AssertionError(f"job did not finish: {[j['status'] for j in list_jobs(ws, 'run')]}")


# -- settings of rate limits and the label store ------------------------------------------------
def test_rate_limits_are_configurable_per_action(monkeypatch):
    monkeypatch.delenv("WORKBENCH_RATE_LIMIT", raising=False)
    assert settings.rate_limit("launch") == (5, 12.0)  # default 5 per 60 s
    monkeypatch.setenv("WORKBENCH_RATE_LIMIT", "10/30")
    monkeypatch.setenv("WORKBENCH_RATE_LIMIT_SIGN_IN", "3/90")
    assert settings.rate_limit("launch") == (10, 3.0)
    assert settings.rate_limit("sign-in") == (3, 30.0)
    for bad in ("x/60", "0/60", "5/0"):
        monkeypatch.setenv("WORKBENCH_RATE_LIMIT_JUDGE", bad)
        with pytest.raises(ValueError, match="rate limit"):
            settings.rate_limit("judge")


def test_the_labels_line_names_the_store_and_whether_it_persists_without_the_password(monkeypatch):
    monkeypatch.delenv("WORKBENCH_LABELS_PERSIST", raising=False)
    where, persists = settings.labels_storage("postgresql+psycopg://team:hunter2hunter2@db.internal:5432/labels")
    assert (where, persists) == ("PostgreSQL database labels on db.internal", True)
    where, persists = settings.labels_storage("sqlite:////srv/ws/labels.sqlite")
    assert not persists and "ephemeral" in where and "/srv" not in where
    monkeypatch.setenv("WORKBENCH_LABELS_PERSIST", "1")
    assert settings.labels_storage("sqlite:////srv/ws/labels.sqlite") == ("a SQLite file on this server's disk", True)


# -- secrets -------------------------------------------------------------------------------------
def test_redact_removes_every_kind_of_secret(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("WORKBENCH_ACCESS_CODE", "team-code-31337")
    monkeypatch.setenv("WORKBENCH_ADMIN_CODE", "admin-code-31337")
    monkeypatch.setenv("WORKBENCH_ENDPOINT_LOCAL_KEY", "sk-local-31337")
    monkeypatch.setenv("WORKBENCH_LABELS_URL", "postgresql+psycopg://u:pa%24%24word-31337@h/db")
    text = f"401 {SECRET} team-code-31337 admin-code-31337 sk-local-31337 pa$$word-31337"
    assert settings.redact(text) == "401 *** *** *** *** ***"
    error = describe_error(RuntimeError(f"invalid key {SECRET}"))
    assert SECRET not in error and "***" in error


def test_a_planted_key_never_reaches_results_job_records_caches_exports_or_logs(demo_ws, monkeypatch, tmp_path):
    """A run through the real openai client against the local server that requires the planted
    key, as a background job; then a CLI run whose endpoint refuses (its error is printed)."""
    with LLMServer(offline_responder, key_pattern=RUN_KEY_PATTERN) as server:
        server.required_key = SECRET
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("WORKBENCH_MODE", "team")
        start_job(demo_ws, "run", {"config": {"dataset": "demo", "task": "G1a", "policy": "G1_allergy_V2",
                                              "method": "direct", "model": "test-model", "k": 25, "run_id": "paid"}})
        record = _wait_job(demo_ws)
        assert record["status"] == "finished", record.get("error")
        assert server.chat_requests == 12  # the key was really sent: the server answered every call
        results = json.loads((demo_ws.runs_dir / "paid" / "results.json").read_text())
        assert results["n"] == 12
        label_export.export_project(_store(demo_ws), items.list_projects(_store(demo_ws))[0], demo_ws.root / "exports")
        server.required_key = "another-key"  # every call now fails with 401: errors are recorded and printed
        proc = subprocess.run(
            [sys.executable, "-m", "core", "--workspace", str(demo_ws.root), "--no-progress", "run", "--dataset", "demo",
             "--method", "direct", "--model", "other-model", "--k", "25", "--run-id", "refused"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={**os.environ, "WORKBENCH_LLM_MAX_RETRIES": "0"})
    found = [p for p in demo_ws.root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert not found, found
    assert proc.returncode == 1 and "refused the key" in proc.stderr  # the endpoint's 401, printed as one line
    assert SECRET not in proc.stdout + proc.stderr
