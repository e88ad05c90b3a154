"""Dataset locks (SPEC §1.4): sha256 of the sources and of the normalised tables.

``dataset.lock.json``::

    {"format_version": 1, "name", "layout", "created_at",
     "sources": [{"path", "sha256", "bytes"}],
     "tables": {"restaurants.parquet": sha256, "reviews.parquet": sha256},
     "counts": {"restaurants": n, "reviews": n}}

:func:`verify_dataset` re-hashes everything (the ``verify`` command). :func:`require_verified` is
what later steps call before they read a dataset: it re-hashes the tables once per state of the
files (keyed by path, mtime and size), so repeated calls cost a few ``stat`` calls, and keeps each
table's sha256 beside it for the next process (:func:`core.base.memo.stamped`: 0.2 s of every page's
first visit at 2 M reviews).
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from core.base.clock import now_iso
from core.base.errors import LockError, UnknownNameError
from core.base.files import sha256_file
from core.base.memo import stamped
from core.workspace import Workspace

LOCK_NAME = "dataset.lock.json"
TABLES = ("restaurants.parquet", "reviews.parquet")
LOCK_FORMAT = 1


def hash_sources(paths: Iterable[str | Path], root: str | Path | None = None) -> list[dict[str, Any]]:
    """``[{path, sha256, bytes}]`` of source files. A source inside the workspace ``root`` is
    recorded relative to it (``sources/demo/review.json``), so a copied workspace checks its own
    copy, not the original's; one outside keeps its absolute path."""
    base = Path(root).resolve() if root is not None else None
    out = []
    for path in paths:
        path = Path(path).resolve()
        shown = path.relative_to(base) if base is not None and path.is_relative_to(base) else path
        out.append({"path": str(shown), "sha256": sha256_file(path), "bytes": path.stat().st_size})
    return out


def source_path(ws: Workspace, recorded: str) -> Path:
    """Where a lock's source is: a relative path is inside the workspace (see :func:`hash_sources`)."""
    path = Path(recorded)
    return path if path.is_absolute() else ws.root / path


def make_lock(
    folder: Path, name: str, layout: str, sources: list[dict[str, Any]], counts: dict[str, int]
) -> dict[str, Any]:
    """The lock of the tables written in ``folder`` (hashed in parallel: hashlib frees the GIL)."""
    with ThreadPoolExecutor(max_workers=len(TABLES)) as pool:
        hashes = dict(zip(TABLES, pool.map(sha256_file, [folder / t for t in TABLES]), strict=True))
    return {
        "format_version": LOCK_FORMAT,
        "name": name,
        "layout": layout,
        "created_at": now_iso(),
        "sources": sources,
        "tables": hashes,
        "counts": counts,
    }


def read_lock(ws: Workspace, name: str) -> dict[str, Any]:
    """The lock of dataset ``name``.

    Raises:
        UnknownNameError: no such dataset.
        LockError: the dataset folder has no readable lock.
    """
    folder = ws.dataset_dir(name)
    if not folder.is_dir():
        raise UnknownNameError("dataset", name, ws.datasets())
    path = folder / LOCK_NAME
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LockError(f"dataset {name!r} has no {LOCK_NAME}: re-import it") from None
    except (OSError, ValueError) as exc:
        raise LockError(f"dataset {name!r}: {LOCK_NAME} is unreadable ({exc}); re-import it") from None
    if not isinstance(lock, dict) or not isinstance(lock.get("tables"), dict):
        raise LockError(f"dataset {name!r}: {LOCK_NAME} has no 'tables'; re-import it")
    return lock


def _check_tables(folder: Path, name: str, lock: dict[str, Any], *, kept: bool = False) -> None:
    """Each table's sha256 against the lock; ``kept``: the sha256 kept beside a table while its
    stamp (inode, size, mtime) is unchanged (:func:`core.base.memo.stamped`), as a new process's
    :func:`require_verified` takes it; :func:`verify_dataset` always re-hashes."""
    for table in TABLES:
        expected = lock["tables"].get(table)
        path = folder / table
        if not path.is_file():
            raise LockError(f"dataset {name!r}: {table} is missing; re-import the dataset")
        actual = stamped(path, "sha256", functools.partial(sha256_file, path)) if kept else sha256_file(path)
        if actual != expected:
            raise LockError(
                f"dataset {name!r}: {table} changed since import (sha256 {actual[:12]}… is not the "
                f"locked {str(expected)[:12]}…); re-import it with --replace"
            )


def verify_dataset(ws: Workspace, name: str) -> dict[str, Any]:
    """Re-hash a dataset's tables and (where they still exist) its sources.

    Returns:
        ``{name, ok: True, tables: {file: "ok"}, sources: [{path, status}], warnings: [...]}``;
        a source that no longer exists is status "moved" and a warning, not an error.

    Raises:
        LockError: a table or an existing source differs from the lock.
    """
    lock = read_lock(ws, name)
    _check_tables(ws.dataset_dir(name), name, lock)
    sources, warnings = [], []
    for source in lock.get("sources", []):
        path = source_path(ws, source["path"])
        if not path.is_file():
            sources.append({"path": str(path), "status": "moved"})
            warnings.append(f"source moved: {path} no longer exists (the dataset's tables are intact)")
            continue
        if path.stat().st_size != source.get("bytes") or sha256_file(path) != source.get("sha256"):
            raise LockError(
                f"dataset {name!r}: source {path} changed since import; re-import it with --replace "
                "(or restore the original file)"
            )
        sources.append({"path": str(path), "status": "ok"})
    return {"name": name, "ok": True, "tables": dict.fromkeys(TABLES, "ok"), "sources": sources, "warnings": warnings}


def _file_state(path: Path) -> tuple[str, int, int, int]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return (str(path), -1, -1, -1)
    return (str(path), st.st_ino, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=128)
def _verified_lock(root: str, name: str, states: tuple[tuple[str, int, int, int], ...]) -> dict[str, Any]:
    # ``states`` is only part of the cache key: any change to the lock or a table misses the cache.
    ws = Workspace(Path(root))
    lock = read_lock(ws, name)
    _check_tables(ws.dataset_dir(name), name, lock, kept=True)
    return lock


def require_verified(ws: Workspace, name: str) -> dict[str, Any]:
    """The dataset's lock, after checking its tables still match it (cached per file state).

    Later steps call this before reading a dataset. It checks the tables, the data they read; the
    sources are checked by :func:`verify_dataset` (the ``verify`` command).

    Raises:
        UnknownNameError: no such dataset.
        LockError: the tables changed, or the lock is missing or unreadable.
    """
    folder = ws.dataset_dir(name)
    for attempt in range(3):
        states = tuple(_file_state(folder / f) for f in (LOCK_NAME, *TABLES))
        try:
            return copy.deepcopy(_verified_lock(str(ws.root), name, states))
        except LockError:
            # an import's --replace swapped the folder while we read it: check the new one
            if attempt == 2 or tuple(_file_state(folder / f) for f in (LOCK_NAME, *TABLES)) == states:
                raise
    raise AssertionError("unreachable")
