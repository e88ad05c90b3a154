"""``python -m core``: the same jobs as the pages, without a browser.

Every module in this package that defines ``register(subparsers)`` adds its subcommands; the
handler it sets with ``set_defaults(func=...)`` is called as ``func(args)`` and returns the exit
code (or None for 0). ``args.workspace`` is a resolved :class:`core.workspace.Workspace`,
``args.json`` asks for machine-readable output. A :class:`core.base.errors.WorkbenchError` (or
``ValueError``/``FileNotFoundError``, an ``OSError`` such as a full disk or a read-only folder, a
label store that is not a database) becomes one line ``error: …`` on stderr and exit code 1, with
any configured API key redacted; ``--debug`` shows the traceback instead.

Only the module of the command being run is imported (:data:`COMMANDS` maps each command to its
module; ``tests/core/test_cli_lazy.py`` checks the map against what the modules register): a
command pays for its own libraries, not for every other command's. ``--help`` without a command
builds the full parser.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import re
import sys
from collections.abc import Sequence
from typing import Any

from core.base.errors import WorkbenchError
from core.base.settings import redact
from core.workspace.choice import workspace_from_env
from core.workspace.locks import clean_leftovers

# command -> the module of this package that registers it
COMMANDS: dict[str, str] = {
    "audit": "audit", "claim": "claim", "datasets": "datasets", "demo": "demo", "gold": "gold", "gt": "gt", "index": "index",
    "jobs": "jobs",
    "judge": "judge", "judges": "judges", "judgments": "judgments", "labels": "labels", "overrides": "overrides",
    "policies": "policies", "release": "release", "run": "run", "runs": "runs", "score": "score", "show": "score", "scorer": "scorer",
    "study": "study",
}
_GLOBAL_VALUE_OPTIONS = ("--workspace",)


def command_modules() -> list[str]:
    """Every module of this package (the ones defining ``register`` add commands)."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: with ``command`` (a key of :data:`COMMANDS`), only that command's
    module is imported and registered; without, every module's subcommands."""
    prog = "workbench" if sys.argv and sys.argv[0].endswith("workbench") else "python -m core"
    parser = argparse.ArgumentParser(prog=prog, description="Scale Workbench command line.")
    parser.add_argument("--workspace", metavar="DIR", help="workspace folder (default: $WORKBENCH_WORKSPACE or data/demo)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = [COMMANDS[command]] if command in COMMANDS else command_modules()
    for name in names:
        register = getattr(importlib.import_module(f"{__name__}.{name}"), "register", None)
        if register is not None:
            register(sub)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command named in ``argv`` (the first word that is not a global option), if any.

    >>> command_of(["--workspace", "ws", "--json", "gt", "--k", "25"])
    'gt'
    >>> command_of(["--help"]) is None
    True
    """
    args = iter(argv)
    for arg in args:
        if arg in _GLOBAL_VALUE_OPTIONS:
            next(args, None)
        elif arg == "--":
            return next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


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


def _is_sqlalchemy_error(exc: BaseException) -> bool:
    sa_exc = sys.modules.get("sqlalchemy.exc")
    return sa_exc is not None and isinstance(exc, sa_exc.SQLAlchemyError)


def error_line(exc: BaseException) -> str:
    """One line for the user: the message of a workbench error, the reason and file of an OS
    error, never a traceback or a key."""
    if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        text = f"{exc.strerror}{where}"
    elif isinstance(exc, RecursionError):
        text = "input nested too deeply"
    elif _polars_os_error(exc) is not None:
        text = str(_polars_os_error(exc))
    elif _is_sqlalchemy_error(exc):
        from core.labeling.store.engine import advice  # sqlalchemy is loaded already (the error is its)

        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        hint = advice(reason, "")
        text = f"label store: {reason}" + (f"; {hint}" if hint else "")
    else:
        text = str(exc) or type(exc).__name__
    return redact(" ".join(text.split()))[:2000]


_OS_ERROR = re.compile(r"([^:\n]*) \(os error (\d+)\)")  # how polars (Rust) reports a failed read or write


def _polars_os_error(exc: BaseException) -> str | None:
    """The OS error inside a polars exception (a full disk while a table is written, a read-only
    folder), as one line, or None for any other exception."""
    pl_exc = sys.modules.get("polars.exceptions")
    if pl_exc is None or not isinstance(exc, pl_exc.PolarsError):
        return None
    found = _OS_ERROR.search(str(exc))
    return None if found is None else f"{found.group(1).strip()} (while writing or reading a table)"


def _reported(exc: BaseException) -> bool:
    """True for the errors that become one ``error:`` line (the label store's database errors
    included: SQLAlchemy is only imported by the commands that open the store; and a polars
    table write or read that failed for an OS reason, such as a full disk)."""
    if isinstance(exc, (WorkbenchError, ValueError, OSError, RecursionError, OverflowError)):
        return True
    return _is_sqlalchemy_error(exc) or _polars_os_error(exc) is not None


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_of(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        args.workspace = workspace_from_env(args.workspace)  # chosen once here and passed down
        if args.workspace.exists():
            clean_leftovers(args.workspace)  # staging folders of killed imports
        code = args.func(args)
    except Exception as exc:
        if not _reported(exc) or getattr(args, "debug", False):
            raise
        print(f"error: {error_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: finished work is saved; run again with --resume to continue", file=sys.stderr)
        return 130
    return int(code or 0)
