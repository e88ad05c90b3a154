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
import fcntl
import json
import os
import pickle
import re
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from core.base.confine import (
    _folder,
    _fsync_fd,
    _open_file,
    confine,
    is_link_free,
    make_dirs,
    open_append,
    open_folder,
    open_regular,
    remove_file,
    remove_tree,
    writable_file,
)
from core.base.reading import (
    YAML_MAX_DEPTH,
    YAML_MAX_NODES,
    LogRows,
    _json_object,
    json_problem,
    jsonl_objects,
    parse_json_text,
    read_json,
    read_jsonl_log,
    read_yaml_mapping,
    require_file,
    sha256_file,
)


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


def write_parts_atomic(target: str | Path, parts: Iterable[bytes | memoryview]) -> None:
    """Write ``parts`` one after the other to ``target`` atomically (no copy of them joined)."""
    with _replacing(target, "wb") as fh:
        for part in parts:
            fh.write(part)


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


__all__ = ["LogRows", "YAML_MAX_DEPTH", "YAML_MAX_NODES", "append_jsonl", "append_jsonl_bytes", "atomic_dir", "atomic_path", "confine", "is_link_free", "json_document", "json_problem", "jsonl_objects", "make_dirs", "open_append", "open_folder", "open_regular", "parse_json_text", "read_json", "read_jsonl_log", "read_yaml_mapping", "remove_file", "remove_tree", "require_file", "sha256_file", "writable_file", "write_bytes_atomic", "write_json_atomic", "write_jsonl_atomic", "write_parts_atomic", "write_text_atomic"]
