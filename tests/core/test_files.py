"""Atomic writes and crash-safe JSONL logs."""

from __future__ import annotations

import json
import os

import pytest

from core.errors import DataError
from core.files import (
    append_jsonl,
    atomic_dir,
    read_jsonl_log,
    sha256_file,
    write_json_atomic,
    write_jsonl_atomic,
)


def test_write_json_atomic_replaces_whole_file(tmp_path):
    target = tmp_path / "a" / "x.json"
    write_json_atomic(target, {"v": 1})
    write_json_atomic(target, {"v": 2})
    assert json.loads(target.read_text()) == {"v": 2}
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]  # no temp leftovers


def test_failed_write_leaves_old_file_and_no_temp(tmp_path):
    target = tmp_path / "x.jsonl"
    write_jsonl_atomic(target, [{"a": 1}])

    def rows():
        yield {"a": 2}
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_jsonl_atomic(target, rows())
    assert read_jsonl_log(target) == [{"a": 1}]
    assert [p.name for p in tmp_path.iterdir()] == ["x.jsonl"]


def test_atomic_dir_is_all_or_nothing(tmp_path):
    target = tmp_path / "ds"
    with atomic_dir(target) as tmp:
        (tmp / "one.txt").write_text("1")
    assert (target / "one.txt").read_text() == "1"
    with pytest.raises(ValueError):
        with atomic_dir(target) as tmp:
            (tmp / "two.txt").write_text("2")
            raise ValueError("half-way")
    assert sorted(p.name for p in target.iterdir()) == ["one.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_torn_last_line_is_dropped_and_next_append_starts_clean(tmp_path):
    log = tmp_path / "log.jsonl"
    append_jsonl(log, [{"i": 0}, {"i": 1}])
    with open(log, "ab") as fh:  # a writer killed mid-line
        fh.write(b'{"i": 2, "tex')
    assert [r["i"] for r in read_jsonl_log(log)] == [0, 1]
    append_jsonl(log, [{"i": 3}])
    assert [r["i"] for r in read_jsonl_log(log)] == [0, 1, 3]


def test_append_nothing_creates_nothing(tmp_path):
    assert append_jsonl(tmp_path / "x.jsonl", []) == 0
    assert not (tmp_path / "x.jsonl").exists()
    assert read_jsonl_log(tmp_path / "missing.jsonl") == []


def test_sha256_file_matches_hashlib(tmp_path):
    import hashlib

    data = os.urandom(3 * (1 << 20) + 7)
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_atomic_files_get_normal_permissions(tmp_path):
    target = tmp_path / "x.json"
    write_json_atomic(target, {})
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_log_read_at_orjson_speed_keeps_json_semantics_and_names_every_fault(tmp_path):
    """Lines orjson reads alike are taken at its speed; the rest take the checked path: a number past
    64 bits stays exact, NaN is read as json reads it, and a lone surrogate, a non-object, invalid
    UTF-8 and invalid JSON are errors naming file and line."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"id": 123456789012345678901234567890, "s": "\\ud83d\\ude00"}\n{"x": NaN}\n\n{"y": [1, {"z": 2}]}\n')
    rows = read_jsonl_log(log)
    assert rows[0] == {"id": 123456789012345678901234567890, "s": "\U0001F600"}
    assert rows[1]["x"] != rows[1]["x"]  # NaN
    assert rows[2] == {"y": [1, {"z": 2}]} and rows.torn == 0
    for line, message in [(b'{"s": "\\ud800"}', "surrogate"), (b"[1, 2]", "expected a JSON object, got list"),
                          (b'{"s": "\xff"}', "not UTF-8"), (b'{"a": 1,}', "not valid JSON")]:
        log.write_bytes(b'{"ok": 1}\n' + line + b"\n")
        with pytest.raises(DataError, match=message) as info:
            read_jsonl_log(log)
        assert info.value.line == 2 and str(log) in str(info.value)
