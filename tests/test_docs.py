"""The README describes every CLI command and every page (Datasette's test_docs idea)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from core.cli import build_parser
from core.ui import PAGES

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = (*prefix, name)
                found.append(path)
                found.extend(_commands(sub, path))
    return found


COMMANDS = _commands(build_parser())


def test_there_are_commands():
    assert ("demo",) in COMMANDS and ("datasets", "import") in COMMANDS


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_readme_describes_every_cli_command(command):
    pattern = r"(?:python -m core|workbench) " + r"\s+".join(re.escape(part) for part in command) + r"\b"
    assert re.search(pattern, README), f"README does not describe `python -m core {' '.join(command)}`"


@pytest.mark.parametrize("spec", PAGES, ids=[p.title for p in PAGES])
def test_readme_describes_every_page(spec):
    assert f"**{spec.title}**" in README, f"README's page table lacks **{spec.title}**"
