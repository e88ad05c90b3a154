"""The per-answer scores of SPEC §8 (citation, length, keywords, overall, status) and a set's config.

Pure functions in scikit-learn style; the accuracy methods live in :mod:`core.gold.accuracy`.
``n`` is the whitespace token count of the answer. Defaults are SPEC's (and the reference
harness's); a set may change its citation patterns, length bands, weights and thresholds in a
``gold.json`` beside its files (:func:`load_config`).
"""

from __future__ import annotations

import math
import re
import re._constants as _sre  # the parse tree of a pattern: see backtracking_risk
import re._parser as _parser
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import read_json
from core.gold.accuracy import ACCURACY_METHODS

# Named citation patterns; a set chooses among them (or adds its own) in gold.json.
CITATION_PATTERNS: dict[str, str] = {
    "law_section": r"\[§\s*[\d-]+\s+[^\]]+\]",
    "ns_standard": r"\[NS\s*\d+\]",
    "lov": r"\[Lov om [^\]]+\]",
    "forskrift": r"\[Forskrift [^\]]+\]",
}
STATUSES = ("pass", "acceptable", "fail")


@dataclass(frozen=True)
class LengthBands:
    """Length score bands: ``optimal`` inclusive range, ``acceptable_min``, and the three scores."""

    optimal_min: int = 100
    optimal_max: int = 250
    acceptable_min: int = 50
    optimal_score: float = 1.0
    acceptable_score: float = 0.8
    other_score: float = 0.5


@dataclass(frozen=True)
class Weights:
    """Weights of the overall score (they sum to 1)."""

    accuracy: float = 0.50
    citation: float = 0.25
    length: float = 0.15
    keywords: float = 0.10


@dataclass(frozen=True)
class GoldConfig:
    """How one gold set is scored (SPEC §8 defaults)."""

    accuracy: str = "tfidf"
    citation_patterns: tuple[tuple[str, str], ...] = tuple(CITATION_PATTERNS.items())
    length: LengthBands = field(default_factory=LengthBands)
    weights: Weights = field(default_factory=Weights)
    pass_threshold: float = 0.90
    acceptable_threshold: float = 0.75
    match_threshold: float = 0.75  # similarity at which an answer counts as a semantic match
    pass_rate_goal: float = 0.90

    def compiled_patterns(self) -> list[re.Pattern[str]]:
        """The citation patterns, compiled."""
        return [re.compile(rx) for _, rx in self.citation_patterns]


def token_count(text: str) -> int:
    """Whitespace tokens of ``text``.

    >>> token_count("  Merverdiavgift er\\nen avgift ")
    4
    """
    return len(text.split())


def find_citation(text: str, patterns: Sequence[re.Pattern[str]]) -> str | None:
    """The first citation of ``text`` (patterns tried in order), or None.

    >>> pats = GoldConfig().compiled_patterns()
    >>> find_citation("Se [§ 3-1 Lov om årsregnskap] og [NS 4102].", pats)
    '[§ 3-1 Lov om årsregnskap]'
    >>> find_citation("Ingen kilde.", pats) is None
    True
    """
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return match.group(0)
    return None


def citation_score(text: str, *, required: bool, patterns: Sequence[re.Pattern[str]]) -> float:
    """1.0 if no citation is required, else 1.0 iff a pattern matches, else 0.0.

    >>> pats = GoldConfig().compiled_patterns()
    >>> citation_score("Konto 1500 [NS 4102]", required=True, patterns=pats)
    1.0
    >>> citation_score("Konto 1500", required=True, patterns=pats), citation_score("x", required=False, patterns=pats)
    (0.0, 1.0)
    """
    if not required:
        return 1.0
    return 1.0 if find_citation(text, patterns) is not None else 0.0


def length_score(n: int, *, max_tokens: int = 300, bands: LengthBands | None = None) -> float:
    """1.0 if 100 ≤ n ≤ 250; 0.8 if 50 ≤ n < 100 or 250 < n ≤ max_tokens; else 0.5.

    >>> [length_score(n) for n in (49, 50, 99, 100, 250, 251, 300, 301)]
    [0.5, 0.8, 0.8, 1.0, 1.0, 0.8, 0.8, 0.5]
    """
    if n < 0:
        raise ValueError(f"token count must be >= 0, got {n}")
    b = bands or LengthBands()
    if b.optimal_min <= n <= b.optimal_max:
        return b.optimal_score
    if b.acceptable_min <= n < b.optimal_min or b.optimal_max < n <= max_tokens:
        return b.acceptable_score
    return b.other_score


def keywords_found(text: str, keywords: Sequence[str]) -> list[str]:
    """The keywords that occur in ``text`` (case-insensitive substring), in keyword order.

    >>> keywords_found("Avgift til STATEN ved omsetning", ["avgift til staten", "varer", "omsetning"])
    ['avgift til staten', 'omsetning']
    """
    lower = text.lower()
    return [kw for kw in keywords if kw.lower() in lower]


