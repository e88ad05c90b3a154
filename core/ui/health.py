"""What in a workspace cannot be read, and why: Home lists it instead of the readers skipping it.

The readers of GT files, run and job records and append-only logs either raise a
:class:`core.base.errors.DataError` naming file and line, or (where a listing must go on without the
broken file) leave it out; this module finds every such file so none is skipped in silence. A log
whose last line was torn by a killed writer is listed too, as a note: that line is dropped when the
log is read and cut off by the next append.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from core.base.errors import DataError
from core.base.files import read_json, read_jsonl_log
from core.base.memo import stamped
from core.base.stamps import file_stamps
from core.ground_truth.gt_listing import scan_gt_files
from core.ground_truth.variants import load_variant, variants_dir
from core.workspace import Workspace

# Append-only JSONL logs: every *.jsonl under these folders (judgments, overrides, run samples and
# logs, the LLM response cache) and these single files (the gold answers' scoring history).
LOG_AREAS = ("judgments", "overrides", "runs", "cache")
LOG_FILES = ("gold/history.jsonl",)
T = TypeVar("T")
# JSON records the app lists (runs, jobs): a broken one would otherwise be left out of the list;
# and the GT judge choice of each dataset/task, which every judgments read consults.
RECORD_GLOBS = ("runs/*/*.json", "jobs/*.json", "judgments/*/*/_settings.json")


@dataclass(frozen=True)
class Problem:
    """One unreadable file (``severity`` "error") or a torn last line that was dropped ("note")."""

    path: Path
    reason: str
    severity: str = "error"


def _relative(ws: Workspace, path: Path) -> str:
    try:
        return str(path.relative_to(ws.root))
    except ValueError:
        return str(path)


def _reason(exc: DataError, ws: Workspace) -> str:
    """The error without the file (the table names it): "line 42: not valid JSON (…)".

    >>> _reason(DataError("not valid JSON", path="/w/x.jsonl", line=42), Workspace(Path("/w")))
    'line 42: not valid JSON'
    """
    where = ([f"line {exc.line}"] if exc.line is not None else []) + ([f"field {exc.field!r}"] if exc.field else [])
    return ": ".join([*where, exc.message])


def _log_files(ws: Workspace) -> list[Path]:
    out = []
    for area in LOG_AREAS:
        folder = ws.root / area
        if folder.is_dir():
            out += [p for p in sorted(folder.rglob("*.jsonl"))
                    if not any(part.startswith(".") for part in p.relative_to(ws.root).parts)]
    return out + [ws.root / name for name in LOG_FILES if (ws.root / name).is_file()]


def _checked_files(ws: Workspace) -> list[Path]:
    """Every file :func:`workspace_problems` reads."""
    files = sorted(ws.gt_dir.rglob("*.json")) if ws.gt_dir.is_dir() else []
    for pattern in RECORD_GLOBS:
        files += sorted(ws.root.glob(pattern))
    return [p for p in files if not p.name.startswith(".")] + _log_files(ws)  # not the hidden memos (core.base.memo)


def stamps(ws: Workspace) -> tuple[tuple[str, int, int], ...]:
    """(path, mtime_ns, size) of every file the check reads: a cache key that changes with any of them."""
    return file_stamps(_checked_files(ws))


def _read_or_problem(path: Path, ws: Workspace, read: Callable[[Path], T]) -> T | Problem:
    """``read(path)``, or the :class:`Problem` saying why the file cannot be read."""
    try:
        return read(path)
    except DataError as exc:
        return Problem(path, _reason(exc, ws))
    except OSError as exc:
        return Problem(path, f"cannot be read: {exc.strerror or exc}")


def _log_check(ws: Workspace, path: Path) -> list[str] | None:
    """[reason, severity] of a log that does not read whole, None of a sound one."""
    rows = _read_or_problem(path, ws, read_jsonl_log)
    if isinstance(rows, Problem):
        return [rows.reason, rows.severity]
    if rows.torn:
        return [f"last line torn by a killed writer: {rows.torn} line dropped (the next append cuts it off)", "note"]
    return None


def _record_check(ws: Workspace, path: Path) -> str | None:
    """Why a JSON record is not a readable JSON object, or None."""
    data = _read_or_problem(path, ws, read_json)
    if isinstance(data, Problem):
        return data.reason
    return None if isinstance(data, dict) else f"expected a JSON object, got {type(data).__name__}"


def log_problems(ws: Workspace) -> list[Problem]:
    """Broken lines of the append-only logs; a torn last line is a note with the count dropped. A large
    log's verdict is kept beside it until the log changes (:func:`core.base.memo.stamped`)."""
    out: list[Problem] = []
    for path in _log_files(ws):
        found = stamped(path, "check", partial(_log_check, ws, path))
        if found:
            out.append(Problem(path, found[0], found[1]))
    return out


def record_problems(ws: Workspace) -> list[Problem]:
    """Run and job records (JSON files) that are not valid JSON objects."""
    out: list[Problem] = []
    for pattern in RECORD_GLOBS:
        for path in sorted(ws.root.glob(pattern)):
            if path.name.startswith("."):
                continue
            reason = stamped(path, "check", partial(_record_check, ws, path))
            if reason:
                out.append(Problem(path, reason))
    return out


def variant_problems(ws: Workspace) -> list[Problem]:
    """Saved what-if variants (``gt/variants/*.json``) that cannot be loaded."""
    folder = variants_dir(ws)
    out: list[Problem] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            load_variant(ws, path.stem)
        except (DataError, ValueError) as exc:
            out.append(Problem(path, _reason(exc, ws) if isinstance(exc, DataError) else str(exc)))
    return out


def workspace_problems(ws: Workspace) -> list[Problem]:
    """Every unreadable file of ``ws`` (GT files, run and job records, logs), errors first."""
    if not ws.root.is_dir():
        return []
    problems = [Problem(path, _reason(exc, ws)) for path, exc in scan_gt_files(ws)[1]]
    problems += variant_problems(ws) + record_problems(ws) + log_problems(ws)
    return sorted(problems, key=lambda p: (p.severity != "error", str(p.path)))


def problems_table(ws: Workspace, problems: list[Problem]) -> list[dict[str, str]]:
    """Rows for a table: file (relative to the workspace), problem, and whether it is an error."""
    return [{"file": _relative(ws, p.path), "problem": p.reason, "kind": p.severity} for p in problems]
