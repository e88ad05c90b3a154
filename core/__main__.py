"""Entry point for ``python -m core`` and the installed ``workbench`` command (same thing).

After ``run`` the process ends without the interpreter's teardown (freeing every module of
polars, numpy and openai one object at a time: 0.3–0.6 s on this machine, issue 27): the exit
handlers run and the output is flushed, then the process exits with the command's code. Every
file the run writes is closed and synced before the command returns. With a thread still
running, or output that cannot be flushed (a closed pipe), the ordinary exit takes over.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

from core.cli import command_of
from core.cli import main as cli_main

FAST_EXIT = frozenset({"run"})  # commands whose process ends without the interpreter's teardown


def main() -> int:
    """Run the command line with ``sys.argv`` (the ``workbench`` console script calls this)."""
    code = cli_main()
    if command_of(sys.argv[1:]) in FAST_EXIT:
        exit_now(code)
    return code


def exit_now(code: int) -> None:
    """End the process with ``code`` as a normal exit would, without freeing its modules: the
    ``atexit`` handlers run, stdout and stderr are flushed, then ``os._exit``. Returns (the
    ordinary exit follows) when another thread is alive, which that exit would wait for, or
    when the output cannot be flushed, which that exit reports."""
    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()  # noqa: SLF001 - the handlers a normal exit runs (they run once)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