def keyword_score(found: int, total: int) -> float:
    """found / total, 1.0 when nothing is required.

    >>> keyword_score(2, 3), keyword_score(0, 0)
    (0.6666666666666666, 1.0)
    """
    if total < 0 or not 0 <= found <= max(total, 0):
        raise ValueError(f"need 0 <= found <= total, got found={found}, total={total}")
    return found / total if total > 0 else 1.0


def overall_score(accuracy: float, citation: float, length: float, keywords: float, *,
                  weights: Weights | None = None) -> float:
    """.50 accuracy + .25 citation + .15 length + .10 keywords (the reference's order of additions).

    >>> round(overall_score(1.0, 1.0, 0.5, 1.0), 12)  # .5 + .25 + .075 + .1
    0.925
    """
    w = weights or Weights()
    return accuracy * w.accuracy + citation * w.citation + length * w.length + keywords * w.keywords


def status_of(overall: float, *, pass_threshold: float = 0.90, acceptable_threshold: float = 0.75) -> str:
    """``pass`` if overall ≥ .90, ``acceptable`` if ≥ .75, else ``fail``.

    >>> status_of(0.9), status_of(0.8999), status_of(0.75), status_of(0.7499)
    ('pass', 'acceptable', 'acceptable', 'fail')
    """
    if overall >= pass_threshold:
        return "pass"
    if overall >= acceptable_threshold:
        return "acceptable"
    return "fail"


# ---------------------------------------------------------------------------------------------
# gold.json: a set's configuration

_TOP_KEYS = {"accuracy", "citation_patterns", "length", "weights", "thresholds", "pass_rate_goal"}


MAX_PATTERN = 500  # characters of a citation regex


def _repeats(items: Any, *, unbounded_only: bool) -> Iterator[tuple[int, Any]]:
    """(max, body) of every repeat in a parsed regular expression, at any depth."""
    for op, arg in items:
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            if not unbounded_only or arg[1] == _sre.MAXREPEAT:
                yield arg[1], arg[2]
            yield from _repeats(arg[2], unbounded_only=unbounded_only)
        elif op in (_sre.SUBPATTERN, _sre.ATOMIC_GROUP, _sre.ASSERT, _sre.ASSERT_NOT):
            yield from _repeats(arg[-1], unbounded_only=unbounded_only)
        elif op == _sre.BRANCH:
            for alternative in arg[1]:
                yield from _repeats(alternative, unbounded_only=unbounded_only)


def backtracking_risk(pattern: str) -> str | None:
    """Why ``pattern`` could take exponential time on a crafted answer (a repeat inside an unbounded
    repeat, as in ``(a+)+$``), or None. Python's ``re`` has no timeout, so such a pattern would hang
    ``gold eval`` and the Gold page; it is refused when the set is read.

    >>> backtracking_risk(r"\\[NS\\s*\\d+\\]") is None, backtracking_risk(r"^(a+)+$")
    (True, 'a repeat inside an unbounded repeat ((x+)+, (x*)*, (x{1,9})+) can take exponential time; simplify it')
    """
    if len(pattern) > MAX_PATTERN:
        return f"a citation pattern is at most {MAX_PATTERN} characters"
    for _, body in _repeats(_parser.parse(pattern), unbounded_only=True):
        if any(limit > 1 for limit, _ in _repeats(body, unbounded_only=False)):
            return "a repeat inside an unbounded repeat ((x+)+, (x*)*, (x{1,9})+) can take exponential time; simplify it"
    return None


