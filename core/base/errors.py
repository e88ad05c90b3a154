"""Errors the workbench raises on purpose; the CLI prints them as one line, pages as st.error."""

from __future__ import annotations

from pathlib import Path


class WorkbenchError(Exception):
    """Base class of every error a user is meant to read."""


class DataError(WorkbenchError):
    """Bad input data: names the file, the line (1-based) and the field where known.

    >>> str(DataError("not valid JSON", path="r.jsonl", line=3))
    'r.jsonl:3: not valid JSON'
    >>> str(DataError("expected a string", path="r.jsonl", line=3, field="reviews[2].text"))
    "r.jsonl:3: field 'reviews[2].text': expected a string"
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path or ""
        if self.line is not None:
            where = f"{where}:{self.line}"
        parts = [where] if where else []
        if self.field:
            parts.append(f"field {self.field!r}")
        parts.append(self.message)
        return ": ".join(parts)


class LockError(WorkbenchError):
    """A dataset's files no longer match its dataset.lock.json."""


class UnknownNameError(WorkbenchError, KeyError):
    """An unknown registry name; the message lists the valid ones."""

    def __init__(self, kind: str, name: str, valid: list[str] | tuple[str, ...]) -> None:
        self.kind, self.name, self.valid = kind, name, list(valid)
        super().__init__(f"unknown {kind} {name!r}; valid: {', '.join(sorted(self.valid)) or '(none)'}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class IndexMissingError(WorkbenchError):
    """The keyword index a step needs is missing, out of date, or lacks the task."""


class ReadOnlyError(WorkbenchError):
    """A write refused because the deployment is read-only (``WORKBENCH_MODE=demo``)."""


class UnsafePathError(WorkbenchError, ValueError):
    """A write refused because its path leads through a symbolic link (or another non-folder)
    below a workspace root, or resolves outside it: a planted link must never redirect a write."""
