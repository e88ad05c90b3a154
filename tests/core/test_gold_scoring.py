"""Each SPEC §8 scoring rule on hand-computed cases (arithmetic in the comments)."""

from __future__ import annotations

import json

import pytest

from core.base.errors import DataError
from core.gold.accuracy import jaccard_similarity
from core.gold.scoring import (
    GoldConfig,
    LengthBands,
    citation_score,
    config_as_dict,
    config_from_dict,
    keyword_score,
    keywords_found,
    length_score,
    load_config,
    overall_score,
    status_of,
    token_count,
)

PATTERNS = GoldConfig().compiled_patterns()


def test_jaccard_hand_computed():
    # A = {konto, 1500, er, kundefordringer}, B = {konto, 1500, gjelder, kundefordringer}
    # A∩B = {konto, 1500, kundefordringer} = 3, A∪B = 5 → 0.6
    assert jaccard_similarity("Konto 1500 er kundefordringer", "konto 1500 gjelder KUNDEFORDRINGER") == 0.6
    # duplicates and case collapse: A = {a}, B = {a, b} → 1/2
    assert jaccard_similarity("A a A", "a b") == 0.5
    # punctuation stays on the token (whitespace split only): "gjeld." ≠ "gjeld" → {er} / {er, gjeld., gjeld} = 1/3
    assert jaccard_similarity("er gjeld.", "er gjeld") == pytest.approx(1 / 3)
    assert jaccard_similarity("   ", "a") == 0.0 and jaccard_similarity("a", "") == 0.0


@pytest.mark.parametrize(("text", "required", "score"), [
    ("Se [§ 3-1 Lov om aksjeselskaper].", True, 1.0),  # law section
    ("Konto 1500 [NS 4102]", True, 1.0),  # standard
    ("Konto 1500 [NS4102]", True, 1.0),  # \s* allows no space
    ("[Lov om bokføring]", True, 1.0),
    ("[Forskrift om bokføring]", True, 1.0),
    ("§ 3-1 aksjeloven", True, 0.0),  # no brackets
    ("[§ 3-1]", True, 0.0),  # a section needs a title after it
    ("[NS-EN 4102]", True, 0.0),
    ("no citation at all", False, 1.0),  # not required → 1.0
])
def test_citation_score(text, required, score):
    assert citation_score(text, required=required, patterns=PATTERNS) == score


def test_citation_patterns_configurable():
    cfg = config_from_dict({"citation_patterns": ["ns_standard", {"name": "rundskriv", "regex": r"\[Rundskriv [^\]]+\]"}]},
                           path="gold.json")
    pats = cfg.compiled_patterns()
    assert citation_score("[Rundskriv 2/2024]", required=True, patterns=pats) == 1.0
    assert citation_score("[§ 3-1 Lov om aksjeselskaper]", required=True, patterns=pats) == 0.0  # not chosen


@pytest.mark.parametrize(("n", "max_tokens", "score"), [
    (0, 300, 0.5), (49, 300, 0.5),  # n < 50
    (50, 300, 0.8), (99, 300, 0.8),  # 50 ≤ n < 100
    (100, 300, 1.0), (250, 300, 1.0),  # 100 ≤ n ≤ 250
    (251, 300, 0.8), (300, 300, 0.8),  # 250 < n ≤ max_tokens
    (301, 300, 0.5),  # n > max_tokens
    (260, 255, 0.5),  # 260 > max 255
    (200, 150, 1.0),  # the optimal band is checked first (as the reference does)
])
def test_length_score(n, max_tokens, score):
    assert length_score(n, max_tokens=max_tokens) == score


def test_length_bands_configurable_and_negative_rejected():
    bands = LengthBands(optimal_min=20, optimal_max=60, acceptable_min=10)
    assert [length_score(n, bands=bands) for n in (9, 10, 20, 60, 61)] == [0.5, 0.8, 1.0, 1.0, 0.8]
    with pytest.raises(ValueError, match="token count"):
        length_score(-1)


