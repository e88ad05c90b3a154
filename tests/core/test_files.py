"""Atomic writes and crash-safe JSONL logs."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
import os
import struct
from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.base.errors import DataError
from core.base.files import (
    append_jsonl,
    append_jsonl_bytes,
    atomic_dir,
    json_document,
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


# -- json_document: orjson's bytes only where they are json's --------------------------------------
def _stdlib(obj):
    return (json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8")


_SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=12)
            | st.floats(allow_nan=True, allow_infinity=True)
            | st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("d", struct.pack("Q", b))[0]))
_DOCS = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=25)


@pytest.mark.heavy  # `make test-all`: minutes of CPU, covered in part by quicker tests
@settings(max_examples=1000, deadline=None)
@given(_DOCS)
def test_json_document_is_the_stdlib_bytes_on_random_documents(doc):
    assert json_document(doc) == _stdlib(doc)


class _Colour(enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 2


@dataclasses.dataclass
class _Point:
    x: int


@pytest.mark.parametrize("value", [
    1e-05, -3.9e-08, 0.00001234, float("nan"), float("inf"), -0.0, 1e16, 2**64, -(2**63) - 1,
    dt.datetime(2026, 1, 2, 3, 4, 5), dt.date(2026, 1, 2), _Level.HIGH, _Point(1), (1, 2),
    OrderedDict(a=1), {1: "int key"}, {"text": "tab\t nl\n quote\" bs\\ nul\x00 del\x7f ls\u2028 é 🙂"},
    {"s": "looks like 1e-05 or 0.00001"}, {"Cafe-Bar": "Crème-brûlée"}, [None, 1e-05], [None, float("nan")], [], {}, [[]], {"a": {}}, "", 0, True, None,
])
def test_json_document_edge_cases_are_the_stdlib_bytes(value):
    assert json_document({"v": value, "list": [value]}) == _stdlib({"v": value, "list": [value]})


@pytest.mark.parametrize("doc", [1.5e-07, -1.5e-07, 1e-05, -3e-05, [1.5e-07], {"id": "Xy3e-Q_9", "v": [-2.5e-09]},
                                 {"Xy3e-Q": 1, "a b 3e-5": "x"}])
def test_json_document_small_floats_and_lookalike_ids(doc):
    assert json_document(doc) == _stdlib(doc)


def test_json_document_writes_a_plain_enum_by_its_value():
    # the one documented difference (json writes str(member) through default=str); core writes none
    assert json_document({"c": _Colour.RED}) == b'{\n  "c": "red"\n}\n'


def test_json_document_other_indents_and_lone_surrogates_as_json():
    doc = {"a": [1, {"b": 0.5}]}
    assert json_document(doc, indent=None) == (json.dumps(doc, ensure_ascii=False) + "\n").encode()
    assert json_document(doc, indent=4) == (json.dumps(doc, indent=4, ensure_ascii=False) + "\n").encode()
    with pytest.raises(UnicodeEncodeError):
        json_document({"s": "\ud800"})
    assert math.isnan(json.loads(json_document({"x": float("nan")}))["x"])


def test_append_jsonl_bytes_cuts_a_torn_tail_first(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"i": 0}\n{"i": 1, "te')
    append_jsonl_bytes(log, b'{"i": 2}\n')
    assert [r["i"] for r in read_jsonl_log(log)] == [0, 2]
    append_jsonl_bytes(log, b"")
    assert log.read_bytes() == b'{"i": 0}\n{"i": 2}\n'
