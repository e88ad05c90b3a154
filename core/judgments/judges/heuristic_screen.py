"""A vectorised screen for the heuristic judges: which reviews can fire a rule at all.

Most keyword-matched reviews fire no rule of ``heuristic-v1``/``heuristic-v2``: no severity cue,
no staff cue in a review with allergy context, no allergy concern. Their judgment is always the
same (:func:`core.judgments.judges.heuristic.quiet_result`), so the judges only need to read the
others with the Python rules. :func:`may_fire` decides that for a whole batch of texts in polars
(Rust regexes over the column), and it never says "quiet" for a review the rules would fire on:

- the rule regexes are run in Rust as written, except that lookarounds are dropped (a wider
  pattern), and that ``\\b``, ``\\w`` and ``\\s`` are spelled out as ASCII classes, run on
  :func:`screen_view` of the text (lower-cased, a Latin-1 letter read as "a"), where they mean
  what Python's ``re`` means by them on the lower-cased text;
- a text with a character outside :data:`SAFE_CHARS` (emoji, other scripts, control characters:
  characters whose case or word class Python's ``re`` and Rust's ``regex`` might read
  differently) is never screened out: the Python rules read it;
- severity cues are looked for anywhere (any match is a fired or a suppressed cue); staff cues
  and concerns only in a review with allergy context, as the rules do; a concern (allergy word and
  worry or advice in one sentence) only where both occur somewhere in the text (a match inside a
  sentence is a match in the text: sentences are separated by white space).

The screen is a superset of the rules by construction; tests/core/test_judging_heuristic_screen.py
checks the character classes it relies on, and that the rules fire on no review it screens out of
the demo's and of 2,491 real Yelp reviews.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from core.judgments.judges import heuristic_rules as R

# ASCII text, Latin-1 and the punctuation real reviews use (curly quotes, dashes, ellipsis, euro):
# on these characters Python's re (lower-cased text, Unicode \b \w \s) and the ASCII classes
# below agree, once a Latin-1 letter or digit is read as "a" and a Latin-1 space as " "
# (:func:`screen_view`; no rule spells a non-ASCII character, so a wider pattern at most).
SAFE_PUNCTUATION = "\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u20ac\u2122\u2022"
LATIN_WORD = "\u00aa\u00b2\u00b3\u00b5\u00b9\u00ba\u00bc-\u00be\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff"
LATIN_SPACE = "\u0085\u00a0"
SAFE_CHARS = "\t\n\r\u0085" + "".join(map(chr, (*range(0x20, 0x7F), *range(0xA0, 0x100)))) + SAFE_PUNCTUATION
_UNSAFE = "[^\t\n\r -~\u0085\u00a0-\u00ff" + SAFE_PUNCTUATION + "]"
_WORD = "[0-9A-Za-z_]"
_SPACE = "[\t\n\x0b\x0c\r ]"
_LOOKAROUND = re.compile(r"\(\?<?[=!][^()]*\)")
_ESCAPE = re.compile(r"\\(.)")


def rust_pattern(pattern: str) -> str:
    """``pattern`` (a rule of :mod:`core.judgments.judges.heuristic_rules`) for polars: lookarounds
    dropped, ``\\b``/``\\w``/``\\s`` as ASCII classes (exact on :data:`SAFE_CHARS` text).

    >>> rust_pattern(r"(?<!as )\\bsomeone with\\b")
    '(?-u:\\\\b)someone with(?-u:\\\\b)'
    """
    out = _LOOKAROUND.sub("", pattern)
    if "(?<" in out or "(?=" in out or "(?!" in out:
        raise ValueError(f"nested lookaround in {pattern!r}")
    for m in _ESCAPE.finditer(out):
        if m.group(1).isalnum() and m.group(1) not in "bws":
            raise ValueError(f"escape \\{m.group(1)} of {pattern!r} has no ASCII translation here")
    return _ESCAPE.sub(lambda m: {"b": r"(?-u:\b)", "w": _WORD, "s": _SPACE}.get(m.group(1), m.group(0)), out)


def _alternation(patterns: Sequence[str]) -> str:
    return rust_pattern("|".join(f"(?:{p})" for p in patterns))


_SEVERITY = _alternation([p for _, _, p, _ in (*R.SEVERITY_RULES, *R.SEVERITY_RULES_V2)])
_STAFF = tuple(rust_pattern(p) for _, _, p in R.STAFF_RULES)  # one by one: faster than one alternation
_CONTEXT = rust_pattern(R.ALLERGY_CONTEXT.pattern)
_CONDITION = rust_pattern(R.ALLERGY_CONDITION.pattern)
_CONCERN = _alternation([R.CONCERN.pattern, R.STRONG_HYPOTHETICAL.pattern])
# R.ER (case-sensitive, on the original text) with its lookahead "(?=\W|$)" spelled out
_ER = r"(?-u:\b)(?:ER(?-u:\b)|E\.R\.(?:[^0-9A-Za-z_]|$))"


def screen_view(text: pl.Expr) -> pl.Expr:
    """The lower-cased text the rule patterns are run on, Latin-1 letters and digits as "a" and
    Latin-1 spaces as " " (same word boundaries and classes as Python's re sees on the lower-cased text)."""
    return (text.str.to_lowercase().str.replace_all(f"[{LATIN_WORD}]", "a")
            .str.replace_all(f"[{LATIN_SPACE}]", " "))


def may_fire(texts: Sequence[str | None]) -> list[bool]:
    """For each text: False when no rule of heuristic-v1 or heuristic-v2 can fire on it (its
    judgment is :func:`core.judgments.judges.heuristic.quiet_result`), else True."""
    if not texts:
        return []
    low = pl.col("low")
    frame = pl.DataFrame({"text": pl.Series(texts, dtype=pl.String).fill_null("")}).with_row_index("i")
    first = frame.with_columns(low=screen_view(pl.col("text"))).select(
        "i", "low",
        fire=pl.col("text").str.contains(_UNSAFE) | pl.col("text").str.contains(_ER) | low.str.contains(_SEVERITY),
        context=low.str.contains(_CONTEXT),
    )
    rest = first.filter(~pl.col("fire") & pl.col("context")).select(
        "i",
        more=pl.any_horizontal([low.str.contains(p) for p in _STAFF])
        | (low.str.contains(_CONDITION) & low.str.contains(_CONCERN)),
    ).filter("more")
    fire = first["fire"].to_list()
    for i in rest["i"].to_list():
        fire[i] = True
    return fire
