"""Entry point for ``python -m core`` and the installed ``workbench`` command (same thing)."""

from __future__ import annotations

import sys

from core.cli import main as cli_main


def main() -> int:
    """Run the command line with ``sys.argv`` (the ``workbench`` console script calls this)."""
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
