"""Confinement: a write below a workspace root never follows a symbolic link (see the comment
below); the umask and fsync helpers every writer shares."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.base.errors import UnsafePathError


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def _fsync_fd(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(fd)


# ---------------------------------------------------------------------------------------------
# Confinement: a write below a workspace root never follows a symbolic link.
#
# A workspace is a folder someone else may have shaped (a shared folder, a zip, a git checkout), so
# any name in it may be a planted link. Every write helper here reaches its folder by opening the
# workspace root and then each folder below it with O_NOFOLLOW, one component at a time, and
# creates, appends, renames and deletes relative to that open folder: what is written is what was
# checked, at the moment it is written (no check-then-use gap), and a link anywhere below the root
# (to a folder or a file, pointing out or in) is refused with UnsafePathError. The root itself is
# trusted as given (it may be reached through links of the user's own). Roots are registered by
# :class:`core.workspace.Workspace`; a path under no registered root (an ``--out`` file the user
# named) is written as before.

_ROOTS: set[str] = set()  # absolute and real paths of every workspace root opened in this process
_ROOTS_LOCK = threading.Lock()  # a security policy that only grows, shared on purpose: not user data
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW_DIR = _DIR_FLAGS | os.O_NOFOLLOW


def confine(root: str | Path) -> None:
    """Register ``root`` as a workspace root: writes below it never follow a link (see above)."""
    paths = {os.path.abspath(root), os.path.realpath(root)}
    with _ROOTS_LOCK:
        _ROOTS.update(p for p in paths if p != os.sep)


def _root_of(absolute: str) -> str | None:
    """The innermost registered root that ``absolute`` (already normalised) lies below, or None."""
    best = None
    for root in tuple(_ROOTS):
        if (absolute == root or absolute.startswith(root + os.sep)) and (best is None or len(root) > len(best)):
            best = root
    return best


def _refuse(target: str, where: str, root: str) -> UnsafePathError:
    try:
        link = f" (a symbolic link to {os.readlink(where)})" if os.path.islink(where) else " (not a folder)"
    except OSError:
        link = ""
    return UnsafePathError(f"refusing to write {target}: {where}{link} lies on the way; the workbench writes only "
                           f"to real folders and files inside the workspace {root} (replace it with a folder)")


def _open_below(fd: int, name: str, *, create: bool, target: str, where: str, root: str) -> int:
    """The folder ``name`` inside the open folder ``fd``, never through a link (made if ``create``)."""
    for _ in range(3):
        try:
            return os.open(name, _NOFOLLOW_DIR, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):  # another writer made it meanwhile
                os.mkdir(name, 0o777, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                raise _refuse(target, where, root) from None
            raise
    return os.open(name, _NOFOLLOW_DIR, dir_fd=fd)


def open_folder(folder: str | Path, *, create: bool = True, target: str | Path | None = None) -> int:
    """A file descriptor of ``folder`` (the caller closes it), reached from its workspace root
    without following any link below the root; missing folders are made when ``create``.

    Outside every registered root the folder is opened (and made) as usual."""
    absolute = os.path.abspath(folder)
    shown = str(target if target is not None else folder)
    root = _root_of(absolute)
    if root is None:
        if create:
            os.makedirs(absolute, exist_ok=True)
        return os.open(absolute, _DIR_FLAGS)
    if create:
        os.makedirs(root, exist_ok=True)
    fd = os.open(root, _DIR_FLAGS)
    where = root
    try:
        for part in absolute[len(root):].split(os.sep):
            if not part:
                continue
            where = os.path.join(where, part)
            child = _open_below(fd, part, create=create, target=shown, where=where, root=root)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def _folder(folder: str | Path, *, create: bool = True, target: str | Path | None = None) -> Iterator[int]:
    fd = open_folder(folder, create=create, target=target)
    try:
        yield fd
    finally:
        os.close(fd)


def make_dirs(folder: str | Path) -> Path:
    """``mkdir -p folder``, never through a link below a workspace root; returns ``folder``."""
    os.close(open_folder(folder))
    return Path(folder)


def is_link_free(path: str | Path) -> bool:
    """True unless ``path`` (or a folder on its way) below a workspace root is a symbolic link."""
    path = Path(path)
    try:
        with _folder(path.parent, create=False) as fd:
            return not stat.S_ISLNK(os.stat(path.name, dir_fd=fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return True
    except UnsafePathError:
        return False


def writable_file(path: str | Path, *, companions: tuple[str, ...] = ()) -> Path:
    """``path`` for a writer that opens it by name (SQLite, a lock file), checked the moment before:
    its folders are made without following links, and neither it nor ``path + suffix`` for each of
    ``companions`` (``-wal``, ``-journal``) may be a link or a non-file. Returns ``path``."""
    path = Path(path)
    with _folder(path.parent, target=path) as fd:
        for name in (path.name, *(path.name + s for s in companions)):
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(mode) and _root_of(os.path.abspath(path)) is not None:
                raise _refuse(str(path), str(path.parent / name), _root_of(os.path.abspath(path)) or "")
    return path


def open_append(path: str | Path) -> Any:
    """``open(path, "ab")`` that never follows a link below a workspace root (a child's log)."""
    path = Path(path)
    with _folder(path.parent, target=path) as dfd:
        return os.fdopen(_open_file(dfd, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab")


def _open_file(dfd: int, path: Path, flags: int) -> int:
    """Open the regular file ``path.name`` in folder ``dfd`` without following a link."""
    try:
        fd = os.open(path.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o666, dir_fd=dfd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise _refuse(str(path), str(path), _root_of(os.path.abspath(path)) or str(path.parent)) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device planted under the log's name
        os.close(fd)
        raise _refuse(str(path), str(path), _root_of(os.path.abspath(path)) or str(path.parent))
    os.set_blocking(fd, True)
    return fd


def open_regular(path: str | Path, flags: int) -> int:
    """``os.open(path, flags | O_CREAT)`` of a regular file, never through a link below a
    workspace root (a lock file); the caller closes the descriptor."""
    path = Path(path)
    with _folder(path.parent, target=path) as dfd:
        return _open_file(dfd, path, flags | os.O_CREAT)


def remove_file(path: str | Path, *, missing_ok: bool = True) -> None:
    """Delete the file (or link) ``path``; the folders on its way are never followed through a link."""
    path = Path(path)
    try:
        with _folder(path.parent, create=False, target=path) as fd:
            os.unlink(path.name, dir_fd=fd)
    except FileNotFoundError:
        if not missing_ok:
            raise


def remove_tree(path: str | Path) -> None:
    """Delete the folder ``path`` and everything in it (a link there is removed, never followed);
    nothing when it is missing."""
    path = Path(path)
    try:
        with _folder(path.parent, create=False, target=path) as fd:
            if stat.S_ISDIR(os.stat(path.name, dir_fd=fd, follow_symlinks=False).st_mode):
                shutil.rmtree(path.name, dir_fd=fd)
            else:
                os.unlink(path.name, dir_fd=fd)
    except FileNotFoundError:
        pass
