"""core.judgments.judges.heuristic_screen and the heuristic judges' fast lines: the vectorised screen
never screens out a review a rule fires on, and the lines written without record dicts are the
bytes the general path writes, on the demo's reviews and on 2,491 real Yelp reviews (dev-ADDM)."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest

from core.judgments.judges import heuristic_screen as S
from core.judgments.judges.heuristic import PROFILES, HeuristicJudge, judge_text, quiet_result
from core.judgments.store import JudgmentLines, encode_judgments
from core.tasks import get_task

EDGE_TEXTS = [
    None, "", "ER", "We ended up in the E.R. after the satay.", "Caf\u00e9 au lait, then hives.", "Cr\u00e8me br\u00fbl\u00e9e\u00a0and na\u00efve ER staff",
    "Someone with a nut allergy should be careful.", "\u0130LL after the peanut sauce", "my lips went numb\u2026",
    "I\u2019m allergic to peanuts and the staff shrugged.", "Great pad thai \U0001f44d\ufe0f", "thoroughly enjoyed it",
]


def _real_texts(fixtures_dir) -> list[str]:
    texts = []
    with open(fixtures_dir / "dev-ADDM/full/dataset_K25.jsonl", encoding="utf-8") as fh:
        for line in fh:
            texts += [r["text"] for r in json.loads(line)["reviews"]]
    return texts


def _demo_texts(small_demo) -> list[str]:
    return pl.read_parquet(small_demo / "datasets/demo/reviews.parquet")["text"].drop_nulls().to_list()


def test_the_screen_reads_every_safe_character_as_python_re_reads_it():
    view = pl.DataFrame({"c": list(S.SAFE_CHARS)}).select(S.screen_view(pl.col("c")))["c"].to_list()
    for c, v in zip(S.SAFE_CHARS, view, strict=True):
        low = c.lower()
        assert len(low) == 1 and len(v) == 1, repr(c)
        # the same word boundaries and \w: Python's on the lower-cased text, ASCII classes on the view
        assert (re.fullmatch(r"\w", low) is not None) == (re.fullmatch("[0-9A-Za-z_]", v) is not None), repr(c)
        if re.fullmatch(r"\s", low):
            assert v in "\t\n\x0b\x0c\r ", repr(c)
        if low.isascii():
            assert v == low, repr(c)
        else:  # no (ASCII) character of a rule matches it, with or without IGNORECASE
            assert re.fullmatch("[\x00-\x7f]", c, re.IGNORECASE) is None, repr(c)
    assert S.may_fire(["\U0001f600 hives", "\u0130LL", "\x1c"]) == [True, True, True]  # outside: the rules read it


def test_patterns_it_cannot_translate_are_refused():
    with pytest.raises(ValueError, match=r"\\d"):
        S.rust_pattern(r"\bcalled \d+")
    with pytest.raises(ValueError, match="nested lookaround"):
        S.rust_pattern(r"a(?!b(c))")


def _check_screen(texts: list[str | None]) -> float:
    fire = S.may_fire(texts)
    assert len(fire) == len(texts)
    for profile in PROFILES.values():
        quiet = quiet_result(profile)
        missed = [t for t, f in zip(texts, fire, strict=True) if not f and judge_text(t, profile) != quiet]
        assert missed == [], f"{profile.judge_id}: screened out {missed[:3]}"
    return sum(fire) / max(1, len(fire))


def test_the_screen_never_drops_a_review_a_rule_fires_on(small_demo, fixtures_dir):
    assert _check_screen(EDGE_TEXTS) < 1
    assert 0 < _check_screen(_demo_texts(small_demo)) < 1
    assert 0 < _check_screen(_real_texts(fixtures_dir)) < 0.2  # most real reviews fire nothing


@pytest.mark.parametrize("version", sorted(PROFILES))
def test_fast_lines_are_the_bytes_of_the_general_path(small_demo, fixtures_dir, version):
    spec = get_task("G1a", None)
    judge = HeuristicJudge(spec, version)
    texts = [*EDGE_TEXTS, *_demo_texts(small_demo)[:600], *_real_texts(fixtures_dir)]
    rows = [{"dataset": "d", "business_id": f"b{n % 7}", "review_id": None if n % 5 == 0 else f"r\u00e9\"{n}",
             "idx": n, "text": t, "text_hash": None if n % 3 == 0 else f"{n:016x}"} for n, t in enumerate(texts)]
    stamp = re.compile(rb'"created_at": "[^"]*"')
    fast = judge.encode_lines(spec, "d", rows, judge.screen([r["text"] for r in rows]))
    unscreened = judge.encode_lines(spec, "d", rows)
    assert fast is not None and unscreened is not None
    assert stamp.sub(b"*", fast) == stamp.sub(b"*", unscreened)  # the screen changes nothing
    general = encode_judgments(spec, "d", judge.judge_id, judge.judge(rows))
    assert stamp.sub(b"*", fast) == stamp.sub(b"*", general)


def test_rows_the_fast_lines_cannot_vouch_for_take_the_general_path():
    spec = get_task("G1a", None)
    judge = HeuristicJudge(spec, "heuristic-v2")
    good = {"business_id": "b", "review_id": "r", "idx": 0, "text": "fine", "text_hash": None}
    for bad in ({"idx": -1}, {"idx": True}, {"business_id": ""}, {"text_hash": "XYZ"}, {"review_id": 7}):
        assert judge.encode_lines(spec, "d", [good, {**good, **bad}]) is None
    lines = JudgmentLines(spec, "d", judge.judge_id, judge.prompt_version)
    fields = {"incident_severity": "none", "account_type": "none", "safety_interaction": "none"}
    assert lines.tail(fields, "", {}) is not None
    assert lines.tail({**fields, "account_type": "maybe"}, "", {}) is None  # outside the enum: encode_judgments raises
    assert lines.tail({"incident_severity": "none"}, "", {}) is None
