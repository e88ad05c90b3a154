"""core.cli imports only the module of the command being run (CLI start-up, issue 27)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from core.cli import COMMANDS, build_parser, command_modules, command_of, main


def test_the_command_map_names_every_registered_command_and_its_module():
    registered = {}
    for name in command_modules():
        register = getattr(importlib.import_module(f"core.cli.{name}"), "register", None)
        if register is None:
            continue
        sub = argparse.ArgumentParser().add_subparsers()
        register(sub)
        registered.update({command: name for command in sub.choices})
    assert registered == COMMANDS


def test_a_command_imports_only_its_own_module():
    code = ("import sys; from core.cli import build_parser; build_parser('index'); "
            "print(sorted(m for m in sys.modules if m.startswith('core.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['core.cli.index']"


def test_a_command_without_the_label_store_does_not_import_sqlalchemy(tmp_path):
    code = ("import sys; from core.cli import main; code = main(['--workspace', sys.argv[1], 'datasets', 'list']); "
            "print(code, 'sqlalchemy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "0 False"


@pytest.mark.parametrize(("argv", "command"), [
    (["gt", "--k", "25"], "gt"),
    (["--workspace", "gt", "index", "--dataset", "d"], "index"),  # the folder's name is not the command
    (["--json", "--no-progress", "show", "run-1"], "show"),
    (["--", "run"], "run"),
    (["--help"], None),
    ([], None),
])
def test_command_of(argv, command):
    assert command_of(argv) == command


def test_help_without_a_command_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(command in out for command in COMMANDS)
    assert set(COMMANDS) <= set(next(a for a in build_parser()._actions
                                     if isinstance(a, argparse._SubParsersAction)).choices)


def test_an_unknown_command_is_refused_with_the_valid_ones(capsys):
    with pytest.raises(SystemExit):
        main(["nonsense"])
    assert "invalid choice: 'nonsense'" in capsys.readouterr().err


def test_a_run_imports_neither_scikit_learn_nor_openai_duckdb_or_pyarrow(small_demo, tmp_path):
    """A whole run through the offline model, scored (macro-F1 without scikit-learn, SPEC §4.2): what
    it does not need it does not import (openai loads on the first call reaching an endpoint)."""
    import shutil

    ws = tmp_path / "ws"
    shutil.copytree(small_demo, ws)
    code = ("import sys; from core.cli import main; code = main(['--workspace', sys.argv[1], '--json', '--no-progress', "
            "'run', '--dataset', 'demo', '--method', 'direct', '--model', 'heuristic', '--run-id', 'lazy']); "
            "heavy = ('sklearn', 'scipy', 'openai', 'httpx2', 'duckdb', 'pyarrow', 'pandas', 'sqlalchemy', 'altair'); "
            "print(code, [m for m in heavy if m in sys.modules], file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(ws)], capture_output=True, text=True, check=True)
    assert proc.stderr.strip().splitlines()[-1] == "0 []"
    assert (ws / "runs" / "lazy" / "results.json").exists()
