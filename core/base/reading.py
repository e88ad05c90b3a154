"""Reading what the workbench and its users write: JSON, JSONL logs (a torn last line dropped and
counted, a broken line elsewhere an error naming file and line), YAML with bounded depth and size,
checked file names; every error names the file, the line and the field."""

from __future__ import annotations

import hashlib
import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import yaml

from core.base.errors import DataError


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
