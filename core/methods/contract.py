"""The method output contract (SPEC §4.1): its JSON schema, validation, and the shared pieces of prompts.

The verdict scale comes from the policy object (``policy.verdicts`` when the policy defines an
ordered scale, else its default verdict followed by its rule verdicts from the lowest rule up),
so a method works for any scale, not only Low/High/Critical.

The deterministic path from per-review judgments to a contract answer
(:func:`contract_from_judgments`) is shared by ``amos`` (phase 2) and the offline ``heuristic``
model, so both score with the one policy definition.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from string import Template
from typing import Any

from core.ground_truth.policies import Policy
from core.judgments.judges.heuristic import sentence_spans
from core.tasks import Task

# How a G1a judgment reads as the contract's evidence fields (SPEC §4.1 names them after ADDM's
# judgment fields; G1a's safety_interaction carries both assurance and staff response).
G1A_EVIDENCE_FIELDS = ("INCIDENT_SEVERITY", "ACCOUNT_TYPE", "ASSURANCE_CLAIM", "STAFF_RESPONSE")
STAFF_RESPONSE_OF = {"negative": "dismissive", "positive": "accommodated", "betrayal": "accommodated"}


@functools.lru_cache(maxsize=64)
def keyword_pattern(keywords: tuple[str, ...]) -> re.Pattern[str]:
    """One alternation of the keywords: ``pattern.search(text.lower())`` is the SPEC §2.2 rule
    (a plain substring of the lower-cased text) in one pass.

    >>> bool(keyword_pattern(("nut", "allergy")).search("a donut"))
    True
    """
    ordered = sorted({k.lower() for k in keywords if k}, key=len, reverse=True)
    return re.compile("|".join(re.escape(k) for k in ordered) or r"(?!)")


TASK_KEYWORD_HIT = "task_keyword_hit"  # set on each review by the run planner (one pass over all texts)


def has_keyword(review: Mapping[str, Any], keywords: tuple[str, ...], *, task_keywords: tuple[str, ...] = ()) -> bool:
    """True when the review's lower-cased text contains any of ``keywords`` (the planner's
    precomputed match is used when ``keywords`` are the task's own)."""
    if keywords == task_keywords and TASK_KEYWORD_HIT in review:
        return bool(review[TASK_KEYWORD_HIT])
    return keyword_pattern(keywords).search((review.get("text") or "").lower()) is not None


def verdict_scale(policy: Policy) -> tuple[str, ...]:
    """The policy's verdicts, lowest first.

    >>> from core.ground_truth.policies.loader import get_policy
    >>> verdict_scale(get_policy("G1_allergy_V2", None))
    ('Low Risk', 'High Risk', 'Critical Risk')
    """
    declared = getattr(policy, "verdicts", None)
    if declared:
        return tuple(declared)
    out = [policy.default_verdict]
    for rule in reversed(policy.rules):
        if rule.verdict not in out:
            out.append(rule.verdict)
    return tuple(out)


def evidence_fields(task: Task) -> tuple[str, ...]:
    """The contract's evidence field names for ``task`` (upper-case judgment fields; G1a: SPEC §4.1)."""
    if set(task.field_names) == {"incident_severity", "account_type", "safety_interaction"}:
        return G1A_EVIDENCE_FIELDS
    return tuple(name.upper() for name in task.field_names)


