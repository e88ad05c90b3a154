"""Issue 26, shared servers: runs are owned, a server caps the runs going at once, and visitors'
runs in the demo mode expire (core.runs.owners). On main there is no owner: anyone cancels."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from core.base.files import write_json_atomic
from core.runs import owners
from core.workspace import Workspace

A, B = "visitor:aaaa", "visitor:bbbb"


def _job(ws: Workspace, job_id: str, run_id: str, *, owner: str | None, status: str = "finished",
         updated: datetime | None = None) -> dict:
    ws.jobs_dir.mkdir(parents=True, exist_ok=True)
    record = {"job_id": job_id, "kind": "run", "label": "", "args": {"config": {"run_id": run_id},
              **({"owner": owner} if owner else {})}, "status": status, "pid": os.getpid(),
              "created_at": "2026-01-01T00:00:00+00:00",
              "updated_at": (updated or datetime.now(UTC)).isoformat(timespec="seconds")}
    write_json_atomic(ws.jobs_dir / f"{job_id}.json", record)
    (ws.runs_dir / run_id).mkdir(parents=True, exist_ok=True)
    (ws.runs_dir / run_id / "status.json").write_text("{}")
    return record


def test_only_the_owner_or_an_admin_cancels_or_resumes(tmp_path):
    job = _job(Workspace(tmp_path), "j1", "r1", owner=A, status="running")
    assert owners.control_refusal(job, A, admin=False, action="cancel") is None
    refusal = owners.control_refusal(job, B, admin=False, action="cancel")
    assert refusal == "This run was launched by another visitor: only they (or an admin) may cancel it."
    assert owners.control_refusal(job, B, admin=True, action="cancel") is None
    unowned = _job(Workspace(tmp_path), "j2", "r2", owner=None)  # the CLI's, or a run from before owners
    assert owners.control_refusal(unowned, A, admin=False, action="resume") is not None
    assert owners.control_refusal(None, A, admin=False, action="resume").startswith("Only an admin may resume")
    assert owners.control_refusal(None, "local", admin=True, action="resume") is None


def test_the_server_caps_the_runs_going_at_once(tmp_path, monkeypatch):
    ws = Workspace(tmp_path)
    monkeypatch.setenv("WORKBENCH_MAX_RUNS", "2")
    _job(ws, "j1", "r1", owner=A, status="running")  # this process's pid: alive, so it reads as running
    assert owners.concurrency_refusal(ws) is None
    _job(ws, "j2", "r2", owner=B, status="running")
    assert owners.concurrency_refusal(ws) == ("This server runs at most 2 runs at once and 2 are going: "
                                              "try again when one has finished.")
    _job(ws, "j3", "r3", owner=A, status="finished")  # stopped runs do not count
    assert owners.concurrency_refusal(ws, limit=3) is None


def test_visitors_stopped_runs_expire_the_rest_stays(tmp_path):
    ws = Workspace(tmp_path)
    old = datetime.now(UTC) - timedelta(hours=2)
    _job(ws, "j1", "old-visitor", owner=A, updated=old)
    _job(ws, "j2", "new-visitor", owner=B)
    _job(ws, "j3", "old-running", owner=A, status="running", updated=old)
    _job(ws, "j4", "old-cli", owner=None, updated=old)
    _job(ws, "j5", "old-local", owner="local", updated=old)
    assert owners.expire_visitor_runs(ws, ttl_s=3600) == ["old-visitor"]
    assert not (ws.runs_dir / "old-visitor").exists() and not (ws.jobs_dir / "j1.json").exists()
    assert sorted(p.name for p in ws.runs_dir.iterdir()) == ["new-visitor", "old-cli", "old-local", "old-running"]


def test_an_expiring_run_id_that_is_a_link_is_not_followed(tmp_path):
    ws = Workspace(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    _job(ws, "j1", "evil", owner=A, updated=datetime.now(UTC) - timedelta(hours=2))
    (ws.runs_dir / "evil" / "status.json").unlink()
    (ws.runs_dir / "evil").rmdir()
    (ws.runs_dir / "evil").symlink_to(outside)
    assert owners.expire_visitor_runs(ws, ttl_s=60) == []
    assert (outside / "keep.txt").read_text() == "keep"


def test_the_team_mode_owner_is_the_signed_in_user(tmp_path, monkeypatch):
    """A team deployment's runs are owned per user (their e-mail, case-folded); one user cannot steer
    another's run. Members signed in with the shared access code have only their role (``team:ROLE``):
    they share one owner, which the README says."""
    from core.runs.owners import control_refusal
    from core.ui import hosting, ownership

    ws = Workspace(tmp_path / "ws").ensure()
    monkeypatch.setenv("WORKBENCH_MODE", "team")
    monkeypatch.setattr(hosting.auth, "login_email", lambda: " Ann@Example.org ")
    assert ownership.who(ws) == "user:ann@example.org"
    job = {"args": {"owner": "user:bob@example.org"}}
    assert "launched by someone else" in (control_refusal(job, ownership.who(ws), admin=False, action="cancel") or "")
    monkeypatch.setattr(hosting.auth, "login_email", lambda: None)
    monkeypatch.setattr(hosting, "team_role", lambda _ws: "member")
    assert ownership.who(ws) == "team:member"
