"""Behaviour is unchanged (issue 10): the keyword index, judgments, GT files and every export of the
demo and of the shared fixtures are byte-identical to main's before the restructuring
(digests in tests/core/data/exports_reference_sha256.json, see tests/helpers/exports_reference.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.exports_reference import demo_digests, fixture_digests, normalise

EXPECTED = json.loads((Path(__file__).parent / "data" / "exports_reference_sha256.json").read_text(encoding="utf-8"))


def _differences(got: dict[str, str], want: dict[str, str]) -> list[str]:
    return ([f"missing: {k}" for k in sorted(set(want) - set(got))] + [f"new: {k}" for k in sorted(set(got) - set(want))]
            + [f"changed: {k}" for k in sorted(set(got) & set(want)) if got[k] != want[k]])


def test_normalise_replaces_only_volatile_values_and_the_root():
    root = Path("/tmp/ws")
    data = b'{"computed_at": "2026-01-01T00:00:00", "seconds": 1.5, "k": 25, "path": "/tmp/ws/gt/x.json"}'
    assert normalise(data, root) == b'{"computed_at": "*", "seconds": "*", "k": 25, "path": "<ROOT>/gt/x.json"}'
    assert normalise(b"\xff\x00parquet", root) == b"\xff\x00parquet"  # binary files are digested as they are


def test_demo_index_gt_and_exports_byte_identical(tmp_path):
    got = demo_digests(tmp_path)
    assert any(k.startswith("index/demo/keyword_index.parquet") for k in got)
    assert _differences(got, EXPECTED["demo"]) == []


@pytest.mark.fixtures
def test_fixture_index_gt_and_exports_byte_identical(fixtures_dir, tmp_path):
    got = fixture_digests(fixtures_dir, tmp_path)
    assert {"index/xnot/keyword_index.parquet", "index/addm/keyword_index.parquet"} <= set(got)
    assert _differences(got, EXPECTED["fixtures"]) == []
