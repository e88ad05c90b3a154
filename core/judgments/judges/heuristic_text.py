"""A review's text as the heuristic judges read it: verbatim sentence spans, cue matches, clauses.

Split from :mod:`core.judgments.judges.heuristic` (which re-exports :func:`sentence_spans`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from core.judgments.judges import heuristic_rules as R

_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+|\n+")
_CLAUSE = re.compile(r"[,;:]|\bbut\b|\bhowever\b|\bthough\b", re.IGNORECASE)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    r"""Verbatim sentence spans ``(start, end)`` of ``text`` (stripped, non-empty).

    >>> t = "Great food!  My lips swelled.\nNever again"
    >>> [t[s:e] for s, e in sentence_spans(t)]
    ['Great food!', 'My lips swelled.', 'Never again']
    """
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((start, m.start() + len(m.group().rstrip())))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


@dataclass(frozen=True)
class Cue:
    """One matched cue: rule name, what it says, and where (sentence index and character span)."""

    rule: str
    kind: str  # severity level, or assurance/negative/positive
    sentence: int
    start: int
    end: int


class Review:
    """A review's text with its sentence spans."""

    def __init__(self, text: str) -> None:
        self.text = text
        low = text.lower()
        self.low = low
        # lower-case patterns on the lower-cased text are faster than IGNORECASE; positions stay
        # valid as long as lower() kept the length (it does except for a few rare characters)
        self._scan = low if len(low) == len(text) else None
        self.has_context = any(t in low for t in R.CONTEXT_TRIGGERS) and R.ALLERGY_CONTEXT.search(low) is not None
        self.triggers = R.find_triggers(low)
        self._spans: list[tuple[int, int]] | None = None
        self._starts: list[int] = []

    @property
    def spans(self) -> list[tuple[int, int]]:
        if self._spans is None:  # only reviews with a cue need sentences
            self._spans = sentence_spans(self.text) or [(0, 0)]
            self._starts = [s for s, _ in self._spans]
        return self._spans

    def matches(self, rules: R.RuleSet) -> list[tuple[str, re.Match[str]]]:
        """``(rule, match)`` of every rule that matches, in text order."""
        found = [(name, m) for name, fast, slow in rules.active(self.triggers)
                 for m in (fast.finditer(self._scan) if self._scan is not None else slow.finditer(self.text))]
        found.sort(key=lambda item: item[1].start())
        return found

    def sentence_of(self, pos: int) -> int:
        self.spans  # noqa: B018 - computes the sentence starts
        return max(0, bisect.bisect_right(self._starts, pos) - 1)

    def sentence(self, i: int) -> str:
        s, e = self.spans[i]
        return self.text[s:e]

    def prefix(self, i: int, pos: int) -> str:
        return self.text[self.spans[i][0] : pos]

    def clause_prefix(self, i: int, pos: int) -> str:
        prefix = self.prefix(i, pos)
        cuts = [m.end() for m in _CLAUSE.finditer(prefix)]
        return prefix[cuts[-1] :] if cuts else prefix

    def disclosed_near(self, i: int) -> bool:
        """The previous or next sentence tells the staff about an allergy."""
        for j in (i - 1, i + 1):
            if 0 <= j < len(self.spans):
                sentence = self.sentence(j)
                if R.ALLERGY_CONDITION.search(sentence) and R.DISCLOSURE.search(sentence):
                    return True
        return False


