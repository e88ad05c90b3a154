"""Judge ensembles: several judges, each with a weight, combined per field by weighted majority.

For each review every member judges it; per field the value with the largest total weight wins
and its share of the weight of the members that answered becomes the field's ``confidence``
(3 equal members agreeing 2:1 → 0.667). A member's value outside the enum (a parse error) votes
for nothing but still counts in the denominator; ties go to the value of the earliest member
that gave one of the tied values. A field no member answered validly is None with a
``parse_error``. Records are stored under ``ensemble-<name>``; ``raw`` keeps every member's
answer. :func:`low_confidence` lists judgments for human review (override candidates).

Spec strings (CLI ``--ensemble``): ``NAME:MEMBER[*WEIGHT],MEMBER[*WEIGHT],...`` where MEMBER is
``heuristic``, ``openai:MODEL`` or ``openai:MODEL#SEED``, e.g.
``trio:openai:gpt-4o-mini#1,openai:gpt-4o-mini#2,openai:gpt-4o-mini#3`` or
``mix:openai:gpt-4o*2,openai:gpt-4o-mini,heuristic``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from core.judgments import latest, read_log
from core.judgments.judges.base import (
    Judge,
    JudgeKind,
    is_failure,
    make_failure,
    make_record,
    register_judge_kind,
)
from core.judgments.judges.heuristic import HeuristicJudge
from core.judgments.judges.openai_judge import OpenAIJudge
from core.tasks import get_task
from core.workspace import check_name

_MEMBER_RE = re.compile(r"^(?P<kind>heuristic|openai:(?P<model>[^#*]+?)(?:#(?P<seed>-?\d+))?)(?:\*(?P<weight>[0-9.]+))?$")


@dataclass(frozen=True)
class MemberSpec:
    """One member of an ensemble spec: kind, model and seed (openai), weight."""

    kind: str  # "heuristic" | "openai"
    model: str | None = None
    seed: int | None = None
    weight: float = 1.0


def parse_ensemble_spec(spec: str) -> tuple[str, list[MemberSpec]]:
    """``(name, members)`` of an ensemble spec string.

    >>> name, members = parse_ensemble_spec("trio:openai:m#1,openai:m#2*2,heuristic")
    >>> name, [(m.kind, m.model, m.seed, m.weight) for m in members]
    ('trio', [('openai', 'm', 1, 1.0), ('openai', 'm', 2, 2.0), ('heuristic', None, None, 1.0)])
    """
    name, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ValueError(f"ensemble spec {spec!r}: expected NAME:MEMBER[*WEIGHT],MEMBER[*WEIGHT],...")
    check_name("ensemble", name)
    members = []
    for part in (p.strip() for p in rest.split(",")):
        match = _MEMBER_RE.match(part)
        if not match:
            raise ValueError(f"ensemble spec {spec!r}: bad member {part!r} (heuristic, openai:MODEL or "
                             "openai:MODEL#SEED, optionally *WEIGHT)")
        weight = float(match["weight"]) if match["weight"] else 1.0
        if weight <= 0:
            raise ValueError(f"ensemble spec {spec!r}: weight of {part!r} must be > 0")
        kind = "heuristic" if match["kind"] == "heuristic" else "openai"
        members.append(MemberSpec(kind, match["model"], int(match["seed"]) if match["seed"] else None, weight))
    if len(members) < 2:
        raise ValueError(f"ensemble spec {spec!r}: an ensemble needs at least 2 members")
    return name, members


def weighted_vote(values: Sequence[Any], weights: Sequence[float], allowed: Sequence[str]) -> tuple[Any, float | None]:
    """``(winner, share)`` of a weighted majority vote over ``values`` (invalid ones vote for nothing).

    share = winning weight / total weight of all voters. Ties go to the earliest tied value.

    >>> weighted_vote(["mild", "none", "mild"], [1, 1, 1], ["none", "mild"])
    ('mild', 0.6666666666666666)
    >>> weighted_vote(["mild", "none"], [1, 3], ["none", "mild"])
    ('none', 0.75)
    >>> weighted_vote(["oops", None], [1, 1], ["none"])
    (None, None)
    """
    if len(values) != len(weights):
        raise ValueError(f"{len(values)} values but {len(weights)} weights")
    total = float(sum(weights))
    tally: dict[str, float] = {}
    for value, weight in zip(values, weights, strict=True):
        if value in allowed:
            tally[value] = tally.get(value, 0.0) + float(weight)
    if not tally or total <= 0:
        return None, None
    best = max(tally.values())
    winner = next(v for v in values if v in tally and tally[v] == best)
    return winner, best / total


class EnsembleJudge:
    """Weighted-majority ensemble of member judges, stored as ``ensemble-<name>``."""

    def __init__(self, task: Any, *, name: str, members: Sequence[tuple[Judge, float]]) -> None:
        if len(members) < 2:
            raise ValueError("an ensemble needs at least 2 members")
        self.task = task
        self.members = list(members)
        self.judge_id = f"ensemble-{check_name('ensemble', name)}"
        self.prompt_version = "+".join(f"{j.judge_id}@{j.prompt_version}" for j, _ in self.members)[:200]
        self.concurrent = any(j.concurrent for j, _ in self.members)

    def judge(self, review_rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Ask every member about the rows, then vote review by review."""
        answers = [member.judge(review_rows) for member, _ in self.members]
        return [self._combine(row, [a[i] for a in answers]) for i, row in enumerate(review_rows)]

    async def ajudge(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Ask every member about one review (the model members' calls at once), then vote."""
        async def ask(member: Judge) -> dict[str, Any]:
            ajudge = getattr(member, "ajudge", None)
            return (await ajudge(row))[0] if ajudge is not None else member.judge([row])[0]

        answers = await asyncio.gather(*(ask(member) for member, _ in self.members))
        return [self._combine(row, list(answers))]

    def set_concurrency(self, concurrency: int) -> None:
        """At most ``concurrency`` requests in flight per model member."""
        for member, _ in self.members:
            if callable(setter := getattr(member, "set_concurrency", None)):
                setter(concurrency)

    async def aclose(self) -> None:
        """End the event loop's use of the model members' endpoints."""
        for member, _ in self.members:
            if callable(close := getattr(member, "aclose", None)):
                await close()

    def _combine(self, row: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
        voting = [(rec, w) for rec, (_, w) in zip(records, self.members, strict=True) if not is_failure(rec)]
        if not voting:
            return make_failure(row, "; ".join(f"{j.judge_id}: {r['error']}" for r, (j, _) in
                                               zip(records, self.members, strict=True)))
        fields: dict[str, Any] = {}
        confidence: dict[str, float | None] = {}
        problems: list[str] = []
        for f in self.task.fields:
            value, share = weighted_vote([r["fields"].get(f.name) for r, _ in voting], [w for _, w in voting], f.values)
            fields[f.name], confidence[f.name] = value, share
            if value is None:
                problems.append(f"{f.name}: no member gave a valid value")
        excerpt = self._excerpt([r for r, _ in voting], fields)
        raw = {"members": [
            {"judge": j.judge_id, "weight": w, **({"error": r["error"]} if is_failure(r) else
                                                  {"fields": r["fields"], "parse_error": r.get("parse_error")})}
            for r, (j, w) in zip(records, self.members, strict=True)
        ]}
        return make_record(
            row, task=self.task.task_id, judge=self.judge_id, prompt_version=self.prompt_version, fields=fields,
            excerpt=excerpt, raw=raw, parse_error="; ".join(problems) or None,
            confidence={k: (round(v, 6) if v is not None else None) for k, v in confidence.items()},
            usage=_sum_usage([r.get("usage") for r, _ in voting]),
        )

    def _excerpt(self, records: list[dict[str, Any]], fields: dict[str, Any]) -> str:
        """The excerpt of the first member that agrees with every winning field, else of the first
        that agrees on the first field (severity for G1a), else ""."""
        first = self.task.field_names[0]
        for agrees in (lambda r: r["fields"] == fields, lambda r: r["fields"].get(first) == fields[first]):
            for rec in records:
                if rec.get("excerpt") and agrees(rec):
                    return str(rec["excerpt"])
        return ""

    def usage_totals(self) -> dict[str, Any] | None:
        """Summed calls, tokens and cost of the members that call a model."""
        totals = [t() for j, _ in self.members if callable(t := getattr(j, "usage_totals", None))]
        totals = [t for t in totals if t]
        if not totals:
            return None
        return {k: (round(sum(t[k] for t in totals), 10) if k == "cost_usd" else sum(t[k] for t in totals))
                for k in totals[0]}


def _sum_usage(usages: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    present = [u for u in usages if u]
    if not present:
        return None
    costs: list[float] = [float(u["cost_usd"]) for u in present if u.get("cost_usd") is not None]
    return {
        "prompt_tokens": sum(int(u.get("prompt_tokens") or 0) for u in present),
        "completion_tokens": sum(int(u.get("completion_tokens") or 0) for u in present),
        "cost_usd": round(sum(costs), 10) if len(costs) == len(present) else None,  # None: an unpriced model
    }


def build_ensemble(task: Any, spec: str, *, openai_factory: Callable[..., Judge] | None = None) -> EnsembleJudge:
    """An :class:`EnsembleJudge` from a spec string; ``openai_factory(task, model=, seed=)`` builds
    the model members (default: :class:`OpenAIJudge` with the environment's client settings)."""
    name, specs = parse_ensemble_spec(spec)
    factory = openai_factory or OpenAIJudge
    members: list[tuple[Judge, float]] = []
    for m in specs:
        judge = HeuristicJudge(task) if m.kind == "heuristic" else factory(task, model=m.model, seed=m.seed)
        members.append((judge, m.weight))
    ids = [j.judge_id for j, _ in members]
    if len(set(ids)) != len(ids):
        raise ValueError(f"ensemble spec {spec!r}: members must differ (give repeated models different #SEEDs)")
    return EnsembleJudge(task, name=name, members=members)


def low_confidence(ws: Any, dataset: str, task: str, judge: str, threshold: float = 0.67) -> pl.DataFrame:
    """Latest judgments of ``judge`` with some field's confidence below ``threshold`` (for human review).

    Columns: business_id, review_id, idx, the fields, ``conf_<field>`` per field,
    ``min_confidence``, excerpt; sorted by min_confidence then review key. Judgments without
    confidence (single judges) are never listed.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    spec = get_task(task, ws)
    log = latest(read_log(ws, dataset, task, judge))
    df = log.select(
        "business_id", "review_id", "idx",
        *[pl.col("fields").struct.field(f).alias(f) for f in spec.field_names],
        *[pl.col("confidence").struct.field(f).alias(f"conf_{f}") for f in spec.field_names],
        "excerpt",
    ).with_columns(pl.min_horizontal([f"conf_{f}" for f in spec.field_names]).alias("min_confidence"))
    return df.filter(pl.col("min_confidence") < threshold).sort("min_confidence", "business_id", "idx")


register_judge_kind(JudgeKind(
    "ensemble", "weighted majority vote of several judges (spec NAME:MEMBER[*W],...)",
    lambda task, *, spec, **options: build_ensemble(task, spec, **options),
))
