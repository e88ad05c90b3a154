"""Atomic file writes and crash-safe JSONL logs.

Everything the workbench writes goes through here: a file is written to a temporary name in the
same folder and renamed over the target, so a reader sees the old file or the new one, never half
of one. Append-only logs (judgments, run samples) are appended line by line with fsync; a line torn
by a killed process is dropped when the log is read, and the next append starts on a fresh line.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_path(target: str | Path, *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it over ``target`` if the block succeeds."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix + ".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; the renamed file gets the usual permissions
    try:
        yield tmp
        os.replace(tmp, target)
        _fsync_dir(target.parent)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_bytes_atomic(target: str | Path, data: bytes) -> None:
    """Write ``data`` to ``target`` atomically (temporary file, fsync, rename)."""
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def write_text_atomic(target: str | Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``target`` atomically."""
    write_bytes_atomic(target, text.encode("utf-8"))


def write_json_atomic(target: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON to ``target`` atomically."""
    write_text_atomic(target, json.dumps(obj, indent=indent, ensure_ascii=False, default=str) + "\n")


def write_jsonl_atomic(target: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` as JSONL to ``target`` atomically; returns the number of lines."""
    n = 0
    with atomic_path(target) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                n += 1
            fh.flush()
            os.fsync(fh.fileno())
    return n


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system cannot (then the caller falls back to two renames)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
        return False
    raise OSError(err, os.strerror(err), str(b))


@contextlib.contextmanager
def atomic_dir(target: str | Path, *, staging: str | Path | None = None) -> Iterator[Path]:
    """Yield a temporary folder; on success it replaces ``target`` as a whole.

    The temporary folder is made in ``staging`` (default: beside ``target``). Pass a staging
    folder outside the one readers glob over, so a killed writer's leftovers are never read. An
    existing ``target`` is swapped with the new folder in one atomic step where the system allows
    (readers see the old folder or the new one, never none), then deleted.
    """
    target = Path(target)
    where = Path(staging) if staging is not None else target.parent
    where.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=where))
    os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp makes 0700; the renamed folder gets the usual permissions
    try:
        yield tmp
        target.parent.mkdir(parents=True, exist_ok=True)  # only now: a failed write creates no folder
        old = None
        if target.exists():
            if _exchange(tmp, target):
                old = tmp  # now holds the previous folder
            else:
                old = where / f".{target.name}.old.{os.getpid()}"
                os.replace(target, old)
                os.replace(tmp, target)
        else:
            os.replace(tmp, target)
        _fsync_dir(target.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def append_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Append ``rows`` to a JSONL log durably (flush + fsync). Returns the number appended.

    If the file ends in a torn line (a killed writer), a newline is written first so the torn
    fragment stays on its own line, where :func:`read_jsonl_log` drops it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows]
    if not lines:
        return 0
    with open(path, "ab+") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")
        fh.write("".join(lines).encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
    return len(lines)


def read_jsonl_log(path: str | Path) -> list[dict[str, Any]]:
    """Read an append-only JSONL log, skipping blank lines and lines torn by a crash."""
    path = Path(path)
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue  # torn by a killed writer
            if isinstance(obj, dict):
                out.append(obj)
    return out


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


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


def parse_json_text(text: str, *, path: str | Path | None = None, line: int | None = None) -> Any:
    """``json.loads`` whose every failure is a :class:`core.errors.DataError` naming file and line:
    invalid JSON, nesting too deep for the parser, and an escaped lone surrogate (``"\\ud800"``,
    which no UTF-8 file, Parquet column or database can store)."""
    from core.errors import DataError

    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg} at column {exc.colno})", path=path,
                        line=exc.lineno if line is None else line) from None
    except RecursionError:
        raise DataError("JSON nested too deeply", path=path, line=line) from None
    if _ESCAPED_SURROGATE.search(text):
        bad = _lone_surrogate(obj)
        if bad is not None:
            raise DataError(f"a lone UTF-16 surrogate escape in {bad[:40]!r} (not valid Unicode text)", path=path,
                            line=line)
    return obj


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; invalid JSON raises :class:`core.errors.DataError` naming file and line."""
    from core.errors import DataError

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    return parse_json_text(text, path=path)


def sha256_file(path: str | Path, *, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def jsonl_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of a JSONL file; blank and ``#`` lines are skipped, a UTF-8 BOM is
    accepted, and bad bytes, bad JSON and lone surrogates are DataErrors naming the line."""
    from core.errors import DataError

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


def read_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """A YAML file whose top level is a mapping; every failure is a DataError naming the file (and
    the line of a syntax error)."""
    import yaml

    from core.errors import DataError

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise DataError(f"not valid YAML: {exc}", path=path, line=None if line is None else line + 1) from None
    if not isinstance(data, dict):
        raise DataError("expected a mapping at the top level", path=path)
    return data
