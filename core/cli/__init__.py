"""``python -m core``: the same jobs as the pages, without a browser.

Every module in this package that defines ``register(subparsers)`` adds its subcommands; the
handler it sets with ``set_defaults(func=...)`` is called as ``func(args)`` and returns the exit
code (or None for 0). ``args.workspace`` is a resolved :class:`core.workspace.Workspace`,
``args.json`` asks for machine-readable output. A :class:`core.errors.WorkbenchError` (or
``ValueError``/``FileNotFoundError``, an ``OSError`` such as a full disk or a read-only folder, a
label store that is not a database) becomes one line ``error: …`` on stderr and exit code 1, with
any configured API key redacted; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from core.errors import WorkbenchError
from core.locks import clean_leftovers
from core.settings import redact
from core.workspace_choice import workspace_from_env


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every command module's subcommands."""
    prog = "workbench" if sys.argv and sys.argv[0].endswith("workbench") else "python -m core"
    parser = argparse.ArgumentParser(prog=prog, description="Scale Workbench command line.")
    parser.add_argument("--workspace", metavar="DIR", help="workspace folder (default: $WORKBENCH_WORKSPACE or data/demo)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def json_flag(p: argparse.ArgumentParser) -> None:
    """Also accept ``--json`` after a subcommand (the global flag comes before it)."""
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def emit(args: argparse.Namespace, payload: Any, text: str | None = None) -> None:
    """Print ``payload`` as JSON with ``--json``, else ``text`` (or a compact rendering)."""
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    elif text is not None:
        print(text)
    else:
        print(json.dumps(payload, indent=2, ensure_ascii=False, default=str))


def error_line(exc: BaseException) -> str:
    """One line for the user: the message of a workbench error, the reason and file of an OS
    error, never a traceback or a key."""
    if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        text = f"{exc.strerror}{where}"
    elif isinstance(exc, RecursionError):
        text = "input nested too deeply"
    elif isinstance(exc, SQLAlchemyError):
        text = f"label store: {str(getattr(exc, 'orig', None) or exc).splitlines()[0]}"
    else:
        text = str(exc) or type(exc).__name__
    return redact(" ".join(text.split()))[:2000]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        args.workspace = workspace_from_env(args.workspace)  # chosen once here and passed down
        if args.workspace.exists():
            clean_leftovers(args.workspace)  # staging folders of killed imports
        code = args.func(args)
    except (WorkbenchError, ValueError, OSError, RecursionError, OverflowError, SQLAlchemyError) as exc:
        if getattr(args, "debug", False):
            raise
        print(f"error: {error_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: finished work is saved; run again with --resume to continue", file=sys.stderr)
        return 130
    return int(code or 0)
