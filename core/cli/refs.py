"""Names inside the workspace, paths outside it: how a command-line argument names a workspace object.

One rule for every command: a *name* (``aita-ridge``; a study run ``rent/r1``) is an object of the
``--workspace`` (``scorers/aita-ridge/``, ``studies/rent/runs/r1/``), wherever the command runs from;
anything else is a file path, resolved against the current folder as usual. So the README's
recipes work from any folder.

>>> from pathlib import Path
>>> from core.workspace import Workspace
>>> ws = Workspace(Path("/w"))
>>> scorer_dir(ws, "aita-ridge"), scorer_dir(ws, "./models/mine")
(PosixPath('/w/scorers/aita-ridge'), PosixPath('models/mine'))
"""

from __future__ import annotations

from pathlib import Path

from core.base.errors import WorkbenchError
from core.workspace import Workspace, is_valid_name


def exists(path: Path) -> bool:
    """``path.exists()`` that is False, not an OSError, for a name the system cannot even look up
    (longer than a file name may be, a NUL byte)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def scorer_dir(ws: Workspace, ref: str) -> Path:
    """A scorer: ``NAME`` → ``scorers/NAME`` of the workspace; a path → that folder."""
    return ws.scorers_dir / ref if is_valid_name(ref) else Path(ref)


def study_run(ref: str) -> tuple[str, str] | None:
    """``(study, run_id)`` when ``ref`` has the form ``STUDY/RUN`` of two names, else None.

    >>> study_run("rent/r1"), study_run("runs/r1/run.jsonl"), study_run("r1")
    (('rent', 'r1'), None, None)
    """
    parts = ref.split("/")
    return (parts[0], parts[1]) if len(parts) == 2 and all(is_valid_name(p) for p in parts) else None


def study_run_file(ws: Workspace, ref: str, *, scored: bool) -> Path:
    """A study run's ``run.jsonl`` (``scored``: ``run_scored.jsonl``): ``STUDY/RUN`` names a run of
    the workspace (it must exist there); a path is that file."""
    # deferred: only the study and scorer commands need it (CLI start-up)
    from core.study.runs import RUN_FILE, SCORED_FILE, run_dir

    named = study_run(ref)
    if named is None:
        return Path(ref)
    folder = run_dir(ws, *named)
    if not folder.is_dir():
        raise WorkbenchError(f"no study run {ref!r} in {ws.studies_dir} (STUDY/RUN_ID; see `study list`)")
    return folder / (SCORED_FILE if scored else RUN_FILE)
