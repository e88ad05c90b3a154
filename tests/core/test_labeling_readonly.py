"""Issue 26 (Medium 10): a workspace this user may not write can still be read. ``labels status``,
``agreement``, ``consensus`` and ``export`` (to a folder outside) open a read-only SQLite store
read-only; a write says that the store is read-only, and the workspace is left byte-identical.

The commands run in a child process that cannot write the workspace: as a non-root user the
``chmod`` does it; as root (the containers this runs in) the child drops CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH from its bounding set before it starts, so root obeys the file modes too.
Either way the test first checks that the child really cannot write there (never a silent pass).
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def _drop_root_powers() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _child(*argv: str) -> subprocess.CompletedProcess[str]:
    """``argv`` run by a process that obeys the file modes (see the module docstring)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, timeout=120,
                          cwd=ROOT, preexec_fn=_drop_root_powers if os.geteuid() == 0 else None)


def _cli(ws: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return _child("-m", "core", "--workspace", str(ws), "--no-progress", *argv)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _set_read_only(root: Path, read_only: bool) -> None:
    for p in [root, *root.rglob("*")]:
        mode = p.stat().st_mode
        write = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
        p.chmod(mode & ~write if read_only else mode | stat.S_IWUSR)


@pytest.fixture()
def rated(tmp_path, fixtures_dir):
    """A workspace with the AITA project (300 items, 514 ratings), made read-only for the test."""
    ws = tmp_path / "ws"
    aita = fixtures_dir / "aita"
    for argv in (("labels", "init", "aita"), ("labels", "import-items", str(aita / "seeds" / "aita_seed.jsonl")),
                 ("labels", "import-reviews", str(aita / "reviews" / "aita_reviews_slim.jsonl"))):
        done = _cli(ws, *argv)
        assert done.returncode == 0, done.stderr
    before = json.loads(_cli(ws, "labels", "status", "--json").stdout)
    _set_read_only(ws, True)
    yield ws, before
    _set_read_only(ws, False)


def test_a_read_only_workspace_is_read_and_writes_say_it_is_read_only(rated, tmp_path):
    ws, before = rated
    tree = _tree(ws)
    probe = _child("-c", f"open({str(ws / 'probe')!r}, 'w')")  # the child really cannot write there
    assert probe.returncode != 0 and "PermissionError" in probe.stderr, probe

    status = _cli(ws, "labels", "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout) == before and before[0]["ratings"] == 514
    agreement = _cli(ws, "labels", "agreement", "--json", "--include-models", "--boot", "50")
    assert agreement.returncode == 0, agreement.stderr
    assert json.loads(agreement.stdout)["alpha"]["value"] == pytest.approx(0.6530, abs=1e-4)
    consensus = _cli(ws, "--json", "labels", "consensus")
    assert consensus.returncode == 0 and json.loads(consensus.stdout)["summary"]["items"] == 64, consensus.stderr
    inside = _cli(ws, "labels", "export")  # to the workspace's own labels folder: says to give --out
    assert inside.returncode == 1 and "export with --out DIR" in inside.stderr, inside.stderr
    out = tmp_path / "exported"
    export = _cli(ws, "labels", "export", "--out", str(out))
    assert export.returncode == 0, export.stderr
    assert len((out / "aita_consensus.jsonl").read_text(encoding="utf-8").splitlines()) == 64

    write = _cli(ws, "labels", "role", "rater_01", "adjudicator")
    assert write.returncode == 1 and write.stderr.count("\n") == 1, write.stderr
    assert "cannot be written (the file is read-only for this user)" in write.stderr
    assert "this command writes to it" in write.stderr
    assert "Traceback" not in write.stderr and "backup" not in write.stderr
    assert _tree(ws) == tree  # nothing written, no journal left beside the store


def test_a_store_opened_read_only_refuses_writes_and_reads(tmp_path):
    """Without file modes: LabelStore(read_only=…) reads through SQLite's mode=ro and refuses a write
    before it reaches SQLite (which would refuse it too)."""
    from core.base.errors import WorkbenchError
    from core.labeling import items as labeling_items
    from core.labeling.store import LabelStore, open_store
    from core.labeling.store.engine import close_stores

    url = f"sqlite:///{tmp_path / 'labels.sqlite'}"
    labeling_items.create_project(open_store(url=url), "p")
    close_stores()
    store = LabelStore(url, read_only="a test")
    try:
        assert [p.name for p in labeling_items.list_projects(store)] == ["p"]
        with pytest.raises(WorkbenchError, match=r"cannot be written \(a test\): this command writes to it"):
            labeling_items.create_project(store, "q")
        with store.engine.connect() as conn, pytest.raises(Exception, match="readonly database"):
            conn.exec_driver_sql("INSERT INTO schema_version (version, applied_at) VALUES (99, '2026-01-01')")
    finally:
        store.dispose()
