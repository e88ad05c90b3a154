"""Claim encoding: a versioned JSON object as base64url, read back from a token, a link or Markdown."""

from __future__ import annotations

import base64

import orjson
import pytest

from core.base.errors import WorkbenchError
from core.release.claims import decode, encode, link, markdown, number, statement

PAIRED = {"v": 1, "kind": "paired", "metric": "ordinal_auprc", "runs": ["demo-direct-K50", "demo-amos-K50"],
          "dataset": "demo", "task": "G1a", "definition": "G1_allergy_V2", "k": 50, "n_boot": 1000, "seed": 0,
          "figure": {"difference": 0.12, "low": 0.05, "high": 0.19, "n_common": 100},
          "labels": {"demo-direct-K50": "direct (demo-direct-K50)", "demo-amos-K50": "amos (demo-amos-K50)"},
          "inputs": {"runs": {"demo-direct-K50": "a" * 64, "demo-amos-K50": "b" * 64},
                     "gt": {"version": "0123456789abcdef", "sha256": "c" * 64}}}


def test_round_trip_through_token_link_and_markdown():
    token = encode(PAIRED)
    assert "=" not in token and decode(token) == PAIRED
    assert decode(link(PAIRED, "https://bench.example.org/")) == PAIRED
    md = markdown(PAIRED, None)
    assert md.startswith("amos (demo-amos-K50) beats direct (demo-direct-K50) by 0.12 ordinal AUPRC [0.05, 0.19] at K=50")
    assert "GT sha256 cccccccccccc…" in md and "(/results?claim=" in md
    assert decode(f"We found: {md}") == PAIRED


def test_statement_says_level_when_the_interval_holds_zero_and_trails_when_below():
    level = {**PAIRED, "figure": {"difference": 0.02, "low": -0.03, "high": 0.07, "n_common": 100}}
    assert "is not distinguishable from direct (demo-direct-K50): +0.02 ordinal AUPRC [-0.03, 0.07]" in statement(level)
    worse = {**PAIRED, "figure": {"difference": -0.2, "low": -0.3, "high": -0.1, "n_common": 100}}
    assert "trails direct (demo-direct-K50) by 0.20 ordinal AUPRC [-0.30, -0.10]" in statement(worse)
    # hand check: process is in points (1 decimal), AUPRC a share (2 decimals)
    assert number("process_score", 12.345) == "12.3" and number("ordinal_auprc", 0.125) == "0.12"


@pytest.mark.parametrize("bad, why", [
    ("", "not a claim"),
    ("not base64 !!", "not a claim"),
    (base64.urlsafe_b64encode(b"[1]").decode().rstrip("="), "expected a JSON object"),
    (encode({**PAIRED, "v": 2}), "format version 2"),
    (encode({**PAIRED, "kind": "guess"}), "field 'kind'"),
    (encode({**PAIRED, "runs": ["../etc"] * 2}), "invalid run name"),
    (encode({**PAIRED, "runs": ["a"]}), "names 2 run"),
    (encode({**PAIRED, "metric": "vibes"}), "field 'metric'"),
    (encode({k: v for k, v in PAIRED.items() if k != "figure"}), "field 'figure'"),
])
def test_bad_claims_are_refused_naming_the_field(bad, why):
    with pytest.raises((WorkbenchError, ValueError), match=why):
        decode(bad)


def test_a_huge_token_is_refused_before_decoding():
    huge = base64.urlsafe_b64encode(orjson.dumps({"x": "y" * 20_000})).decode()
    with pytest.raises(WorkbenchError, match="not a claim"):
        decode(huge)
