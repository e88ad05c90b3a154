"""Issue 8, "The workspace path": roots, the demo only in the demo workspace, workspace.json on import,
the `make run` gating and the installed `workbench` entry point."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from core.base.settings import DEFAULT_WORKSPACE, PROJECT_ROOT
from core.cli import main
from core.demo import default_truth_path, generate_demo, is_demo_workspace
from core.workspace import Workspace
from core.workspace.choice import allowed_workspace, workspace_roots
from tests.helpers.install import PY, install_workbench, small_scale_file


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path -> sha256); folders as '<dir>'."""
    if not folder.exists():
        return {}
    out = {}
    for p in sorted(folder.rglob("*")):
        out[str(p.relative_to(folder))] = "<dir>" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# --- roots ----------------------------------------------------------------------------------------

def test_roots_default_to_data_and_started_workspace(monkeypatch, tmp_path):
    monkeypatch.delenv("WORKBENCH_WORKSPACE_ROOTS", raising=False)
    monkeypatch.setenv("WORKBENCH_WORKSPACE", str(tmp_path / "started"))
    assert workspace_roots() == [(PROJECT_ROOT / "data").resolve(), (tmp_path / "started").resolve()]
    monkeypatch.setenv("WORKBENCH_WORKSPACE_ROOTS", os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")]))
    assert workspace_roots() == [(tmp_path / "a").resolve(), (tmp_path / "b").resolve()]


def test_roots_refuse_etc_dotdot_and_symlink_escape(tmp_path):
    root = (tmp_path / "root").resolve()
    (root / "inside").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    assert allowed_workspace(root / "inside", [root]) == root / "inside"
    assert allowed_workspace(str(root), [root]) == root
    for bad in ("/etc", str(root / ".." / "outside"), str(root / "link"), str(root / "link" / "x"), "", "a\x00b"):
        with pytest.raises(ValueError, match="outside the workspace roots|enter a workspace folder"):
            allowed_workspace(bad, [root])
    # a root given as a symlink still admits its own folders
    (tmp_path / "rootlink").symlink_to(root, target_is_directory=True)
    assert allowed_workspace(tmp_path / "rootlink" / "inside", [(tmp_path / "rootlink").resolve()]) == root / "inside"


# --- any folder holding datasets is a workspace ----------------------------------------------------

def test_datasets_import_creates_workspace_json(tmp_path):
    src = small_scale_file(tmp_path / "scale.jsonl")
    ws_root = tmp_path / "mine"
    assert main(["--workspace", str(ws_root), "--no-progress", "datasets", "import", str(src), "--name", "real"]) == 0
    meta = json.loads((ws_root / "workspace.json").read_text())
    assert meta["name"] == "mine" and Workspace(ws_root).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "scale.jsonl"]  # nothing beside it


