"""Atomic file writes and crash-safe JSONL logs.

Everything the workbench writes goes through here: a file is written to a temporary name in the
same folder and renamed over the target, so a reader sees the old file or the new one, never half
of one. Append-only logs (judgments, run samples) are appended line by line with fsync; a line torn
by a killed process (the last line, without its newline) is dropped and counted when the log is
read and cut off by the next append; a broken line anywhere else is an error naming file and line.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import pickle
import re
import secrets
import shutil
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
import yaml

from core.base.errors import DataError, UnsafePathError


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


def _temp_name(target: str, suffix: str) -> str:
    return f".{target}.{secrets.token_hex(4)}{suffix}.tmp"


@contextlib.contextmanager
def atomic_path(target: str | Path, *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it over ``target`` if the block succeeds.

    For writers that open a path by name (polars): the temporary file is made, and renamed, in the
    folder reached as :func:`open_folder` reaches it."""
    target = Path(target)
    with _folder(target.parent, target=target) as dfd:
        name = _temp_name(target.name, suffix)
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666,
                         dir_fd=dfd))
        try:
            yield target.parent / name
            os.replace(name, target.name, src_dir_fd=dfd, dst_dir_fd=dfd)
            _fsync_fd(dfd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=dfd)


@contextlib.contextmanager
def _replacing(target: str | Path, mode: str) -> Iterator[Any]:
    """A file object (``mode`` "wb" or "w") on a new temporary file beside ``target``, renamed over
    ``target`` (and fsynced) when the block succeeds; a link at ``target`` is replaced, not followed."""
    target = Path(target)
    with _folder(target.parent, target=target) as dfd:
        name = _temp_name(target.name, "")
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dfd)
        try:
            with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(name, target.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dfd)
            raise
        _fsync_fd(dfd)


def write_bytes_atomic(target: str | Path, data: bytes) -> None:
    """Write ``data`` to ``target`` atomically (temporary file, fsync, rename)."""
    with _replacing(target, "wb") as fh:
        fh.write(data)


