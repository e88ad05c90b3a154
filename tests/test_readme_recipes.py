"""The README's perspective-study recipe runs as written, with ``--workspace``, from another folder
(issue 24: names inside the workspace, paths outside it): every command of its code block is run in
order on the real AITA files, from a folder that is not the workspace."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from core.cli import main

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
pytestmark = [pytest.mark.fixtures, pytest.mark.slow]


def recipe(heading: str) -> list[list[str]]:
    """The commands of the first ```bash block under ``heading`` (``&&`` splits a line)."""
    section = README[README.index(heading):]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, f"no bash block under {heading}"
    commands = []
    for line in block.group(1).splitlines():
        for part in line.split("&&"):
            words = shlex.split(part)
            if words[:3] == ["python", "-m", "core"]:
                commands.append(words[3:])
    return commands


def test_the_perspective_study_recipe_runs_from_any_folder(tmp_path, fixtures_dir, monkeypatch):
    elsewhere, ws = tmp_path / "elsewhere", tmp_path / "ws"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    commands = recipe("## The perspective study")
    assert len(commands) >= 8
    for words in commands:
        words = [w.replace("../shared/fixtures", str(fixtures_dir)) for w in words]
        assert main(["--workspace", str(ws), "--no-progress", *words]) == 0, words
    assert list(elsewhere.iterdir()) == []  # nothing was written beside the command
    assert (ws / "scorers" / "aita-ridge").is_dir() and (ws / "studies/rent/runs/r1/run_scored.jsonl").exists()
