"""Issue 26, High 1: a symbolic link planted anywhere below a workspace root never redirects a
write, an append, a folder made or a file deleted (core.base.files' confinement)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.base import files
from core.base.errors import UnsafePathError
from core.workspace import Workspace
from tests.helpers.safety import snapshot


@pytest.fixture()
def box(tmp_path):
    """A workspace and an outside folder holding one file, which nothing may change."""
    ws = Workspace(tmp_path / "ws").ensure()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.jsonl").write_text('{"keep": 1}\n', encoding="utf-8")
    return ws, outside


def _writes(target: Path):
    """Every write helper, each writing ``target`` (a file path) its own way."""
    return {
        "write_bytes_atomic": lambda: files.write_bytes_atomic(target, b"x"),
        "write_text_atomic": lambda: files.write_text_atomic(target, "x"),
        "write_json_atomic": lambda: files.write_json_atomic(target, {"a": 1}),
        "write_jsonl_atomic": lambda: files.write_jsonl_atomic(target, [{"a": 1}]),
        "atomic_path": lambda: _atomic_path(target),
        "atomic_dir": lambda: _atomic_dir(target),
        "append_jsonl": lambda: files.append_jsonl(target, [{"a": 1}]),
        "append_jsonl_bytes": lambda: files.append_jsonl_bytes(target, b'{"a": 1}\n'),
        "make_dirs": lambda: files.make_dirs(target),
        "open_append": lambda: files.open_append(target).close(),
        "open_regular": lambda: os.close(files.open_regular(target, os.O_RDWR)),
        "writable_file": lambda: files.writable_file(target, companions=("-wal",)),
        "remove_file": lambda: files.remove_file(target),
        "remove_tree": lambda: files.remove_tree(target),
    }


def _atomic_path(target: Path) -> None:
    with files.atomic_path(target) as tmp:
        tmp.write_bytes(b"x")


def _atomic_dir(target: Path) -> None:
    with files.atomic_dir(target) as tmp:
        files.write_bytes_atomic(tmp / "f", b"x")


WRITERS = list(_writes(Path("x")))


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("depth", ["area", "below_area", "two_below"])
def test_high1_a_linked_folder_on_the_way_is_refused_and_nothing_outside_changes(box, writer, depth):
    ws, outside = box
    parts = {"area": ["runs"], "below_area": ["runs", "evil"], "two_below": ["runs", "r1", "history"]}[depth]
    (ws.root.joinpath(*parts[:-1])).mkdir(parents=True, exist_ok=True)
    ws.root.joinpath(*parts).symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    target = ws.root.joinpath(*parts, "sub", "file.jsonl")
    with pytest.raises(UnsafePathError, match=r"refusing to write .*symbolic link to .*outside"):
        _writes(target)[writer]()
    assert snapshot(outside) == before


@pytest.mark.parametrize("writer", WRITERS)
def test_high1_a_linked_file_is_never_written_through(box, writer):
    ws, outside = box
    (ws.root / "cache").mkdir()
    link = ws.root / "cache" / "llm.jsonl"
    link.symlink_to(outside / "keep.jsonl")
    before = snapshot(outside)
    try:
        _writes(link)[writer]()
    except UnsafePathError as exc:  # appends and by-name writers refuse it ...
        assert "refusing to write" in str(exc)
    else:  # ... whole-file writers replace the link itself, inside the workspace
        assert not link.is_symlink() or writer == "writable_file"
    assert snapshot(outside) == before


def test_high1_a_link_to_a_folder_inside_the_workspace_is_refused_too(box):
    ws, _ = box
    (ws.root / "runs" / "real").mkdir(parents=True)
    (ws.root / "runs" / "alias").symlink_to(ws.root / "runs" / "real", target_is_directory=True)
    with pytest.raises(UnsafePathError):
        files.write_json_atomic(ws.root / "runs" / "alias" / "results.json", {})
    assert list((ws.root / "runs" / "real").iterdir()) == []


def test_high1_a_fifo_planted_as_a_log_is_refused_without_hanging(box):
    ws, _ = box
    (ws.root / "judgments").mkdir()
    os.mkfifo(ws.root / "judgments" / "log.jsonl")
    with pytest.raises(UnsafePathError):
        files.append_jsonl(ws.root / "judgments" / "log.jsonl", [{"a": 1}])


def test_high1_the_root_itself_may_be_reached_through_a_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    ws = Workspace(tmp_path / "alias").ensure()
    files.append_jsonl(ws.root / "cache" / "llm.jsonl", [{"a": 1}])
    files.write_json_atomic(ws.root / "runs" / "r1" / "results.json", {"ok": True})
    assert (real / "cache" / "llm.jsonl").read_text() == '{"a": 1}\n'
    assert (real / "runs" / "r1" / "results.json").exists()


def test_high1_a_path_under_no_workspace_is_written_as_before(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    files.write_json_atomic(tmp_path / "link" / "out.json", {"a": 1})  # a user's --out through their own link
    assert (tmp_path / "real" / "out.json").exists()


def test_high1_a_link_swapped_in_after_the_folder_was_opened_does_not_redirect(box):
    """The check is the open: a folder replaced by a link between two writes is refused at the
    second, and a write in flight goes to the folder that was checked."""
    ws, outside = box
    folder = ws.root / "runs" / "r1"
    files.write_json_atomic(folder / "a.json", {})
    with files.atomic_path(folder / "b.parquet") as tmp:
        os.rename(folder, ws.root / "runs" / "moved")  # the attacker moves the folder away ...
        folder.symlink_to(outside, target_is_directory=True)  # ... and plants a link in its place
        (ws.root / "runs" / "moved" / tmp.name).write_bytes(b"data")  # the writer's file, in the real folder
    assert (ws.root / "runs" / "moved" / "b.parquet").read_bytes() == b"data"
    assert snapshot(outside) == {"keep.jsonl": snapshot(outside)["keep.jsonl"]}
    with pytest.raises(UnsafePathError):
        files.write_json_atomic(folder / "c.json", {})


# -- the class: no module writes below a workspace by itself -----------------------------------------

_WRITES = {"rmtree", "write_text", "write_bytes", "mkdir", "makedirs", "unlink", "touch", "symlink_to", "copyfile",
           "copytree", "copy2"}
_MODULE_WRITES = {("os", "replace"), ("os", "rename"), ("os", "remove"), ("shutil", "copy"), ("shutil", "move")}
# (file, call): why it may write without core.base.files
ALLOWED = {
    ("core/datasets/staging.py", "rmtree"): "its own spill folder inside a staging folder made by make_dirs",
    ("core/datasets/staging.py", "unlink"): "its own bucket and sorted files inside that staging folder",
    ("core/datasets/store.py", "rmtree"): "the staged rows inside an atomic_dir's fresh temporary folder",
    ("core/ground_truth/policies/addm_import.py", "write_text"): "a scratch copy in a tempfile.TemporaryDirectory",
    ("core/workspace/locks.py", "rmdir"): "an empty lock folder (rmdir never follows a link)",
    ("core/workspace/__init__.py", "mkdir"): "the workspace root itself (trusted as given)",
    ("core/release/build.py", "mkdir"): "the release's fresh staging folder beside --out (mkdir refuses one that exists)",
}


def _raw_writes() -> set[tuple[str, str, int]]:
    import ast

    root = Path(__file__).resolve().parents[2]
    found = set()
    for path in sorted((root / "core").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in ("core/base/files.py", "core/base/confine.py", "core/base/reading.py"):  # the write helpers
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in _WRITES or (owner, name) in _MODULE_WRITES:
                found.add((rel, name, node.lineno))
            elif name == "open" and isinstance(f, ast.Name):
                mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
                if isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax+"):
                    found.add((rel, "open", node.lineno))
    return found


def test_high1_every_write_in_core_goes_through_core_files():
    """The class behind High 1: a write made with open/mkdir/unlink/rmtree/os.replace by a module
    itself follows links; every one goes through core.base.files (or is listed above with its reason)."""
    stray = sorted(f"{rel}:{line}: {name}" for rel, name, line in _raw_writes() if (rel, name) not in ALLOWED)
    assert stray == [], "write through core.base.files (make_dirs, remove_tree, write_*_atomic, append_jsonl ...):\n" + \
        "\n".join(stray)
