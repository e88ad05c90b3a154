"""Process locks: one import per dataset name, one judge run per (dataset, task, judge).

A lock is ``fcntl.flock`` on a file in the workspace's ``.locks/`` folder. The kernel releases it
when the holder exits for any reason (``kill -9`` included), so a lock is never left stuck; the
file keeps the holder's pid only to name it in the error. Acquiring never waits: the second
process fails at once with a :class:`LockBusyError` saying what is running. Within one process
the lock is re-entrant per thread (an import that takes it may call a writer that takes it too);
another thread of the same process is refused like another process.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.base.errors import WorkbenchError
from core.base.files import open_regular, remove_file, remove_tree
from core.workspace import Workspace, check_name

_HELD: dict[str, tuple[int, int, int]] = {}  # path -> (thread id, fd, depth)
_HELD_LOCK = threading.Lock()


class LockBusyError(WorkbenchError):
    """Another process (or thread) holds the lock."""


def lock_path(ws: Workspace, kind: str, *parts: str) -> Path:
    """``.locks/{kind}.{part}.{part}.lock`` (every part a checked name)."""
    names = [check_name(kind, p) for p in parts]
    return ws.locks_dir / f"{kind}.{'.'.join(names)}.lock"


def lock_holder(path: Path) -> str:
    """`` (pid N)`` of the process holding ``path`` (as written by :func:`hold`), or ""."""
    return _holder(path)


def _holder(path: Path) -> str:
    try:
        pid = path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


@contextlib.contextmanager
def hold(path: Path, what: str) -> Iterator[None]:
    """Hold the lock file ``path`` for the block, or raise :class:`LockBusyError` naming ``what``."""
    key = str(path)
    me = threading.get_ident()
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is not None:
            if held[0] != me:
                raise LockBusyError(f"{what} is already running in this process; wait for it to finish")
            _HELD[key] = (held[0], held[1], held[2] + 1)
            nested = True
        else:
            nested = False
    if nested:
        try:
            yield
        finally:
            with _HELD_LOCK:
                tid, fd, depth = _HELD[key]
                _HELD[key] = (tid, fd, depth - 1)
        return
    fd = _acquire(path, what)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        with _HELD_LOCK:
            _HELD[key] = (me, fd, 1)
        yield
    finally:
        with _HELD_LOCK:
            _HELD.pop(key, None)
        # unlinked while still held: a process that opened the old file finds it replaced (_acquire
        # checks) and a failed or finished writer leaves no file behind
        with contextlib.suppress(OSError, ValueError):
            remove_file(path)
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty
        os.close(fd)


def _acquire(path: Path, what: str) -> int:
    for _ in range(100):
        try:
            fd = open_regular(path, os.O_RDWR)  # its folder made; never through a link (core.base.files)
        except FileNotFoundError:  # the folder was removed between the two calls
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockBusyError(f"{what} is already running{_holder(path)}; wait for it to finish") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # the holder unlinked it as we opened it: lock the new file
    raise LockBusyError(f"{what}: could not take the lock file {path}")


def is_held(path: Path) -> bool:
    """True when some process (this one included) holds the lock file ``path``."""
    if str(path) in _HELD:
        return True
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def dataset_lock(ws: Workspace, name: str) -> contextlib.AbstractContextManager[None]:
    """The lock an import (or replace) of dataset ``name`` holds from its check to its rename."""
    return hold(lock_path(ws, "dataset", name), f"an import of dataset {name!r}")


def index_lock(ws: Workspace, name: str) -> contextlib.AbstractContextManager[None]:
    """The lock a keyword-index build of dataset ``name`` holds."""
    return hold(lock_path(ws, "index", name), f"a keyword-index build of dataset {name!r}")


def staging_for(ws: Workspace, kind: str, name: str) -> Path:
    """``.staging/{kind}.{name}/``: where a writer holding ``{kind}.{name}``'s lock builds a folder."""
    return ws.staging_dir / f"{kind}.{check_name(kind, name)}"


def remove_empty(*folders: Path) -> None:
    """Remove each folder if it is empty (a writer's staging folder after its rename)."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def clean_leftovers(ws: Workspace) -> list[str]:
    """Delete staging folders no running writer owns (a killed import's half-built dataset, a
    replaced folder a killed process did not delete). Called when the CLI or the app starts.

    Also removes the hidden ``.NAME.*.tmp`` / ``.NAME.old.*`` folders that older versions staged
    inside ``datasets/`` and ``index/``. Never raises (a read-only workspace keeps its leftovers,
    which no reader sees). Returns the removed paths.
    """
    removed: list[str] = []
    candidates: list[tuple[Path, Path | None]] = []
    with contextlib.suppress(OSError, ValueError):  # ValueError: a planted link (left alone)
        if ws.staging_dir.is_dir():
            for entry in ws.staging_dir.iterdir():
                candidates.append((entry, ws.locks_dir / f"{entry.name}.lock"))
    for area in ("datasets", "index"):
        with contextlib.suppress(OSError):
            folder = ws.root / area
            if folder.is_dir():
                for entry in folder.iterdir():
                    if entry.name.startswith(".") and (entry.name.endswith(".tmp") or ".old." in entry.name):
                        candidates.append((entry, None))
    for entry, lock in candidates:
        try:
            # taking the writer's lock proves no writer runs (a killed one's lock is free again);
            # releasing it deletes a lock file a killed writer left behind
            with hold(lock, "a writer") if lock is not None else contextlib.nullcontext():
                remove_tree(entry)  # a link is removed, never followed
                removed.append(str(entry))
        except (LockBusyError, OSError, ValueError):
            continue
    with contextlib.suppress(OSError, ValueError):
        stale = [p for p in ws.locks_dir.glob("*.lock")] if ws.locks_dir.is_dir() else []
        for lock in stale:
            with contextlib.suppress(LockBusyError, OSError), hold(lock, "a writer"):
                pass  # released at once: a killed writer's lock file is deleted
    with contextlib.suppress(ValueError):
        remove_empty(ws.staging_dir, ws.locks_dir)
    return removed


def judge_lock(ws: Workspace, dataset: str, task: str, judge: str) -> contextlib.AbstractContextManager[None]:
    """The lock of one judge run of (dataset, task, judge): one run per triple at a time, so no
    review is paid for twice and no conflicting duplicates are stored."""
    key = hashlib.sha256(judge.encode("utf-8")).hexdigest()[:16]  # any judge id, a fixed-size name
    return hold(lock_path(ws, "judge", dataset, task, key), f"a judge run of {judge!r} on {dataset}/{task}")


def pid_alive(pid: Any) -> bool:
    """True when process ``pid`` exists and is not a zombie (a finished child its starter has not reaped)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (finished child not yet reaped by its starter) is not alive
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


def run_lock_path(ws: Workspace, run_id: str) -> Path:
    """The lock file of method run ``run_id`` (held by the process executing it)."""
    return lock_path(ws, "run", run_id)


def run_lock(ws: Workspace, run_id: str) -> contextlib.AbstractContextManager[None]:
    """The lock of one method run while it executes: a second ``run --run-id X``, ``run --resume
    X`` or job for the same run fails at once instead of paying for every sample again."""
    return hold(run_lock_path(ws, run_id), f"run {run_id!r}")