def write_text_atomic(target: str | Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``target`` atomically."""
    write_bytes_atomic(target, text.encode("utf-8"))


def write_json_atomic(target: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON to ``target`` atomically (the bytes of :func:`json_document`)."""
    write_bytes_atomic(target, json_document(obj, indent=indent))


_ORJSON_INDENT = (orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
                  | orjson.OPT_PASSTHROUGH_SUBCLASS)


def _not_plain_json(obj: Any) -> Any:
    raise TypeError(type(obj).__name__)


def _small_float(data: bytes) -> bool:
    """Whether orjson's text may hold a float below 1e-4 in magnitude: the only floats it writes
    otherwise than repr() does ("0.00001" or "1e-5" where repr writes "1e-05"). An exponent counts
    when its number starts after a space (a value: ``"key": 1e-5`` or an indented list item), so a
    Yelp id such as "Xy3e-Q" inside a string does not; a string that looks alike only costs json."""
    if b"0.0000" in data:
        return True
    at = data.find(b"e-")
    while at > 0:
        start = at - 1
        while start >= 0 and (48 <= data[start] <= 57 or data[start] == 46):  # digits and "."
            start -= 1
        if start < at - 1:  # digits before "e-": a number unless it sits inside a word
            if start >= 0 and data[start] == 45:  # its minus sign
                start -= 1
            if start < 0 or data[start] == 32:  # the document itself, or a value after a space
                return True
        at = data.find(b"e-", at + 2)
    return False


# A float NaN or infinity in a pickle (protocol 4: BINFLOAT "G" + 8 big-endian bytes, the exponent
# all ones). orjson writes them as null; json as NaN/Infinity. Anything else that matches by chance
# only sends the document to json.
_PICKLED_NAN_OR_INF = re.compile(rb"G[\x7f\xff][\xf0-\xff]")


def _has_nan_or_inf(obj: Any) -> bool:
    return _PICKLED_NAN_OR_INF.search(pickle.dumps(obj, protocol=4)) is not None


def json_document(obj: Any, *, indent: int | None = 2) -> bytes:
    """``json.dumps(obj, indent=indent, ensure_ascii=False, default=str) + "\\n"`` as UTF-8 bytes.

    With ``indent=2`` orjson writes them (json's indenting encoder is pure Python: a GT file of
    150,000 restaurants took seconds) whenever its bytes are json's. Both indent with two spaces,
    separate with ", " and ": " at line ends, keep key order and escape the same characters; they
    differ only where json is asked for: anything but dicts with string keys, lists, tuples,
    strings, ints, floats, bools and None (subclasses included: orjson refuses them here), NaN and
    infinity (orjson writes null: a document with a null is searched for them), and floats
    below 1e-4 in magnitude (see :func:`_small_float`). One difference is not checked: orjson
    writes a plain ``Enum`` member as its value, json through ``default=str`` as ``Class.NAME``;
    the workbench writes none. ``tests/core/test_files.py`` compares the two on random documents.

    >>> json_document({"a": [1, 2.5, None], "b": {}, "c": "é"}) == (json.dumps(
    ...     {"a": [1, 2.5, None], "b": {}, "c": "é"}, indent=2, ensure_ascii=False) + "\\n").encode()
    True
    """
    if indent == 2:
        try:
            data = orjson.dumps(obj, option=_ORJSON_INDENT, default=_not_plain_json)
        except (TypeError, orjson.JSONEncodeError):
            data = None
        if data is not None and not _small_float(data) and (b"null" not in data or not _has_nan_or_inf(obj)):
            return data + b"\n"
    return (json.dumps(obj, indent=indent, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def write_jsonl_atomic(target: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` as JSONL to ``target`` atomically; returns the number of lines."""
    n = 0
    with _replacing(target, "w") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            n += 1
    return n


_RENAME_EXCHANGE = 2


def _exchange(a_dir: int, a: str, b_dir: int, b: str) -> bool:
    """Swap ``a`` (in folder ``a_dir``) and ``b`` (in ``b_dir``) in one atomic step (Linux
    ``renameat2(RENAME_EXCHANGE)``); False where the system cannot (then the caller falls back to
    two renames)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(a_dir, os.fsencode(a), b_dir, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
        return False
    raise OSError(err, os.strerror(err), b)


def _remove_at(dfd: int, name: str) -> None:
    """Delete ``name`` in folder ``dfd`` (a folder with its content; a link itself), if there."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
            shutil.rmtree(name, dir_fd=dfd, ignore_errors=True)
        else:
            os.unlink(name, dir_fd=dfd)


@contextlib.contextmanager
def atomic_dir(target: str | Path, *, staging: str | Path | None = None) -> Iterator[Path]:
    """Yield a temporary folder; on success it replaces ``target`` as a whole.

    The temporary folder is made in ``staging`` (default: beside ``target``). Pass a staging
    folder outside the one readers glob over, so a killed writer's leftovers are never read. An
    existing ``target`` is swapped with the new folder in one atomic step where the system allows
    (readers see the old folder or the new one, never none), then deleted. Both folders are
    reached as :func:`open_folder` reaches them; a link at ``target`` is replaced, not followed.
    """
    target = Path(target)
    where = Path(staging) if staging is not None else target.parent
    with _folder(where, target=target) as sfd:
        name = _temp_name(target.name, "")
        os.mkdir(name, 0o777, dir_fd=sfd)
        try:
            yield where / name
            with _folder(target.parent, target=target) as pfd:  # only now: a failed write creates no folder
                try:
                    os.stat(target.name, dir_fd=pfd, follow_symlinks=False)
                    exists = True
                except FileNotFoundError:
                    exists = False
                if not exists:
                    os.replace(name, target.name, src_dir_fd=sfd, dst_dir_fd=pfd)
                elif not _exchange(sfd, name, pfd, target.name):  # else ``name`` now holds the old one
                    old = f".{target.name}.old.{os.getpid()}"
                    os.replace(target.name, old, src_dir_fd=pfd, dst_dir_fd=sfd)
                    os.replace(name, target.name, src_dir_fd=sfd, dst_dir_fd=pfd)
                    _remove_at(sfd, old)
                _fsync_fd(pfd)
        finally:
            _remove_at(sfd, name)


def _torn_tail(fh: Any) -> int | None:
    """Offset where the file's last line starts when that line has no newline (a writer killed
    mid-line), else None. Reads backwards from the end in blocks."""
    end = fh.seek(0, os.SEEK_END)
    if end == 0:
        return None
    fh.seek(end - 1)
    if fh.read(1) == b"\n":
        return None
    pos = end
    while pos > 0:
        step = min(1 << 16, pos)
        pos -= step
        fh.seek(pos)
        block = fh.read(step)
        cut = block.rfind(b"\n")
        if cut >= 0:
            return pos + cut + 1
    return 0


def append_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Append ``rows`` to a JSONL log durably (flush + fsync). Returns the number appended.

    If the file ends in a line without its newline, that line is either a whole record (a file
    edited by hand: the newline is added) or a fragment torn by a killed writer, which is cut off
    before appending: it never held a finished record, and left in place it would become a broken
    line in the middle of the log, which :func:`read_jsonl_log` refuses.
    """
    lines = [json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows]
    if lines:
        append_jsonl_bytes(path, "".join(lines).encode("utf-8"))
    return len(lines)


def append_jsonl_bytes(path: str | Path, data: bytes) -> tuple[int, int]:
    """Append ready-made JSONL ``data`` (whole lines, each ending in a newline) durably, as
    :func:`append_jsonl` does: a torn last line is cut off first, the write is flushed and fsynced.
    Returns where ``data`` starts and ends in the file. The log is opened as :func:`open_folder`
    reaches its folder, and never through a link (a planted one is an UnsafePathError)."""
    path = Path(path)
    with _folder(path.parent, target=path) as dfd:
        if not data:
            try:
                return (os.stat(path.name, dir_fd=dfd, follow_symlinks=False).st_size,) * 2
            except FileNotFoundError:
                return 0, 0
        fd = _open_file(dfd, path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    with os.fdopen(fd, "ab+") as fh:
        # Appenders of one log (two run jobs sharing the LLM cache, say) take turns: one never sees
        # another's half-written tail as torn and cuts it. The kernel drops the lock if we are killed.
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        start = _torn_tail(fh)
        if start is not None:
            fh.seek(start)
            if _json_object(fh.read()) is None:
                fh.truncate(start)
            else:
                fh.write(b"\n")
        start = fh.seek(0, os.SEEK_END)
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return start, start + len(data)


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _object_or_none(line: bytes) -> dict[str, Any] | None:
    """The JSON object on ``line`` read by orjson, or None (not valid UTF-8 or JSON, a lone surrogate
    escape, NaN, not an object): the caller reads such a line the slow way, which names the fault."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


class LogRows(list):  # type: ignore[type-arg]
    """The records of an append-only JSONL log (a list of dicts); ``torn`` counts the torn last
    line that was dropped (0 or 1)."""

    torn: int = 0


def read_jsonl_log(path: str | Path) -> LogRows:
    r"""Read an append-only JSONL log: one JSON object per line, blank lines skipped.

    Only the last line may be broken, and only when it has no newline: a writer killed mid-line
    leaves it, and it is dropped and counted in ``.torn``. Any other unreadable line is damage,
    not a crash: a :class:`core.base.errors.DataError` naming the file and the line.

    >>> import tempfile, pathlib
    >>> log = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> _ = log.write_bytes(b'{"i": 0}\n\n{"i": 1}\n{"i": 2, "te')
    >>> rows = read_jsonl_log(log)
    >>> rows, rows.torn
    ([{'i': 0}, {'i': 1}], 1)
    >>> _ = log.write_bytes(b'{"i": 0}\n{"i": 1, "te\n{"i": 2}\n')
    >>> read_jsonl_log(log)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    core.base.errors.DataError: ...log.jsonl:2: not valid JSON (...)
    """
    path = Path(path)
    out = LogRows()
    if not path.exists():
        return out
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    last = len(lines) - 1  # the text after the final newline ("" when the file ends cleanly)
    exact = not _long_digits(raw)  # no number orjson could round: it reads every line as json would
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        obj = _object_or_none(line) if exact else None
        if obj is not None:  # the common case, at orjson's speed; anything else takes the checks below
            out.append(obj)
            continue
        try:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"not UTF-8 text (byte {exc.start})", path=path, line=number) from None
            obj = parse_json_text(text, path=path, line=number)
            if not isinstance(obj, dict):
                raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=number)
        except DataError:
            if number - 1 == last:  # no newline after it: torn by a killed writer
                out.torn += 1
                continue
            raise
        out.append(obj)
    return out


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
# A run of 19 ASCII digits: an integer orjson may not hold exactly (past 64 bits). Found by turning
# every digit into "0" and looking for 19 zeros: bytes.translate and ``in`` are ~20x a regex's speed.
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_ZEROS = b"0" * 19


def _long_digits(text: str | bytes) -> bool:
    """Whether ``text`` holds a run of 19 ASCII digits (JSON numbers are ASCII digits only).

    >>> _long_digits('{"id": 123456789012345678}'), _long_digits(b'{"id": 1234567890123456789}')
    (False, True)
    """
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return _NINETEEN_ZEROS in raw.translate(_DIGITS_TO_ZERO)


def _lone_surrogate(obj: Any) -> str | None:
    """The first string (key or value) of ``obj`` holding a lone UTF-16 surrogate, or None."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def json_problem(exc: json.JSONDecodeError, *, with_line: bool = False) -> str:
    """What a JSON parse error says and where, in one phrase; "Unterminated string starting at"
    names its own place, so it never reads "at at".

    >>> try: json.loads('{"a": "b')
    ... except json.JSONDecodeError as e: print(json_problem(e))
    Unterminated string starting at column 7
    """
    at = "" if exc.msg.endswith(" at") else " at"
    return f"{exc.msg}{at}{f' line {exc.lineno}' if with_line else ''} column {exc.colno}"


def require_file(path: str | Path) -> Path:
    """``path``, which must be an existing regular file: a missing one is a FileNotFoundError, and a
    folder, device (``/dev/zero``) or pipe a DataError that says what it is instead of "no such file"."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path}") from None
    except OSError as exc:
        raise DataError(f"cannot be read ({exc.strerror})", path=path) from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else \
            "a pipe" if stat.S_ISFIFO(mode) else "not a regular file"
        raise DataError(f"{kind}, not a file to read", path=path)
    return path


def parse_json_text(text: str, *, path: str | Path | None = None, line: int | None = None) -> Any:
    """``json.loads`` whose every failure is a :class:`core.base.errors.DataError` naming file and line:
    invalid JSON, nesting too deep for the parser, and an escaped lone surrogate (``"\\ud800"``,
    which no UTF-8 file, Parquet column or database can store)."""
    if not _long_digits(text):  # orjson (4-5x json's speed) reads such a number as a float
        try:  # orjson refuses a lone surrogate escape: json.loads below takes it, and it is named
            return orjson.loads(text)
        except (ValueError, TypeError):  # orjson.JSONDecodeError is a ValueError
            pass  # json.loads below says what is wrong in its words (and takes NaN, as before)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({json_problem(exc)})", path=path,
                        line=exc.lineno if line is None else line) from None
    except RecursionError:
        raise DataError("JSON nested too deeply", path=path, line=line) from None
    return _checked_surrogates(obj, text, path, line)


def _checked_surrogates(obj: Any, text: str, path: str | Path | None, line: int | None) -> Any:
    """``obj``, unless ``text`` escapes a lone UTF-16 surrogate (a DataError)."""
    if _ESCAPED_SURROGATE.search(text):
        bad = _lone_surrogate(obj)
        if bad is not None:
            raise DataError(f"a lone UTF-16 surrogate escape in {bad[:40]!r} (not valid Unicode text)", path=path,
                            line=line)
    return obj


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; invalid JSON raises :class:`core.base.errors.DataError` naming file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    return parse_json_text(text, path=path)


def sha256_file(path: str | Path, *, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def jsonl_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of a JSONL file; blank and ``#`` lines are skipped, a UTF-8 BOM is
    accepted, and bad bytes, bad JSON and lone surrogates are DataErrors naming the line."""
    with open(path, "rb") as fh:
        for n, data in enumerate(fh, start=1):
            try:
                raw = data.decode("utf-8").strip()
            except UnicodeDecodeError as exc:
                raise DataError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {exc.start + 1})",
                                path=path, line=n) from None
            if n == 1:
                raw = raw.lstrip("\ufeff")
            if not raw or raw.startswith("#"):
                continue
            obj = parse_json_text(raw, path=path, line=n)
            if not isinstance(obj, dict):
                raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=n)
            yield n, obj


YAML_MAX_DEPTH = 64  # nesting of mappings and lists: a policy or task needs a handful
YAML_MAX_NODES = 200_000  # nodes once every alias is expanded: a "billion laughs" file is refused
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's where PyYAML has it: ~10x


def _yaml_shape(text: str, path: Path) -> None:
    """Refuse a YAML document nested deeper than :data:`YAML_MAX_DEPTH` or that expands (aliases
    counted at their anchor's size) to more than :data:`YAML_MAX_NODES` nodes, before it is built:
    the event stream is read flat, so neither a deep file (libyaml's composer recurses and crashes
    the process) nor a billion laughs (gigabytes) gets further."""
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, expanded size] of each open collection
    for event in yaml.parse(text, Loader=_YAML_LOADER):
        line = event.start_mark.line + 1
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append([event.anchor, 1])
            if len(stack) > YAML_MAX_DEPTH + 1:
                raise DataError(f"YAML nested more than {YAML_MAX_DEPTH} levels deep", path=path, line=line)
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor, size = None, sizes.get(event.anchor or "", 1)
        else:
            continue
        if anchor:
            sizes[anchor] = size
        stack[-1][1] += size
        if stack[-1][1] > YAML_MAX_NODES:
            raise DataError(f"YAML expands to more than {YAML_MAX_NODES:,} values (aliases of aliases, a "
                            "'billion laughs')", path=path, line=line)


def read_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """A YAML file whose top level is a mapping; every failure is a DataError naming the file (and
    the line of a syntax error, of a nesting too deep or of an alias that expands too far)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    try:
        _yaml_shape(text, path)
        data = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise DataError(f"not valid YAML: {exc}", path=path, line=None if line is None else line + 1) from None
    if not isinstance(data, dict):
        raise DataError("expected a mapping at the top level", path=path)
    return data