def contract_schema(scale: Sequence[str], fields: Sequence[str], *, reasoning_first: bool = False) -> dict[str, Any]:
    """JSON schema of a contract answer (strict-mode compatible); ``reasoning_first`` for ``cot``."""
    evidence = {
        "type": "object",
        "properties": {
            "evidence_id": {"type": "string"}, "review_id": {"type": "string"},
            "field": {"type": "string", "enum": list(fields)}, "judgement": {"type": "string"},
            "snippet": {"type": "string"},
        },
        "required": ["evidence_id", "review_id", "field", "judgement", "snippet"],
        "additionalProperties": False,
    }
    breakdown = {
        "type": "object",
        "properties": {"evidence_id": {"type": "string"}, "base_points": {"type": "number"},
                       "modifiers": {"type": "array", "items": {"type": "string"}}, "subtotal": {"type": "number"}},
        "required": ["evidence_id", "base_points", "modifiers", "subtotal"],
        "additionalProperties": False,
    }
    justification = {
        "type": "object",
        "properties": {
            "triggered_rule": {"type": "string"},
            "direct_evidence": {"type": "array", "items": {"type": "string"}},
            "scoring_trace": {
                "type": "object",
                "properties": {"total_score": {"type": "number"}, "breakdown": {"type": "array", "items": breakdown}},
                "required": ["total_score", "breakdown"], "additionalProperties": False,
            },
            "reasoning": {"type": "string"},
        },
        "required": ["triggered_rule", "direct_evidence", "scoring_trace", "reasoning"],
        "additionalProperties": False,
    }
    props: dict[str, Any] = {}
    if reasoning_first:
        props["reasoning"] = {"type": "string"}
    props.update({
        "verdict": {"type": "string", "enum": list(scale)},
        "risk_score": {"type": "number"},
        "evidences": {"type": "array", "items": evidence},
        "justification": justification,
    })
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def validate_contract(answer: Any, scale: Sequence[str]) -> tuple[dict[str, Any] | None, str | None]:
    """``(answer, None)`` when ``answer`` keeps the contract, else ``(None or answer, reason)``.

    Only what the metrics rely on is required: a verdict on the scale, a numeric or absent
    risk_score, and evidences as a list of objects with a review_id.

    >>> validate_contract({"verdict": "Low Risk", "risk_score": 0, "evidences": []}, ["Low Risk", "High Risk"])[1] is None
    True
    >>> validate_contract({"verdict": "Maybe"}, ["Low Risk", "High Risk"])[1]
    "verdict 'Maybe' is not one of: Low Risk, High Risk"
    """
    if not isinstance(answer, dict):
        return None, f"expected a JSON object, got {type(answer).__name__}"
    verdict = answer.get("verdict")
    if verdict not in scale:
        return answer, f"verdict {verdict!r} is not one of: {', '.join(scale)}"
    score = answer.get("risk_score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)):
        return answer, f"risk_score {score!r} is not a finite number"  # NaN would rank as 0 and be written as bare NaN
    evidences = answer.get("evidences", [])
    if not isinstance(evidences, list) or not all(isinstance(e, dict) and "review_id" in e for e in evidences):
        return answer, "evidences must be a list of objects with a review_id"
    return answer, None


# -- prompt pieces --------------------------------------------------------------------------------
def policy_text(policy: Policy) -> str:
    """The policy as prompt text: what an incident is, signals, points, rules (from its definition)."""
    lines = [f"POLICY {policy.policy_id}: {policy.title}", policy.description.strip()]
    when = "; ".join(f"{name} in {list(values)}" for name, values in policy.incident_when)
    lines.append(f"An incident is a review where {when}.")
    for sig in policy.signals.values():
        lines.append(f"Signal '{sig.label}': {sig.description}.")
    if policy.severity_points:
        lines.append("Points per incident by severity: "
                     + ", ".join(f"{k} {_fmt(v)}" for k, v in policy.severity_points.items()) + ".")
    for m in policy.modifiers:
        lines.append(f"Modifier '{m.label}': +{_fmt(m.points)} on an incident where the signal holds.")
    for rm in policy.restaurant_modifiers:
        lines.append(f"Restaurant modifier '{rm.label}': +{_fmt(rm.points)} once, with at least "
                     f"{rm.min_incidents} incident(s), when {rm.description or 'its categories match'}.")
    lines.append("Verdict rules, first match wins:")
    for rule in policy.rules:
        lines.append(f"- {rule.verdict}: " + " OR ".join(c.text for c in rule.conditions))
    lines.append(f"- otherwise: {policy.default_verdict}")
    return "\n".join(lines)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def reviews_block(reviews: Sequence[Mapping[str, Any]]) -> str:
    """Reviews with a parseable header each (``[Review ID: … | idx … | date | stars]``)."""
    parts = []
    for r in reviews:
        stars = r.get("stars")
        header = f"[Review ID: {r['review_id']} | idx {r['idx']} | {str(r.get('date') or '')[:10]} | {stars} stars]"
        parts.append(f"{header}\n{r.get('text') or ''}\n[End of review]")
    return "\n\n".join(parts)


_REVIEW_RE = re.compile(r"\[Review ID: (\S+) \| idx (\d+) \| ([^|]*)\|[^\]]*\]\n(.*?)\n\[End of review\]", re.S)
_LINE_RE = re.compile(r"^(Task ID|Policy ID|Restaurant ID|Restaurant|Categories): ?(.*)$", re.M)


def parse_restaurant_prompt(text: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The header lines and the reviews of a restaurant prompt (the offline model reads prompts so).

    >>> head, revs = parse_restaurant_prompt("Task ID: G1a\\n[Review ID: r1 | idx 0 | 2020-01-01 | 5 stars]\\nGood.\\n[End of review]")
    >>> head["Task ID"], revs[0]["review_id"], revs[0]["text"]
    ('G1a', 'r1', 'Good.')
    """
    head = {m.group(1): m.group(2).strip() for m in _LINE_RE.finditer(text)}
    reviews = [{"review_id": m.group(1), "idx": int(m.group(2)), "date": m.group(3).strip() or None, "text": m.group(4)}
               for m in _REVIEW_RE.finditer(text)]
    return head, reviews


def render(template: str, **values: Any) -> str:
    return Template(template).substitute(**{k: "" if v is None else v for k, v in values.items()})


# -- judgments → contract (amos phase 2 and the offline model) -----------------------------------
def evidences_for(review_id: str, fields: Mapping[str, Any], snippet: str, task: Task) -> list[dict[str, Any]]:
    """Contract evidences of one judged review (no evidence for a review with nothing to report)."""
    out: list[dict[str, Any]] = []
    if evidence_fields(task) == G1A_EVIDENCE_FIELDS:
        severity = str(fields.get("incident_severity") or "none")
        interaction = str(fields.get("safety_interaction") or "none")
        if severity != "none":
            out.append({"field": "INCIDENT_SEVERITY", "judgement": severity})
            out.append({"field": "ACCOUNT_TYPE", "judgement": str(fields.get("account_type") or "none")})
            if interaction == "betrayal":
                out.append({"field": "ASSURANCE_CLAIM", "judgement": "true"})
        if interaction in STAFF_RESPONSE_OF and interaction != "betrayal":
            out.append({"field": "STAFF_RESPONSE", "judgement": STAFF_RESPONSE_OF[interaction]})
    else:
        for name in task.field_names:
            value = fields.get(name)
            if value not in (None, "none", "", False):
                out.append({"field": name.upper(), "judgement": str(value)})
    return [{"review_id": review_id, **e, "snippet": snippet} for e in out]


def contract_from_judgments(
    judgments: Sequence[Mapping[str, Any]], *, task: Task, policy: Policy, categories: str | None, note: str,
) -> dict[str, Any]:
    """A contract answer scored deterministically with ``policy`` from per-review judgments.

    ``judgments``: ``{review_id, idx, date, snippet, <task fields>}`` per judged review.
    """
    evidences: list[dict[str, Any]] = []
    first_of: dict[str, str] = {}
    for j in judgments:
        for e in evidences_for(str(j["review_id"]), j, str(j.get("snippet") or ""), task):
            e = {"evidence_id": f"E{len(evidences) + 1}", **e}
            first_of.setdefault(e["review_id"], e["evidence_id"])
            evidences.append(e)
    scored = policy.evaluate([dict(j) for j in judgments], categories)
    breakdown = [{"evidence_id": first_of.get(str(b.get("review_id")), ""), "base_points": b["base_points"],
                  "modifiers": list(b["modifiers"]), "subtotal": b["total_points"]} for b in scored.breakdown]
    n = len(scored.breakdown)
    reasoning = (f"{note}: {n} incident(s) found in {len(judgments)} judged review(s); "
                 f"policy {policy.policy_id} gives score {scored.score} and verdict {scored.verdict}.")
    return {
        "verdict": scored.verdict,
        "risk_score": scored.score,
        "evidences": evidences,
        "justification": {
            "triggered_rule": scored.triggered_rule or f"default: {policy.default_verdict}",
            "direct_evidence": [b["evidence_id"] for b in breakdown if b["evidence_id"]],
            "scoring_trace": {"total_score": scored.score, "breakdown": breakdown},
            "reasoning": reasoning,
        },
    }


def verbatim_snippet(text: str, excerpt: str | None) -> str:
    """``excerpt`` when it occurs in ``text`` (exactly, or after collapsing whitespace), else the
    sentence of ``text`` sharing most words with it, else "" — always a substring of ``text``.

    >>> verbatim_snippet("Great food. My lips   swelled up!", "my lips swelled up")
    'My lips   swelled up!'
    >>> verbatim_snippet("Great food.", "")
    ''
    """
    if not excerpt:
        return ""
    if excerpt in text:
        return excerpt
    words = set(re.findall(r"\w+", excerpt.lower()))
    best, best_overlap = "", 0
    for s, e in sentence_spans(text):
        overlap = len(words & set(re.findall(r"\w+", text[s:e].lower())))
        if overlap > best_overlap:
            best, best_overlap = text[s:e], overlap
    return best