def test_token_count_is_whitespace_split():
    assert token_count("Konto  1500\ter\nkundefordringer [NS 4102]") == 6


def test_keywords_case_insensitive_substrings():
    found = keywords_found("Leverandørgjeld er GJELD til leverandører", ["leverandørgjeld", "gjeld", "kreditor"])
    assert found == ["leverandørgjeld", "gjeld"]
    assert keyword_score(len(found), 3) == pytest.approx(2 / 3)  # 2 of 3
    assert keyword_score(0, 0) == 1.0  # nothing required
    with pytest.raises(ValueError, match="found"):
        keyword_score(3, 2)


def test_overall_and_status():
    # .50·0.6 + .25·1 + .15·0.8 + .10·0.5 = 0.30 + 0.25 + 0.12 + 0.05 = 0.72 → fail
    o = overall_score(0.6, 1.0, 0.8, 0.5)
    assert o == pytest.approx(0.72) and status_of(o) == "fail"
    # .50·1 + .25·1 + .15·0.5 + .10·1 = 0.925 → pass (expected answers shorter than 50 tokens)
    assert overall_score(1.0, 1.0, 0.5, 1.0) == pytest.approx(0.925)
    # .50·0.8 + .25·1 + .15·1 + .10·0 = 0.80 → acceptable
    o = overall_score(0.8, 1.0, 1.0, 0.0)
    assert o == pytest.approx(0.80) and status_of(o) == "acceptable"
    assert [status_of(x) for x in (0.90, 0.8999, 0.75, 0.7499)] == ["pass", "acceptable", "acceptable", "fail"]


def test_config_weights_and_thresholds(tmp_path):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"accuracy": "jaccard", "weights": {"accuracy": 0.4, "citation": 0.4, "length": 0.1,
                                                                    "keywords": 0.1},
                                "thresholds": {"pass": 0.8, "acceptable": 0.6}, "pass_rate_goal": 0.8}))
    cfg = load_config(path)
    # .4·1 + .4·0 + .1·1 + .1·1 = 0.6 → acceptable at the set's thresholds
    o = overall_score(1.0, 0.0, 1.0, 1.0, weights=cfg.weights)
    assert o == pytest.approx(0.6)
    assert status_of(o, pass_threshold=cfg.pass_threshold, acceptable_threshold=cfg.acceptable_threshold) == "acceptable"
    assert cfg.accuracy == "jaccard" and cfg.pass_rate_goal == 0.8
    assert config_from_dict(config_as_dict(cfg), path=path) == cfg  # round trip


@pytest.mark.parametrize(("raw", "message"), [
    ({"citation_patterns": ["ns_standard", "no_such"]}, r"gold.json: field 'citation_patterns\[1\]': unknown citation pattern 'no_such'"),
    ({"citation_patterns": [{"name": "x", "regex": "[unclosed"}]}, r"citation_patterns\[0\].regex': invalid regular expression"),
    ({"accuracy": "bleu"}, r"field 'accuracy': unknown accuracy method 'bleu'; valid: jaccard, tfidf, embedding, llm-judge"),
    ({"weights": {"accuracy": 0.9}}, r"weights must sum to 1"),
    ({"length": {"optimal_min": "100"}}, r"field 'length.optimal_min': expected a finite number"),
    ({"colour": "red"}, r"field 'colour': unknown setting"),
    ({"thresholds": {"pass": 0.5, "acceptable": 0.7}}, r"acceptable must not exceed pass"),
])
def test_bad_config_names_file_and_field(tmp_path, raw, message):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(DataError, match=message):
        load_config(path)


def test_missing_config_gives_spec_defaults(tmp_path):
    cfg = load_config(tmp_path / "gold.json")
    assert cfg == GoldConfig() and cfg.accuracy == "tfidf"
    assert [n for n, _ in cfg.citation_patterns] == ["law_section", "ns_standard", "lov", "forskrift"]
