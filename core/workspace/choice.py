"""Which workspace a process serves: the entry points' choice, and only theirs.

The command line (``--workspace``, else ``$WORKBENCH_WORKSPACE``, else ``data/demo``) and the app
(the workspace it was started on, and the sidebar's folder under ``$WORKBENCH_WORKSPACE_ROOTS``)
choose a :class:`~core.workspace.Workspace` here once and pass it down. Nothing below them reads
the environment for a workspace: import-linter allows this module only to ``core.cli`` and
``core.ui`` (pyproject.toml).
"""

from __future__ import annotations

import os
from pathlib import Path

from core.base.settings import DEFAULT_WORKSPACE, PROJECT_ROOT, env
from core.workspace import Workspace


def workspace_from_env(explicit: str | Path | None = None) -> Workspace:
    """The workspace of ``explicit``, else ``$WORKBENCH_WORKSPACE``, else the demo's ``data/demo``."""
    return Workspace(workspace_dir(explicit))


def workspace_dir(explicit: str | Path | None = None) -> Path:
    """The workspace folder: ``explicit`` > ``$WORKBENCH_WORKSPACE`` > ``data/demo``."""
    chosen = explicit or env("WORKBENCH_WORKSPACE")
    return Path(chosen).expanduser().resolve() if chosen else DEFAULT_WORKSPACE


def workspace_roots() -> list[Path]:
    """Folders the app may open workspaces under: ``$WORKBENCH_WORKSPACE_ROOTS`` (``os.pathsep``
    separated) or, by default, the project's ``data/`` and the workspace the app was started on."""
    raw = env("WORKBENCH_WORKSPACE_ROOTS")
    chosen = [Path(p) for p in raw.split(os.pathsep) if p.strip()] if raw else [PROJECT_ROOT / "data", workspace_dir()]
    return [p.expanduser().resolve() for p in chosen]


def allowed_workspace(candidate: str | Path, roots: list[Path] | None = None) -> Path:
    """``candidate`` resolved (symlinks followed), if it lies under one of ``roots``.

    Raises:
        ValueError: the folder is outside every root (the message lists the roots).

    >>> allowed_workspace("/etc", [Path("/srv/data")])
    Traceback (most recent call last):
    ...
    ValueError: /etc is outside the workspace roots (/srv/data); set WORKBENCH_WORKSPACE_ROOTS to allow more
    """
    text = str(candidate).strip()
    if not text or "\x00" in text:
        raise ValueError("enter a workspace folder")
    roots = workspace_roots() if roots is None else roots
    path = Path(text).expanduser().resolve()
    if any(path == root or path.is_relative_to(root) for root in roots):
        return path
    listed = ", ".join(str(r) for r in roots)
    raise ValueError(f"{path} is outside the workspace roots ({listed}); set WORKBENCH_WORKSPACE_ROOTS to allow more")
