"""The parts a policy is made of (SPEC §3.3): field matches, signals, modifiers, recency, count
and score conditions, rules; and the date readers they share. :class:`~core.ground_truth.policies.Policy`
puts them together."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date as _date
from types import MappingProxyType
from typing import Any

Match = tuple[tuple[str, tuple[str, ...]], ...]  # ((field, allowed values), ...): all must hold
ByK = tuple[tuple[int, float], ...]  # ((K, threshold), ...): per-K thresholds, default elsewhere
DEFAULT_VERDICTS = ("Low Risk", "High Risk", "Critical Risk")


def frozen_mapping(items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Mapping[str, Any]:
    """A read-only mapping (MappingProxyType over a private copy): policy constants never change.

    >>> m = frozen_mapping({"mild": 2.0})
    >>> m["mild"] = 3
    Traceback (most recent call last):
    ...
    TypeError: 'mappingproxy' object does not support item assignment
    """
    return MappingProxyType(dict(items))


def at_k(default: float | None, by_k: ByK, k: int | None) -> float | None:
    """The threshold that applies at K: the per-K value when K has one, else the default.

    >>> at_k(2, ((25, 1),), 25), at_k(2, ((25, 1),), 200), at_k(2, ((25, 1),), None)
    (1, 2, 2)
    """
    if k is not None:
        for kk, value in by_k:
            if kk == k:
                return value
    return default


def norm(value: Any) -> str | None:
    """How judgment values are compared: booleans as "true"/"false", text stripped and lower-cased.

    >>> norm(True), norm(" Severe "), norm(None)
    ('true', 'severe', None)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip().lower()


def matches(match: Match, review: Mapping[str, Any]) -> bool:
    """True when every field of ``match`` has one of its values in ``review``."""
    return all(norm(review.get(name)) in values for name, values in match)


@dataclass(frozen=True)
class Signal:
    name: str
    label: str
    description: str
    any_of: tuple[Match, ...]

    def holds(self, review: Mapping[str, Any]) -> bool:
        return any(matches(m, review) for m in self.any_of)


@dataclass(frozen=True)
class Modifier:
    signal: str
    label: str
    points: float


@dataclass(frozen=True)
class RestaurantModifier:
    label: str
    points: float
    min_incidents: int
    categories_contain: tuple[str, ...]
    description: str = ""

    def applies(self, categories: str | None, n_incidents: int) -> bool:
        text = categories or ""
        return n_incidents >= self.min_incidents and any(word in text for word in self.categories_contain)


@dataclass(frozen=True)
class Recency:
    """Recency weights by age band. Age is ``reference_year − year`` (whole years) or, when the
    policy gives a ``reference_date``, the exact age ``(reference_date − date).days / 365.25``.
    ``reference_year`` None = not set by the policy: GT uses the year of the dataset's newest review."""

    reference_year: int | None
    bands: tuple[tuple[float | None, float], ...]  # (max_age or None = any age, weight), in order
    discard_older_than: float | None = None
    discard_signal: str | None = None
    discard_min_reviews: int = 0
    discard_within: float = 0.0
    reference_date: str | None = None

    def age(self, date: Any) -> float | None:
        """Age of a review dated ``date`` (None when the date has no readable year/day)."""
        if self.reference_date is not None:
            day = review_day(date)
            if day is None:
                return None
            return (_date.fromisoformat(self.reference_date) - day).days / 365.25
        year = review_year(date)
        if year is None or self.reference_year is None:
            return None
        return self.reference_year - year

    def weight_of_age(self, age: float | None) -> float:
        if age is None:
            return 1.0
        for max_age, weight in self.bands:
            if max_age is None or age <= max_age:
                return weight
        return self.bands[-1][1]

    def weight(self, year: int | None) -> float:
        if year is None or self.reference_year is None:
            return 1.0
        return self.weight_of_age(self.reference_year - year)


@dataclass(frozen=True)
class Condition:
    """A score threshold (``score_at_least`` / ``score_at_most``) or a count of incidents/reviews
    matching ``where`` and ``signals`` that holds when the count ≥ ``at_least``. Every threshold
    may differ per K (``*_by_k``); a K without an entry uses the default."""

    text: str
    score_at_least: float | None = None
    count: str = "incidents"  # "incidents" | "reviews"
    where: Match = ()
    signals: tuple[str, ...] = ()
    at_least: int = 1
    at_least_by_k: ByK = ()
    score_at_most: float | None = None
    score_by_k: ByK = ()

    @property
    def is_score(self) -> bool:
        return self.score_at_least is not None or self.score_at_most is not None

    def threshold(self, k: int | None) -> float:
        """The threshold of this condition at K (count, or score in its direction)."""
        if self.score_at_least is not None:
            return float(at_k(self.score_at_least, self.score_by_k, k))  # type: ignore[arg-type]
        if self.score_at_most is not None:
            return float(at_k(self.score_at_most, self.score_by_k, k))  # type: ignore[arg-type]
        return float(at_k(self.at_least, self.at_least_by_k, k))  # type: ignore[arg-type]

    def holds_for(self, value: float, k: int | None) -> bool:
        """Whether a score (score condition) or a count (count condition) satisfies it at K."""
        if self.score_at_most is not None:
            return value <= self.threshold(k)
        return value >= self.threshold(k)

    def describe(self, k: int | None) -> str:
        """The comparison at K, e.g. ``count ≥ 2`` or ``score ≤ 70``."""
        what = "score" if self.is_score else "count"
        op = "≤" if self.score_at_most is not None else "≥"
        value = self.threshold(k)
        return f"{what} {op} {int(value) if float(value).is_integer() else value}"


@dataclass(frozen=True)
class Rule:
    verdict: str
    label: str
    conditions: tuple[Condition, ...]
    logic: str = "any"  # "any": one condition suffices; "all": every condition must hold


def review_year(date: Any) -> int | None:
    """The year of a "YYYY-…" date (4 ASCII digits, ≥ 1000), or None when it has no readable year.

    >>> review_year("2019-05-01 10:00:00"), review_year("May 2019"), review_year(None)
    (2019, None, None)
    """
    head = ("" if date is None else str(date))[:4]
    if len(head) == 4 and head.isascii() and head.isdigit() and int(head) >= 1000:
        return int(head)
    return None


def review_day(date: Any) -> _date | None:
    """The day of a "YYYY-MM-DD…" date, or None when it has none.

    >>> review_day("2019-05-01 10:00:00"), review_day("2019")
    (datetime.date(2019, 5, 1), None)
    """
    try:
        return _date.fromisoformat(str(date)[:10]) if date is not None else None
    except ValueError:
        return None


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x
