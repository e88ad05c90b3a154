"""Issue 9, items 2 and 8: import staging is invisible to readers, cleaned up, atomic; one import
per dataset name at a time (real processes, kill -9 included)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from core.cli import main
from core.datasets import list_datasets
from core.datasets.db import Database
from core.datasets.importer import import_dataset
from core.workspace import Workspace
from core.workspace.locks import LockBusyError, dataset_lock
from tests.helpers.safety import cli, write_flat


def _import(ws: Workspace, name: str, src: Path, *, replace: bool = False) -> dict:
    return import_dataset(ws, name, src / "review.json", business_path=src / "business.json", replace=replace)


def _count(ws: Workspace) -> int:
    return int(Database(ws.root).scalar("SELECT count(*) FROM reviews"))


def test_item2_leftover_staging_folders_are_invisible_to_views_and_cleaned_on_next_start(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    src = write_flat(tmp_path / "src", 3, 4)
    _import(ws, "d", src)
    db = Database(ws.root)
    assert db.scalar("SELECT count(*) FROM reviews") == 12
    # what a killed import leaves: a half-written table (old layout and new), a replaced folder
    datasets = ws.root / "datasets"
    (datasets / ".d.x1y2.tmp").mkdir()
    (datasets / ".d.x1y2.tmp" / "reviews.parquet").write_bytes(b"PAR1 torn")
    shutil.copytree(datasets / "d", datasets / ".d.old.4242")
    staged = ws.root / ".staging" / "dataset.d" / ".d.abcd.tmp"
    staged.mkdir(parents=True)
    (staged / "reviews.parquet").write_bytes(b"torn")
    assert db.scalar("SELECT count(*) FROM reviews") == 12  # no "No magic bytes", no doubled reviews
    assert db.scalar("SELECT count(DISTINCT dataset) FROM restaurants") == 1
    assert main(["--workspace", str(ws.root), "datasets", "list"]) == 0
    assert not (datasets / ".d.x1y2.tmp").exists() and not (datasets / ".d.old.4242").exists()
    assert not (ws.root / ".staging").exists()
    assert sorted(p.name for p in datasets.iterdir()) == ["d"]


def test_item2_kill_9_during_replace_leaves_a_readable_verified_workspace(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    small = write_flat(tmp_path / "small", 2, 5)
    big = write_flat(tmp_path / "big", 100, 1000)
    _import(ws, "d", small)
    proc = cli("--workspace", str(ws.root), "datasets", "import", str(big / "review.json"), "--business",
               str(big / "business.json"), "--name", "d", "--replace")
    staging = [ws.root / ".staging", ws.root / "datasets"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.name.endswith(".tmp") for s in staging if s.exists() for p in s.rglob("*.tmp")):
            break
        time.sleep(0.002)
    assert proc.poll() is None, "the import finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _count(ws) in (10, 100_000)  # the old dataset or the new one, readable either way
    [info] = list_datasets(ws)
    assert info["verified"], info["problem"]
    assert main(["--workspace", str(ws.root), "datasets", "list"]) == 0
    assert not (ws.root / ".staging").exists()
    assert not [p for p in (ws.root / "datasets").iterdir() if p.name.startswith(".")]


READER = """
import json, sys, time
from pathlib import Path
from core.datasets import require_verified
from core.datasets.db import Database
from core.workspace import Workspace
db = Database(sys.argv[1])
ws = Workspace(Path(sys.argv[1]))
ok, errors, counts = 0, [], set()
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    try:
        require_verified(ws, "d")  # what the Data page checks first
        counts.add(db.scalar("SELECT count(*) FROM reviews WHERE text LIKE '%allergy%'"))
        ok += 1
    except Exception as exc:
        errors.append(str(exc).splitlines()[0])
print(json.dumps({"ok": ok, "errors": errors[:3], "n_errors": len(errors), "counts": sorted(counts)}))
"""


def test_item2_a_reader_during_replace_gets_no_error(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    a = write_flat(tmp_path / "a", 20, 500)
    b = write_flat(tmp_path / "b", 10, 500)
    _import(ws, "d", a)
    import subprocess
    import sys

    reader = subprocess.Popen([sys.executable, "-c", READER, str(ws.root), "4"], cwd=Path(__file__).parents[2],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    time.sleep(0.8)
    replaces = 0
    while reader.poll() is None and replaces < 8:
        _import(ws, "d", b if replaces % 2 == 0 else a, replace=True)
        replaces += 1
    out, err = reader.communicate(timeout=30)
    result = json.loads(out)
    assert result["n_errors"] == 0, result["errors"]
    assert result["ok"] > 10 and replaces >= 2
    assert set(result["counts"]) <= {10_000, 5_000}  # the old table or the new one, never a mix


def test_item2_dataset_folders_get_the_usual_permissions(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    _import(ws, "d", write_flat(tmp_path / "src", 1, 2))
    mode = (ws.root / "datasets" / "d").stat().st_mode & 0o777
    assert mode == 0o777 & ~_umask(), oct(mode)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_item8_concurrent_imports_of_one_name_one_wins_the_other_fails_clearly(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    sources = [write_flat(tmp_path / f"s{i}", 10 + i, 300) for i in range(2)]
    procs = [cli("--workspace", str(ws.root), "datasets", "import", str(s / "review.json"), "--business",
                 str(s / "business.json"), "--name", "same") for s in sources]
    results = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
    winners = [i for i, (code, _) in enumerate(results) if code == 0]
    assert len(winners) == 1, results
    for code, err in results:
        if code != 0:
            assert code == 1 and err.startswith("error: ") and err.count("\n") == 1, err
            assert "already running" in err or "already exists" in err, err
    assert _count(ws) == (10 + winners[0]) * 300
    assert list_datasets(ws)[0]["verified"]


def test_item8_the_dataset_lock_is_exclusive_and_freed_by_a_killed_holder(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    import subprocess
    import sys

    code = ("import sys, time; from core.workspace import Workspace; from core.workspace.locks import dataset_lock\n"
            "with dataset_lock(Workspace(sys.argv[1]), 'd'):\n    print('held', flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code, str(ws.root)], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).parents[2],
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert child.stdout.readline().strip() == "held"
    with pytest.raises(LockBusyError, match=rf"already running \(pid {child.pid}\)"):
        _import(ws, "d", write_flat(tmp_path / "src", 1, 2))
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with dataset_lock(ws, "d"):  # not stuck
        pass
    _import(ws, "d", tmp_path / "src")
    assert not (ws.root / ".locks").exists()
