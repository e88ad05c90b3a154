"""Categorical answers of a judgment audit: the fields raters answer and the check of an answer.

A judgment audit (a project of kind ``judgment_audit``) asks raters, for each item, one value of
each of its *answer fields* (e.g. a task's judgment fields: ``incident_severity`` ∈ none, mild,
moderate, severe), each value with its meaning. A rating of such a project stores the answers as
JSON ``{field: value}`` instead of a score (label store schema version 4).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_FIELDS = 20
MAX_VALUES = 50


@dataclass(frozen=True)
class AnswerField:
    """One field an audit's raters answer: its name, what it asks, and its values with their meanings."""

    name: str
    description: str
    values: tuple[tuple[str, str], ...]  # (value, meaning), in the order shown

    @property
    def names(self) -> tuple[str, ...]:
        """The allowed values, in order."""
        return tuple(v for v, _ in self.values)

    def to_dict(self) -> dict[str, Any]:
        """The stored form (JSON-ready)."""
        return {"name": self.name, "description": self.description, "values": [list(v) for v in self.values]}


def check_answer_fields(fields: Sequence[AnswerField]) -> list[AnswerField]:
    """Validate an audit's fields: 1–20 fields with distinct non-blank names, each with 2–50
    distinct non-blank values.

    >>> check_answer_fields([AnswerField("f", "", (("a", ""),))])
    Traceback (most recent call last):
    ...
    ValueError: answer field 'f' needs 2 to 50 distinct values, got 1
    """
    if not 1 <= len(fields) <= MAX_FIELDS:
        raise ValueError(f"a judgment audit needs 1 to {MAX_FIELDS} answer fields, got {len(fields)}")
    names = [f.name for f in fields]
    if len(set(names)) != len(names) or not all(n.strip() for n in names):
        raise ValueError(f"answer field names must be distinct and non-blank, got {names}")
    for f in fields:
        values = f.names
        if not 2 <= len(set(values)) == len(values) <= MAX_VALUES or not all(str(v).strip() for v in values):
            raise ValueError(f"answer field {f.name!r} needs 2 to {MAX_VALUES} distinct values, got {len(values)}")
    return list(fields)


def parse_answer_fields(text: str) -> tuple[AnswerField, ...]:
    """The fields of a stored project (JSON list of :meth:`AnswerField.to_dict`)."""
    return tuple(AnswerField(str(d["name"]), str(d.get("description") or ""),
                             tuple((str(v), str(m)) for v, m in d["values"])) for d in json.loads(text or "[]"))


def check_answers(answers: Any, fields: Sequence[AnswerField]) -> dict[str, str]:
    """A complete answer: one allowed value for every field, nothing else (in field order).

    >>> f = [AnswerField("sev", "", (("none", ""), ("mild", "")))]
    >>> check_answers({"sev": "mild"}, f)
    {'sev': 'mild'}
    >>> check_answers({"sev": "bad"}, f)
    Traceback (most recent call last):
    ...
    ValueError: 'bad' is not a value of sev; valid: none, mild
    """
    if not isinstance(answers, Mapping):
        raise ValueError(f"answers must be an object {{field: value}}, got {type(answers).__name__}")
    known = {f.name: f for f in fields}
    extra = sorted(set(answers) - set(known))
    if extra:
        raise ValueError(f"unknown answer field(s) {', '.join(map(str, extra))}; valid: {', '.join(known)}")
    missing = [n for n in known if answers.get(n) in (None, "")]
    if missing:
        raise ValueError(f"every field needs an answer; missing: {', '.join(missing)}")
    out = {}
    for name, f in known.items():
        value = answers[name]
        if value not in f.names:
            raise ValueError(f"{value!r} is not a value of {name}; valid: {', '.join(f.names)}")
        out[name] = str(value)
    return out


def answers_text(answers: Mapping[str, str]) -> str:
    """``field: value · field: value`` for a one-line summary.

    >>> answers_text({"sev": "mild", "acct": "firsthand"})
    'sev: mild · acct: firsthand'
    """
    return " · ".join(f"{k}: {v}" for k, v in answers.items())
