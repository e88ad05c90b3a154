"""Issue 9, Acceptance: no CLI command, given names built from a hostile alphabet (``../``,
absolute paths, NUL, newline, glob characters, very long), writes outside the workspace root.

Commands run in-process through ``core.cli.main``; the folder around the workspace (which holds
the targets the absolute paths aim at) is compared byte for byte before and after each command.
Output paths the user names explicitly (``--out``, ``--truth``) are where the user asked to write
and are not fuzzed.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.workspace import Workspace
from tests.helpers.judging_dataset import build_judging_dataset
from tests.helpers.safety import snapshot


@pytest.fixture(scope="module")
def box(tmp_path_factory) -> Path:
    """``box/ws``: a workspace with a dataset, its index, heuristic judgments and a label project;
    ``box/outside/``: where absolute hostile paths point."""
    root = tmp_path_factory.mktemp("box")
    (root / "outside").mkdir()
    ws = Workspace(root / "ws").ensure()
    build_judging_dataset(ws, "d", restaurants=1)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["--workspace", str(ws.root), "--no-progress", "judge", "--dataset", "d"]) == 0
        assert main(["--workspace", str(ws.root), "labels", "init", "p"]) == 0
    (root / "inputs").mkdir()
    items = root / "inputs" / "items.jsonl"
    items.write_text('{"identifier": "i1", "prompt_body": "q", "response_text": "a"}\n', encoding="utf-8")
    return root


def hostile(box: Path) -> st.SearchStrategy[str]:
    fixed = ["../x", "../../x", "..", ".", "/", str(box / "outside" / "x"), str(box / "outside"), "a/../../x",
             "x\n", "\nx", "x\x00y", "*", "?", "[ab]", "{a,b}", "**/x", "~", "~/x", "$HOME", "a" * 300,
             "../" * 40 + "x", "x/" * 100, "d\n", "p\n", "G1a/../../x", "-", " d", "d ", "C:\\x", "\\\\srv\\x",
             "org/m", "org:m", str(box / "ws" / ".." / "outside" / "y")]
    alphabet = st.sampled_from(list("./\\\x00\n*?[]{}~$ :;'\"|<>-_aZ9") + ["..", "../", str(box / "outside") + "/"])
    built = st.lists(alphabet, min_size=1, max_size=8).map("".join)
    return st.one_of(st.sampled_from(fixed), built)


def commands(box: Path, name: str) -> list[list[str]]:
    src = str(box / "ws" / "d_source.json")
    items = str(box / "inputs" / "items.jsonl")
    return [
        ["datasets", "import", src, "--name", name],
        ["datasets", "verify", name], ["datasets", "show", name],
        ["index", "--dataset", name], ["index", "--dataset", "d", "--task", name],
        ["judge", "--dataset", name], ["judge", "--dataset", "d", "--task", name],
        ["judge", "--dataset", "d", "--ensemble", f"{name}:heuristic"],
        ["judgments", "list", "--dataset", name, "--task", "G1a"],
        ["judgments", "set-gt", "--dataset", "d", "--task", "G1a", "--judge", name],
        ["judgments", "prune", "--dataset", "d", "--task", "G1a", "--judge", name],
        ["gt", "--dataset", name, "--k", "25"], ["gt", "--dataset", "d", "--task", name],
        ["gt", "--dataset", "d", "--formula", name], ["gt", "--dataset", "d", "--judge", name, "--k", "25"],
        ["gt", "trace", "--dataset", "d", "--restaurant", name],
        ["overrides", "add", "--dataset", name, "--business-id", "biz0", "--idx", "0",
         "--set", "incident_severity=severe", "--reason", "r"],
        ["overrides", "add", "--dataset", "d", "--task", name, "--business-id", "biz0", "--idx", "0",
         "--set", "incident_severity=severe", "--reason", "r"],
        ["labels", "init", name], ["labels", "export", "--project", name],
        ["labels", "import-items", items, "--dataset", name],
        ["labels", "import-items", "--from-dataset", name, "--limit", "2"],
        ["labels", "role", name, "admin"],
        ["labels", "import-reviews", str(box / "inputs" / "reviews.jsonl"), "--create-items"],
        ["labels", "export", "--project", "p"],  # writes whatever dataset names the store holds by now
    ]


def run(argv: list[str]) -> int:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse refusing an argument
            code = int(exc.code or 0)
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return code


def outside(box: Path) -> dict:
    return {k: v for k, v in snapshot(box).items() if not (k in ("ws", "inputs") or k.startswith(("ws/", "inputs/")))}


def write_inputs(box: Path, name: str) -> None:
    """The ratings file of ``labels import-reviews``: its ``dataset`` field is the hostile name."""
    line = {"dataset": name, "identifier": "i1", "reviewer_code": "ana", "score": 1,
            "review_created_at": "2024-01-01 00:00:00"}
    (box / "inputs" / "reviews.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
def test_property_no_cli_command_writes_outside_the_workspace(box):
    base = outside(box)
    ws = str(box / "ws")

    @settings(max_examples=70, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(name=hostile(box), which=st.integers(min_value=0, max_value=len(commands(box, "x")) - 1))
    def check(name: str, which: int) -> None:
        argv = ["--workspace", ws, "--no-progress", *commands(box, name)[which]]
        write_inputs(box, name)
        run(argv)
        assert outside(box) == base, argv

    check()
    # and every command once with the nastiest names
    for name in ["../../x", str(box / "outside" / "x"), "x\n", "a" * 300, "*", "../" * 40 + "x"]:
        write_inputs(box, name)
        for cmd in commands(box, name):
            run(["--workspace", ws, "--no-progress", *cmd])
            assert outside(box) == base, cmd
