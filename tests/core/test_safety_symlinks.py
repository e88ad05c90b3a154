"""Issue 26, High 1, end to end: a link planted at each of the 12 write paths the probe redirected
(and the lock and staging folders) sends nothing outside the workspace: the outside folder stays
byte for byte what it was, and the command says which link it refused."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from core.cli import main
from core.workspace import Workspace
from tests.helpers.safety import snapshot

pytestmark = pytest.mark.fixtures


def _cli(ws: Workspace, *args: str) -> Callable[[], int]:
    return lambda: main(["--workspace", str(ws.root), "--no-progress", *args])


def _start_job(ws: Workspace) -> int:
    from core.jobs import start_job

    start_job(ws, "run", {"config": {"dataset": "demo", "method": "keyword", "k": 25}})
    return 0


def _cache_put(ws: Workspace) -> int:
    from core.llm import workspace_cache

    workspace_cache(ws).put("k", {"text": "an answer"})
    return 0


def _gold_answers(ws: Workspace) -> int:
    from core.gold import store
    from core.gold.answers import expected_answers, write_answers_file
    from core.gold.items import load_gold_files

    items = load_gold_files(store.set_files(ws, "demo_glossary"))
    write_answers_file(store.answers_path(ws, "demo_glossary", "mine"), items, expected_answers(items))
    return 0


def _index(ws: Workspace) -> int:
    shutil.rmtree(ws.root / "index" / "demo")
    return _cli(ws, "index", "--dataset", "demo")()


def _study_run(ws: Workspace) -> int:
    assert main(["--workspace", str(ws.root), "--no-progress", "study", "grid", "--study", "s1"]) == 0
    return _cli(ws, "study", "collect", "--study", "s1", "--model", "offline:advisor-balanced", "--run-id", "r1")()


# (name, link inside the workspace, link to a folder?, action)
CASES: list[tuple[str, str, bool, Callable[[Workspace, Path], Callable[[], int]]]] = [
    ("runs/ID", "runs/evil", True,
     lambda ws, _: _cli(ws, "run", "--dataset", "demo", "--method", "keyword", "--run-id", "evil")),
    ("jobs/", "jobs", True, lambda ws, _: lambda: _start_job(ws)),
    ("cache/llm.jsonl", "cache/llm.jsonl", False, lambda ws, _: lambda: _cache_put(ws)),
    ("judgment log", "judgments/demo/G1a/heuristic-v1.jsonl", False,
     lambda ws, _: _cli(ws, "judge", "--dataset", "demo", "--task", "G1a", "--judge", "heuristic")),
    ("labels.sqlite", "labels.sqlite", False, lambda ws, _: _cli(ws, "labels", "init", "p")),
    ("gold/reports", "gold/reports", True, lambda ws, _: _cli(ws, "gold", "eval", "--set", "demo_glossary")),
    ("gold/history.jsonl", "gold/history.jsonl", False,
     lambda ws, _: _cli(ws, "gold", "eval", "--set", "demo_glossary")),
    ("gold/answers/SET", "gold/answers/demo_glossary", True,
     lambda ws, _: lambda: _gold_answers(ws)),
    ("gt/D/T", "gt/demo/G1a", True, lambda ws, _: _cli(ws, "gt", "--dataset", "demo", "--task", "G1a", "--k", "25")),
    ("policies/", "policies", True,
     lambda ws, head: _cli(ws, "policies", "import", str(head / "policies/G2"), "--terms", str(head / "terms"))),
    ("studies/S", "studies/s1", True, lambda ws, _: _cli(ws, "study", "grid", "--study", "s1")),
    ("studies/S/runs/R", "studies/s1/runs/r1", True, lambda ws, _: lambda: _study_run(ws)),
    (".locks/ (an index build's lock file)", ".locks/index.demo.lock", False,
     lambda ws, _: lambda: _index(ws)),
    (".staging/", ".staging", True, lambda ws, _: lambda: _index(ws)),
]


def _plant(planted: Path, outside: Path, is_dir: bool) -> None:
    """Replace ``planted`` by a link: a folder link points at ``outside``; a file link at a file there
    that does not exist yet."""
    if planted.is_dir():
        shutil.rmtree(planted)
    elif planted.exists():
        planted.unlink()
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.symlink_to(outside if is_dir else outside / planted.name, target_is_directory=is_dir)


@pytest.mark.parametrize(("name", "link", "is_dir", "action"), CASES, ids=[c[0] for c in CASES])
def test_high1_a_planted_link_redirects_no_write(demo_ws, tmp_path, fixtures_dir, capsys, name, link, is_dir, action):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n", encoding="utf-8")
    _plant(demo_ws.root / link, outside, is_dir)
    before = snapshot(outside)
    try:
        code = action(demo_ws, fixtures_dir / "dev-ADDM/head")()
    except ValueError as exc:  # the Python API raises; the CLI prints one line
        code, err = 1, str(exc)
    else:
        err = capsys.readouterr().err
    assert snapshot(outside) == before, f"{name}: something was written outside the workspace"
    # the write-time wall names the link; the early check of an area folder says it leads outside
    assert code == 1 and re.search(r"refusing to (write|use) .*(symbolic link|outside the workspace)", err), (
        name, code, err)


def test_high1_rerun_of_the_probe_counts_no_escape(demo_ws, tmp_path, fixtures_dir, capsys):
    """The probe's count, rerun: of the 14 planted links (its 12 and two more), how many let a write out."""
    escaped = []
    for name, link, is_dir, action in CASES:
        ws_root = tmp_path / f"ws-{len(escaped)}-{abs(hash(name))}"
        shutil.copytree(demo_ws.root, ws_root)
        ws = Workspace(ws_root)
        outside = tmp_path / f"outside-{abs(hash(name))}"
        outside.mkdir()
        _plant(ws.root / link, outside, is_dir)
        try:
            action(ws, fixtures_dir / "dev-ADDM/head")()
        except ValueError:
            pass
        capsys.readouterr()
        if any(outside.iterdir()):
            escaped.append(name)
    assert escaped == []
