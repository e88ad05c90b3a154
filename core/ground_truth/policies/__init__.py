"""Point and rule policies (SPEC §3.3) as data: ``core/ground_truth/policies/data/*.yaml``, one mechanism.

A policy says which judged reviews are incidents, names *signals* (conditions on judgment fields,
so the mapping from a task's fields to "False assurance" etc. is data), gives points per severity
and per modifier, and lists ordered verdict rules (first match wins, else the default verdict).
A rule condition is either a score threshold (point policies) or a count of incidents/reviews
matching field values and signals (rule policies); signals named in a count are required on the
same review and are never ignored.

The same :class:`Policy` serves GT (:func:`compute_policy_gt_frame`, set-wise polars), and methods
and metrics (:meth:`Policy.score_incidents`, :meth:`Policy.evaluate`, pure Python per restaurant).
Both paths are built from the same definitions and tested against each other. Files are read by
:mod:`core.ground_truth.policies.loader`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from core.ground_truth.policies.parts import (
    DEFAULT_VERDICTS,
    ByK,
    Condition,
    Match,
    Modifier,
    Recency,
    RestaurantModifier,
    Rule,
    Signal,
    _num,
    frozen_mapping,
    matches,
    norm,
    review_day,
    review_year,
)


class PolicyScore(NamedTuple):
    """Result for one restaurant: score, verdict, per-incident breakdown, cuisine flag, rule text."""

    score: float
    verdict: str
    breakdown: list[dict[str, Any]]
    cuisine_modifier: bool = False
    triggered_rule: str | None = None


DEAD_RULE = re.compile(r"\bnever (?:fires|applies|matches|match|scores)\b|no incident can occur")


@dataclass(frozen=True)
class Policy:
    """One policy definition (see the module docstring and ``core/ground_truth/policies/data``)."""

    policy_id: str
    task: str
    version: str
    title: str
    description: str
    incident_when: Match
    incident_unless: Match
    signals: Mapping[str, Signal]
    severity_points: Mapping[str, float]
    modifiers: tuple[Modifier, ...]
    restaurant_modifiers: tuple[RestaurantModifier, ...]
    recency: Recency | None
    rules: tuple[Rule, ...]
    default_verdict: str
    source: str = ""
    has_scoring: bool = field(default=False)
    verdicts: tuple[str, ...] = DEFAULT_VERDICTS  # the ordered verdict scale, lowest first
    severity_field: str = "incident_severity"
    relevance_field: str | None = None  # when set, only judgments with this field true count
    origin: str = ""  # e.g. "ADDM G1/dietary/V2.yaml" for an imported policy
    incident_any: tuple[Match, ...] = ()  # when given, an incident must also match one of these
    replaces_builtin: bool = False  # a workspace policy in force instead of the built-in of its id
    import_warnings: tuple[str, ...] = ()  # what `policies import` warned about ("<yaml path>: <message>")

    def __post_init__(self) -> None:
        # Deeply immutable: tables are read-only mappings (issue 10), everything else tuples.
        object.__setattr__(self, "signals", frozen_mapping(self.signals))
        object.__setattr__(self, "severity_points", frozen_mapping(self.severity_points))

    @property
    def name(self) -> str:
        return self.policy_id

    @property
    def dead_rules(self) -> tuple[str, ...]:
        """The import warnings about parts of the policy that can never take effect (a condition on a
        field or value the policy's terms lack, a modifier without a field mapping, a text-only rule)."""
        return tuple(w for w in self.import_warnings if DEAD_RULE.search(w))

    @property
    def needs_reference(self) -> bool:
        """True when recency weights need the dataset's newest year (the policy sets none)."""
        r = self.recency
        return r is not None and r.reference_year is None and r.reference_date is None

    def with_reference_year(self, year: int) -> Policy:
        """A copy whose recency uses ``year`` as the reference (the dataset default)."""
        if self.recency is None:
            return self
        return dataclasses.replace(self, recency=dataclasses.replace(self.recency, reference_year=int(year)))

    def is_relevant(self, review: Mapping[str, Any]) -> bool:
        """True unless the policy has a relevance field and it is not true on ``review``."""
        return self.relevance_field is None or norm(review.get(self.relevance_field)) == "true"

    # -- per review ---------------------------------------------------------------------------
    def is_incident(self, review: Mapping[str, Any]) -> bool:
        """Firsthand with a severity (per ``incident.when``) and not excluded by ``incident.unless``."""
        unless = bool(self.incident_unless) and matches(self.incident_unless, review)
        alternatives = not self.incident_any or any(matches(m, review) for m in self.incident_any)
        return matches(self.incident_when, review) and alternatives and not unless

    def review_signals(self, review: Mapping[str, Any]) -> set[str]:
        """Names of the signals that hold on one judged review."""
        return {name for name, s in self.signals.items() if s.holds(review)}

    def incidents_from_judgments(self, judgments: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Incidents of judged reviews: review_id, idx, date, severity, modifiers (labels)."""
        out = []
        for j in judgments:
            if self.is_incident(j):
                active = self.review_signals(j)
                out.append({
                    "review_id": j.get("review_id"), "idx": j.get("idx"), "date": j.get("date"),
                    "severity": norm(j.get(self.severity_field)),
                    "modifiers": [m.label for m in self.modifiers if m.signal in active],
                    "signals": sorted(active),
                })
        return out

    # -- per restaurant -----------------------------------------------------------------------
    def score_incidents(
        self,
        incidents: Sequence[Mapping[str, Any]],
        categories: str | None,
        *,
        reviews: Sequence[Mapping[str, Any]] | None = None,
        k: int | None = None,
    ) -> PolicyScore:
        """Score and verdict of a restaurant from its incidents (pure).

        An incident is ``{severity, modifiers: [labels]}`` (ADDM GT files, claimed incidents of a
        method), optionally with review_id and date (for recency). Count rules over "reviews"
        use ``reviews`` (all judged reviews) when given, else the incidents.
        """
        label_to_signal = {m.label: m.signal for m in self.modifiers}
        label_to_signal.update({s.label: n for n, s in self.signals.items()})
        items = []
        for inc in incidents:
            severity = norm(inc.get("severity", inc.get(self.severity_field)))
            if "signals" in inc:
                active = set(inc["signals"])
            elif "modifiers" in inc:
                active = {label_to_signal.get(str(lbl), str(lbl)) for lbl in inc.get("modifiers") or []}
            else:
                active = self.review_signals(inc)
            items.append((inc, severity, active))
        breakdown, total = self._points(items, reviews)
        n = len(items)
        cuisine = False
        for rm in self.restaurant_modifiers:
            if rm.applies(categories, n):
                total += rm.points
                cuisine = True
        pseudo = [
            {**inc, self.severity_field: sev, "account_type": inc.get("account_type", "firsthand"), "_signals": act}
            for inc, sev, act in items
        ]
        counted_reviews = None
        if reviews is not None:
            counted_reviews = [{**r, "_signals": self.review_signals(r)} for r in reviews]
        verdict, rule = self._verdict(total, pseudo, counted_reviews, k)
        return PolicyScore(_num(total), verdict, breakdown, cuisine, rule)

    def evaluate(self, judgments: Sequence[Mapping[str, Any]], categories: str | None, k: int | None = None) -> PolicyScore:
        """Score and verdict from a restaurant's judged reviews of ``idx < K`` (per-K thresholds at
        ``k``); parse errors and, with a relevance field, irrelevant judgments are left out."""
        valid = self.counted_judgments(judgments)
        return self.score_incidents(self.incidents_from_judgments(valid), categories, reviews=valid, k=k)

    def counted_judgments(self, judgments: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The judgments a policy looks at: no parse error, relevant (when it has a relevance field)."""
        return [j for j in judgments if not j.get("parse_error") and self.is_relevant(j)]

    def _points(self, items: list, reviews: Sequence[Mapping[str, Any]] | None) -> tuple[list[dict], float]:
        discard_old = self._discard_old(reviews)
        breakdown, total = [], 0.0
        for inc, severity, active in items:
            base = float(self.severity_points.get(severity or "", 0))
            mods = [m for m in self.modifiers if m.signal in active]
            subtotal = base + sum(m.points for m in mods)
            weight = 1.0
            if self.recency is not None:
                age = self.recency.age(inc.get("date"))
                weight = self.recency.weight_of_age(age)
                older = self.recency.discard_older_than
                if discard_old and age is not None and older is not None and age > older:
                    weight = 0.0
            points = subtotal * weight
            total += points
            entry = {"review_id": inc.get("review_id"), "severity": severity, "base_points": _num(base),
                     "modifiers": [m.label for m in mods], "total_points": _num(points)}
            if self.recency is not None:
                entry["recency_weight"] = weight
            breakdown.append(entry)
        return breakdown, _num(total)

    def _discard_old(self, reviews: Sequence[Mapping[str, Any]] | None) -> bool:
        r = self.recency
        if r is None or r.discard_signal is None or reviews is None:
            return False
        signal = self.signals[r.discard_signal]
        recent = 0
        for rev in reviews:
            age = r.age(rev.get("date"))
            if age is not None and age <= r.discard_within and signal.holds(rev):
                recent += 1
        return recent >= r.discard_min_reviews

    def _verdict(
        self, score: float, incidents: list[dict], reviews: list[dict] | None, k: int | None = None,
    ) -> tuple[str, str | None]:
        for rule in self.rules:
            held = [c for c in rule.conditions if self._condition_holds(c, score, incidents, reviews, k)]
            if rule.logic == "all":
                if rule.conditions and len(held) == len(rule.conditions):
                    return rule.verdict, " and ".join(c.text for c in rule.conditions)
            elif held:
                return rule.verdict, held[0].text
        return self.default_verdict, None

    @classmethod
    def _condition_holds(
        cls, cond: Condition, score: float, incidents: list[dict], reviews: list[dict] | None, k: int | None = None,
    ) -> bool:
        if cond.is_score:
            return cond.holds_for(score, k)
        return cond.holds_for(len(cls._counted(cond, incidents, reviews)), k)

    @staticmethod
    def _counted(cond: Condition, incidents: list[dict], reviews: list[dict] | None) -> list[dict]:
        pool = incidents if cond.count == "incidents" or reviews is None else reviews
        return [r for r in pool if matches(cond.where, r) and set(cond.signals) <= r["_signals"]]

    def rule_counts(self, judgments: Sequence[Mapping[str, Any]]) -> list[tuple[Rule, Condition, list[dict]]]:
        """For every count condition of the rules, the judged reviews it counts (for traces)."""
        valid = self.counted_judgments(judgments)
        incidents = [
            {**j, self.severity_field: norm(j.get(self.severity_field)), "_signals": self.review_signals(j)}
            for j in valid if self.is_incident(j)
        ]
        reviews = [{**j, "_signals": self.review_signals(j)} for j in valid]
        return [
            (rule, cond, self._counted(cond, incidents, reviews))
            for rule in self.rules for cond in rule.conditions if not cond.is_score
        ]


__all__ = ["DEFAULT_VERDICTS", "ByK", "Condition", "Match", "Modifier", "Policy", "PolicyScore", "Recency",
           "RestaurantModifier", "Rule", "Signal", "matches", "norm", "review_day", "review_year"]