def test_failed_import_writes_no_workspace_json(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    assert main(["--workspace", str(tmp_path / "mine"), "--no-progress", "datasets", "import", str(bad),
                 "--name", "real"]) == 1
    assert not (tmp_path / "mine" / "workspace.json").exists()


def test_folder_with_datasets_but_no_workspace_json_is_a_workspace(tmp_path):
    src = small_scale_file(tmp_path / "scale.jsonl")
    ws_root = tmp_path / "mine"
    main(["--workspace", str(ws_root), "--no-progress", "datasets", "import", str(src), "--name", "real"])
    (ws_root / "workspace.json").unlink()  # built by an older version
    assert Workspace(ws_root).exists()
    assert not Workspace(tmp_path / "empty").exists()


# --- the demo only in the demo workspace -----------------------------------------------------------

def test_demo_only_demo_workspace_leaves_user_workspace_untouched(tmp_path):
    src = small_scale_file(tmp_path / "scale.jsonl")
    ws_root = tmp_path / "mine"
    main(["--workspace", str(ws_root), "--no-progress", "datasets", "import", str(src), "--name", "real"])
    before, beside = snapshot(ws_root), sorted(p.name for p in tmp_path.iterdir())
    assert main(["--workspace", str(ws_root), "--no-progress", "demo", "--if-missing", "--only-demo-workspace"]) == 0
    assert snapshot(ws_root) == before and sorted(p.name for p in tmp_path.iterdir()) == beside
    # a folder that does not exist is not created either
    assert main(["--workspace", str(tmp_path / "new"), "--no-progress", "demo", "--if-missing",
                 "--only-demo-workspace"]) == 0
    assert not (tmp_path / "new").exists()


def test_is_demo_workspace():
    assert is_demo_workspace(DEFAULT_WORKSPACE)


def test_demo_truth_stays_in_the_demos_own_place(tmp_path):
    root = tmp_path / "asked"
    summary = generate_demo(root, n_restaurants=3, reviews_per_restaurant=20)
    truth = Path(summary["truth_path"])
    assert truth == default_truth_path(root) and truth.is_relative_to(root / "sources" / "demo")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["asked"]  # nothing beside the folder
    assert is_demo_workspace(root)  # a folder the user asked `demo` to write is the demo's own
    assert default_truth_path(DEFAULT_WORKSPACE) == DEFAULT_WORKSPACE.parent / "demo.truth.parquet"


def _make_dry_run(**variables: str) -> list[str]:
    args = ["make", "-s", "-n", "-C", str(PROJECT_ROOT), "run", *(f"{k}={v}" for k, v in variables.items())]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_make_run_startup_does_not_touch_a_user_workspace(tmp_path):
    """Runs the Makefile's own startup line (from `make -n run`) on a real user workspace."""
    src = small_scale_file(tmp_path / "scale.jsonl")
    ws_root = tmp_path / "mine"
    main(["--workspace", str(ws_root), "--no-progress", "datasets", "import", str(src), "--name", "real"])
    before, beside = snapshot(ws_root), sorted(p.name for p in tmp_path.iterdir())
    lines = _make_dry_run(WORKBENCH_WORKSPACE=str(ws_root))
    demo_line = next(line for line in lines if " -m core " in line)
    serve_line = next(line for line in lines if "streamlit run" in line)
    assert f'WORKBENCH_WORKSPACE="{ws_root}"' in serve_line
    assert any(str(ws_root) in line and line.startswith("echo") for line in lines)  # it prints what it serves
    argv = shlex.split(demo_line)
    assert argv[0].endswith(".venv/bin/python")
    done = subprocess.run([PY, *argv[1:]], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    assert done.returncode == 0, done.stderr
    assert "as it is" in done.stdout
    assert snapshot(ws_root) == before and sorted(p.name for p in tmp_path.iterdir()) == beside


def test_make_run_reads_workbench_workspace_and_the_workspace_alias(tmp_path):
    assert any(f'WORKBENCH_WORKSPACE="{tmp_path}/a"' in line for line in _make_dry_run(WORKBENCH_WORKSPACE=f"{tmp_path}/a"))
    assert any(f'WORKBENCH_WORKSPACE="{tmp_path}/b"' in line for line in _make_dry_run(WORKSPACE=f"{tmp_path}/b"))
    assert any('WORKBENCH_WORKSPACE="data/demo"' in line for line in _make_dry_run())


# --- the installed entry point ---------------------------------------------------------------------

def test_entry_point_is_declared():
    import tomllib

    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["workbench"] == "core.__main__:main"
    from core.__main__ import main as entry

    with pytest.raises(SystemExit) as exc:
        _run_entry(entry, ["--help"])
    assert exc.value.code == 0
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    assert "pip install" in makefile and "-e ." in makefile


def _run_entry(entry, argv):
    saved = sys.argv
    sys.argv = ["workbench", *argv]
    try:
        return entry()
    finally:
        sys.argv = saved


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
@pytest.mark.slow
def test_installed_workbench_command_works_from_any_folder(tmp_path):
    """The installed `workbench` = `python -m core`, from a folder that is not the repository."""
    workbench = install_workbench(tmp_path / "venv")
    src = small_scale_file(tmp_path / "scale.jsonl")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WORKBENCH_WORKSPACE")}
    run = subprocess.run([str(workbench), "--workspace", "ws", "--no-progress", "datasets",
                          "import", str(src), "--name", "real"], cwd=elsewhere, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert (elsewhere / "ws" / "workspace.json").exists()
    listed = subprocess.run([str(workbench), "--workspace", "ws", "--json", "datasets", "list"],
                            cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60)
    assert [d["name"] for d in json.loads(listed.stdout)] == ["real"]