def _number(value: Any, *, path: Path, field: str, lo: float = 0.0, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        shown = type(value).__name__ if not isinstance(value, float) else repr(value)
        raise DataError(f"expected a finite number, got {shown}", path=path, field=field)
    if value < lo or (hi is not None and value > hi):
        raise DataError(f"must be between {lo} and {hi}, got {value}", path=path, field=field)
    return float(value)


def parse_citation_patterns(value: Any, *, path: Path) -> tuple[tuple[str, str], ...]:
    """Named built-ins (``"ns_standard"``) or ``{"name": ..., "regex": ...}``; an unknown name is an error."""
    if not isinstance(value, list) or not value:
        raise DataError("expected a non-empty list", path=path, field="citation_patterns")
    out: list[tuple[str, str]] = []
    for i, entry in enumerate(value):
        where = f"citation_patterns[{i}]"
        if isinstance(entry, str):
            if entry not in CITATION_PATTERNS:
                raise DataError(f"unknown citation pattern {entry!r}; valid: {', '.join(CITATION_PATTERNS)}",
                                path=path, field=where)
            out.append((entry, CITATION_PATTERNS[entry]))
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not isinstance(entry.get("regex"), str):
            raise DataError("expected a pattern name or {\"name\": ..., \"regex\": ...}", path=path, field=where)
        try:
            re.compile(entry["regex"])
        except re.error as exc:
            raise DataError(f"invalid regular expression: {exc}", path=path, field=f"{where}.regex") from None
        problem = backtracking_risk(entry["regex"])
        if problem:
            raise DataError(problem, path=path, field=f"{where}.regex")
        out.append((entry["name"], entry["regex"]))
    return tuple(out)


def config_from_dict(raw: Any, *, path: Path, base: GoldConfig | None = None) -> GoldConfig:
    """A :class:`GoldConfig` from a parsed ``gold.json`` (fields not given keep ``base``'s values)."""
    cfg = base or GoldConfig()
    if not isinstance(raw, dict):
        raise DataError("expected a JSON object", path=path)
    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise DataError(f"unknown setting; valid: {', '.join(sorted(_TOP_KEYS))}", path=path, field=unknown[0])
    if "accuracy" in raw:
        if raw["accuracy"] not in ACCURACY_METHODS:
            raise DataError(f"unknown accuracy method {raw['accuracy']!r}; valid: {', '.join(ACCURACY_METHODS)}",
                            path=path, field="accuracy")
        cfg = replace(cfg, accuracy=raw["accuracy"])
    if "citation_patterns" in raw:
        cfg = replace(cfg, citation_patterns=parse_citation_patterns(raw["citation_patterns"], path=path))
    if "length" in raw:
        cfg = replace(cfg, length=_sub(raw["length"], cfg.length, path=path, field="length"))
    if "weights" in raw:
        weights = _sub(raw["weights"], cfg.weights, path=path, field="weights")
        total = weights.accuracy + weights.citation + weights.length + weights.keywords
        if abs(total - 1.0) > 1e-9:
            raise DataError(f"weights must sum to 1, got {total:g}", path=path, field="weights")
        cfg = replace(cfg, weights=weights)
    if "thresholds" in raw:
        t = raw["thresholds"]
        if not isinstance(t, dict) or set(t) - {"pass", "acceptable", "match"}:
            raise DataError("expected {pass, acceptable, match}", path=path, field="thresholds")
        cfg = replace(
            cfg,
            pass_threshold=_number(t.get("pass", cfg.pass_threshold), path=path, field="thresholds.pass", hi=1),
            acceptable_threshold=_number(t.get("acceptable", cfg.acceptable_threshold), path=path,
                                         field="thresholds.acceptable", hi=1),
            match_threshold=_number(t.get("match", cfg.match_threshold), path=path, field="thresholds.match", hi=1),
        )
        if cfg.acceptable_threshold > cfg.pass_threshold:
            raise DataError("acceptable must not exceed pass", path=path, field="thresholds")
    if "pass_rate_goal" in raw:
        cfg = replace(cfg, pass_rate_goal=_number(raw["pass_rate_goal"], path=path, field="pass_rate_goal", hi=1))
    return cfg


def _sub(value: Any, current: Any, *, path: Path, field: str) -> Any:
    if not isinstance(value, dict):
        raise DataError("expected an object", path=path, field=field)
    names = set(current.__dataclass_fields__)
    unknown = sorted(set(value) - names)
    if unknown:
        raise DataError(f"unknown setting; valid: {', '.join(sorted(names))}", path=path, field=f"{field}.{unknown[0]}")
    changes: dict[str, Any] = {}
    for key, val in value.items():
        number = _number(val, path=path, field=f"{field}.{key}", hi=None if isinstance(getattr(current, key), int) else 1)
        changes[key] = int(number) if isinstance(getattr(current, key), int) else number
    new = replace(current, **changes)
    if isinstance(new, LengthBands) and not new.acceptable_min <= new.optimal_min <= new.optimal_max:
        raise DataError("need acceptable_min <= optimal_min <= optimal_max", path=path, field=field)
    return new


CONFIG_NAME = "gold.json"


def load_config(path: str | Path | None) -> GoldConfig:
    """The set's config from ``path`` (a ``gold.json``), or SPEC defaults when None or missing."""
    if path is None:
        return GoldConfig()
    path = Path(path)
    if not path.exists():
        return GoldConfig()
    return config_from_dict(read_json(path), path=path)


def config_as_dict(cfg: GoldConfig) -> dict[str, Any]:
    """The config as gold.json content (round-trips through :func:`config_from_dict`)."""
    return {
        "accuracy": cfg.accuracy,
        "citation_patterns": [name if CITATION_PATTERNS.get(name) == rx else {"name": name, "regex": rx}
                              for name, rx in cfg.citation_patterns],
        "length": dict(cfg.length.__dict__), "weights": dict(cfg.weights.__dict__),
        "thresholds": {"pass": cfg.pass_threshold, "acceptable": cfg.acceptable_threshold,
                       "match": cfg.match_threshold},
        "pass_rate_goal": cfg.pass_rate_goal,
    }
