"""``heuristic-v1`` and ``heuristic-v2``: deterministic rule-based judges for G1a (no LLM).

v2 (:class:`Profile`) adds precision rules to v1's and, from rules revision r2, the context rules of
:mod:`core.judgments.judges.heuristic_context` (a severity cue counts only with allergy context in its own
or a neighbouring sentence); each record names the revision (``prompt_version`` "heuristic-v2/r2").

How it reads a review:

1. The text is split into sentences (spans, so excerpts are verbatim).
2. Cue lexicons are matched over the whole text (case-insensitive, word boundaries, so "donut",
   "minute" or "butternut" never count as nuts); each match is mapped to its sentence.
3. **Severity cues** (mild: stomach upset, felt sick, itchy mouth …; moderate: hives, swollen lips,
   Benadryl …; severe: anaphylaxis, EpiPen, ER, hospital, throat closing …) count only when they
   are not negated just before ("no reaction", "didn't need the hospital"), not hypothetical in
   their sentence ("if you have an allergy you could end up in the ER"), not routine ("I always
   carry my EpiPen"), and, for the generic ones (hospital, stomach ache …), only in a review with
   allergy context. The strongest surviving cue gives ``incident_severity``.
4. **Account**: for an incident, who reacted, by the mention closest before the cue in its
   sentence: hearsay ("told me", "I heard") or someone outside the party ("a coworker", "a friend
   of mine") → secondhand; the reviewer or the own dining party ("I", "my lips", "my son": the
   task's definition of firsthand) → firsthand; he/she/they → whoever was named last. No incident
   but an allergy concern or precaution ("if you have a nut allergy …", "I always ask") →
   hypothetical.
5. **Staff interaction**: cues count only in a sentence with allergy context, or next to a
   sentence where the reviewer tells the staff about an allergy.
   An assurance ("they promised it was nut-free") plus an incident → betrayal; else a negative cue
   (dismissive, rolled eyes, refused …, or a negated positive like "not accommodating") →
   negative; else a positive cue (asked about allergies, accommodated, separate pan …) → positive.
6. ``excerpt`` is the verbatim sentence of the strongest cue (incident, then staff, then concern);
   ``raw`` lists every rule that fired and every cue that was suppressed, with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.base.clock import now_iso
from core.base.errors import WorkbenchError
from core.judgments.judges import heuristic_rules as R
from core.judgments.judges.base import JudgeKind, make_record, register_judge_kind
from core.judgments.judges.heuristic_context import context_reason
from core.judgments.judges.heuristic_screen import may_fire
from core.judgments.judges.heuristic_text import Cue, sentence_spans
from core.judgments.judges.heuristic_text import Review as _Review
from core.judgments.store import JudgmentLines

JUDGE_ID = "heuristic-v1"
RULES_VERSION = R.RULES_VERSION
SEVERITY_RANK = {"none": 0, "mild": 1, "moderate": 2, "severe": 3}
SUPPORTED_TASKS = ("G1a",)

_SEV_RULES = R.RuleSet([(r, p) for r, _, p, _ in R.SEVERITY_RULES])
_SEV_LEVEL = {r: lvl for r, lvl, _, _ in R.SEVERITY_RULES}
_SEV_NEEDS_CONTEXT = {r: ctx for r, _, _, ctx in R.SEVERITY_RULES}
_STAFF_RULES = R.RuleSet([(r, p) for r, _, p in R.STAFF_RULES])
_STAFF_KIND = {r: kind for r, kind, _ in R.STAFF_RULES}
__all__ = ["Cue", "sentence_spans", "judge_text", "quiet_result", "HeuristicJudge", "HeuristicV2Judge"]
@dataclass(frozen=True)
class Profile:
    """One version of the rules: v1 reads every reaction cue; v2 adds the precision rules.

    ``strict`` (v2) drops a cue that names a condition rather than an event ("my anaphylaxis
    case", "her anaphylactic allergy"), and an incident that only names a reaction ("had an
    allergic reaction") with no symptom or treatment anywhere in the review: when unsure, none.
    """

    judge_id: str
    rules: R.RuleSet
    strict: bool
    # heuristic-v2 r2: every severity cue needs allergy context in its own or a neighbouring
    # sentence and no other explanation next to it (:mod:`core.judgments.judges.heuristic_context`)
    context_window: bool = False
    revision: str | None = None

    @property
    def prompt_version(self) -> str:
        """What the records carry as ``prompt_version``: the judge id, plus the rules revision."""
        return f"{self.judge_id}/{self.revision}" if self.revision else self.judge_id


def _severity_cues(
    rv: _Review, has_context: bool, fired: list, suppressed: list, profile: Profile | None = None
) -> tuple[list[Cue], bool]:
    """Surviving severity cues, and whether any was dropped as hypothetical."""
    profile = profile or V1
    matches = rv.matches(profile.rules)
    if "er" in rv.low:
        matches += [("emergency_room", m) for m in R.ER.finditer(rv.text)]
    cues, hypothetical = [], False
    for rule, m in matches:
        i = rv.sentence_of(m.start())
        why = _cue_why(rv, rule, m, i, has_context, profile)
        hypothetical = hypothetical or why == "hypothetical"
        entry = {"rule": f"severity:{rule}", "value": _SEV_LEVEL[rule], "sentence": i, "match": m.group()}
        if why:
            suppressed.append({**entry, "why": why})
        else:
            fired.append(entry)
            cues.append(Cue(rule, _SEV_LEVEL[rule], i, m.start(), m.end()))
    if profile.strict and cues and all(c.rule in R.GENERIC_REACTION for c in cues):
        for c in cues:
            fired[:] = [f for f in fired if not (f["rule"] == f"severity:{c.rule}" and f["sentence"] == c.sentence)]
            suppressed.append({"rule": f"severity:{c.rule}", "value": c.kind, "sentence": c.sentence,
                               "match": rv.text[c.start:c.end], "why": "a reaction named without a symptom or treatment"})
        cues = []
    return cues, hypothetical


def _cue_why(rv: _Review, rule: str, m: re.Match[str], i: int, has_context: bool, profile: Profile) -> str | None:
    """Why one severity cue is dropped (None: it counts). r2's context rules come first, so a
    cue without allergy context is never read as an allergy worry either."""
    clause = rv.clause_prefix(i, m.start())
    if profile.context_window:
        why = context_reason(rv.text, rv.spans, i, m.start(), m.end(), rule)
        if why:
            return why
    elif _SEV_NEEDS_CONTEXT[rule] and not has_context:
        return "no allergy context in the review"
    if R.NEGATED.search(clause):
        return "negated"
    if R.STRONG_HYPOTHETICAL.search(rv.prefix(i, m.start())) or R.WEAK_HYPOTHETICAL.search(clause):
        return "hypothetical"
    if rule in ("epipen", "epinephrine") and R.ROUTINE.search(clause):
        return "routine mention (carrying it is not using it)"
    if _SEV_LEVEL[rule] == "mild" and R.FOOD_POISONING.search(rv.sentence(i)):
        return "food poisoning, not an allergic reaction"
    if profile.strict and R.CONDITION_NOT_EVENT.match(rv.text, m.start()) and not R.EVENT_VERB.search(clause):
        return "names the condition, not a reaction that happened"
    return None


def _person_before(text: str, end: int) -> str | None:
    """Who the last person mentioned before ``end`` is: "party", "other" (incl. hearsay) or None."""
    found = [(m.end(), "party") for m in R.PARTY.finditer(text, 0, end)]
    found += [(m.end(), "other") for m in R.OTHERS.finditer(text, 0, end)]
    found += [(m.end(), "other") for m in R.HEARSAY.finditer(text, 0, end)]
    return max(found)[1] if found else None


def _account(rv: _Review, cue: Cue) -> tuple[str, str]:
    """(account_type, rule) of an incident: who had the reaction (SPEC §2.3 / the task's meanings).

    ``cue`` is the first incident cue of the deciding sentence. The mention closest before it in
    its sentence decides: hearsay ("told me", "I heard") or a person outside the party ("a
    coworker", "a friend of mine") → secondhand; the reviewer ("I", "we", "my lips") or a party
    member ("my son", "my wife": the reviewer's own dining party) → firsthand; a pronoun
    (he/she/they) → whoever was mentioned last before it. Nobody named → firsthand.
    """
    start = rv.spans[cue.sentence][0]
    mentions = [(m.end(), "other") for m in R.HEARSAY.finditer(rv.text, start, cue.start)]
    mentions += [(m.end(), "other") for m in R.OTHERS.finditer(rv.text, start, cue.start)]
    mentions += [(m.end(), "party") for m in R.PARTY.finditer(rv.text, start, cue.start)]
    mentions += [(m.end(), "reviewer") for m in R.REVIEWER.finditer(rv.text, start, cue.start)]
    mentions += [(m.end(), "pronoun") for m in R.PRONOUN.finditer(rv.text, start, cue.start)]
    if not mentions:
        return "firsthand", "account:nobody_named"
    end, who = max(mentions, key=lambda m: (m[0], m[1] != "reviewer"))
    if who == "pronoun":
        who = _person_before(rv.text, end) or "party"
        return ("secondhand", "account:pronoun_for_other") if who == "other" else ("firsthand", "account:pronoun_for_party")
    if who == "other":
        return "secondhand", "account:other_person_or_hearsay"
    return "firsthand", f"account:{who}"


def _staff_cue(rv: _Review, rule: str, m: re.Match[str]) -> tuple[str, str, int, str | None]:
    """(rule, kind, sentence, reason to ignore or None) of one staff-cue match."""
    kind, i = _STAFF_KIND[rule], rv.sentence_of(m.start())
    clause = rv.clause_prefix(i, m.start())
    if not (R.ALLERGY_CONTEXT.search(rv.sentence(i)) or rv.disclosed_near(i)):
        return rule, kind, i, "no allergy context in the sentence or a disclosure next to it"
    if R.STRONG_HYPOTHETICAL.search(rv.sentence(i)) or (rule == "careful" and R.SELF_CARE.search(clause)) or (
        kind == "negative" and R.SELF_SUBJECT.search(clause)
    ):
        return rule, kind, i, "advice or the reviewer's own care, not the staff's"
    if R.NEGATED.search(clause):
        if kind != "positive" or rule in R.NO_FLIP:
            return rule, kind, i, "negated"
        return f"not_{rule}", "negative", i, None
    return rule, kind, i, None


def _staff(rv: _Review, incident: bool, fired: list, suppressed: list,
           reaction_at: int | None = None) -> tuple[str, Cue | None]:
    """(safety_interaction, deciding cue): betrayal > negative > positive (an assurance that held is care).

    With ``reaction_at`` (v2: the incident's sentence) only an assurance given before the reaction
    makes a betrayal; one after it is the staff's reply to the complaint.
    """
    found: dict[str, list[Cue]] = {"assurance": [], "negative": [], "positive": []}
    for name, m in rv.matches(_STAFF_RULES) if rv.has_context else []:
        rule, kind, i, why = _staff_cue(rv, name, m)
        entry = {"rule": f"staff:{rule}", "value": kind, "sentence": i, "match": m.group()}
        if why:
            suppressed.append({**entry, "why": why})
            continue
        fired.append(entry)
        found[kind].append(Cue(rule, kind, i, m.start(), m.end()))
    if reaction_at is not None:
        late = [c for c in found["assurance"] if c.sentence > reaction_at]
        for c in late:
            fired[:] = [f for f in fired if not (f["rule"] == f"staff:{c.rule}" and f["sentence"] == c.sentence)]
            suppressed.append({"rule": f"staff:{c.rule}", "value": c.kind, "sentence": c.sentence,
                               "match": rv.text[c.start:c.end], "why": "said after the reaction: a reply, not a claim"})
        found["assurance"] = [c for c in found["assurance"] if c.sentence <= reaction_at]
    if found["assurance"] and incident:
        return "betrayal", found["assurance"][0]
    if found["negative"]:
        return "negative", found["negative"][0]
    positive = found["positive"] + found["assurance"]
    if positive:
        return "positive", min(positive, key=lambda c: c.start)
    return "none", None


def _concern(rv: _Review, busy: set[int]) -> int | None:
    """The first sentence (not in ``busy``) voicing an allergy concern or precaution, else None."""
    for i in range(len(rv.spans)):
        sentence = rv.sentence(i)
        if i not in busy and R.ALLERGY_CONDITION.search(sentence) and (
            R.CONCERN.search(sentence) or R.STRONG_HYPOTHETICAL.search(sentence)
        ):
            return i
    return None


def judge_text(text: str | None, profile: Profile | None = None) -> tuple[dict[str, str], str, dict[str, Any]]:
    """Judge one review text: ``(fields, excerpt, raw)``; ``raw`` says which rules fired and why.

    >>> fields, excerpt, raw = judge_text("Loved it. I ate the satay and my lips swelled up, so I took Benadryl.")
    >>> fields
    {'incident_severity': 'moderate', 'account_type': 'firsthand', 'safety_interaction': 'none'}
    >>> excerpt
    'I ate the satay and my lips swelled up, so I took Benadryl.'
    """
    profile = profile or V1
    rv = _Review(text or "")
    fired: list[dict[str, Any]] = []
    suppressed: list[dict[str, Any]] = []
    cues, hypothetical = _severity_cues(rv, rv.has_context, fired, suppressed, profile)
    severity, account, excerpt_sentence = "none", "none", None
    if cues:
        top = max(cues, key=lambda c: (SEVERITY_RANK[c.kind], -c.start))
        severity, excerpt_sentence = top.kind, top.sentence
        account, rule = _account(rv, min((c for c in cues if c.sentence == top.sentence), key=lambda c: c.start))
        fired.append({"rule": rule, "value": account, "sentence": top.sentence})
    reaction_at = excerpt_sentence if profile.strict and severity != "none" else None
    staff, staff_cue = _staff(rv, severity != "none", fired, suppressed, reaction_at)
    if excerpt_sentence is None and staff_cue is not None:
        excerpt_sentence = staff_cue.sentence
    if severity == "none":
        busy = {f["sentence"] for f in fired if f["rule"].startswith("staff:")}
        concern = _concern(rv, busy) if rv.has_context else None
        if concern is None and hypothetical:
            concern = next(s["sentence"] for s in suppressed if s["why"] == "hypothetical")
        if concern is not None and staff == "none":
            account = "hypothetical"
            fired.append({"rule": "account:concern_without_incident", "value": account, "sentence": concern})
            excerpt_sentence = concern if excerpt_sentence is None else excerpt_sentence
    fields = {"incident_severity": severity, "account_type": account, "safety_interaction": staff}
    excerpt = rv.sentence(excerpt_sentence) if excerpt_sentence is not None else ""
    revision = {"rules_revision": profile.revision} if profile.revision else {}
    return fields, excerpt, {"rules_version": profile.judge_id, **revision, "fired": fired, "suppressed": suppressed}


V1 = Profile(JUDGE_ID, _SEV_RULES, strict=False)
V2 = Profile("heuristic-v2", R.RuleSet([(r, p) for r, _, p, _ in (*R.SEVERITY_RULES, *R.SEVERITY_RULES_V2)]),
             strict=True, context_window=True, revision=R.V2_REVISION)
_SEV_LEVEL.update({r: lvl for r, lvl, _, _ in R.SEVERITY_RULES_V2})
_SEV_NEEDS_CONTEXT.update({r: ctx for r, _, _, ctx in R.SEVERITY_RULES_V2})
PROFILES = {p.judge_id: p for p in (V1, V2)}


def quiet_result(profile: Profile | None = None) -> tuple[dict[str, str], str, dict[str, Any]]:
    """The judgment of a review no rule fires on (what :func:`judge_text` returns for an empty text,
    and for every text :func:`core.judgments.judges.heuristic_screen.may_fire` screens out)."""
    return judge_text("", profile)


class HeuristicJudge:
    """A heuristic judge (G1a rules; ``heuristic-v1`` by default, ``heuristic-v2`` with the
    precision rules); fast in bulk, so the runner calls it with all rows."""

    concurrent = False

    def __init__(self, task: Any, version: str = JUDGE_ID) -> None:
        if version not in PROFILES:
            raise WorkbenchError(f"unknown heuristic judge {version!r}; valid: {', '.join(PROFILES)}")
        self.profile = PROFILES[version]
        self.judge_id, self.prompt_version = version, self.profile.prompt_version
        if task.task_id not in SUPPORTED_TASKS:
            raise WorkbenchError(
                f"the heuristic judge has rules for {', '.join(SUPPORTED_TASKS)} only, not {task.task_id}; "
                "use --judge openai"
            )
        self.task = task

    def judge(self, review_rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """One judgment record per row (``raw`` = the rules that fired)."""
        out = []
        for row in review_rows:
            fields, excerpt, raw = judge_text(row.get("text"), self.profile)
            out.append(make_record(
                row, task=self.task.task_id, judge=self.judge_id, prompt_version=self.prompt_version,
                fields=fields, excerpt=excerpt, raw=raw,
            ))
        return out

    def screen(self, texts: Sequence[str | None]) -> list[bool]:
        """Per text, whether a rule may fire (vectorised; False: the judgment is :func:`quiet_result`)."""
        return may_fire(texts)

    def encode_lines(self, spec: Any, dataset: str, rows: Sequence[dict[str, Any]],
                     fire: Sequence[bool] | None = None) -> bytes | None:
        """The judgment log's lines for ``rows`` (what :meth:`judge` and
        :func:`core.judgments.store.encode_judgments` make, byte for byte, ``created_at`` being the
        chunk's time), without record dicts; the rules run only where ``fire`` (from
        :meth:`screen`) is True. None for a row the fast encoder cannot vouch for (the caller then
        takes the general path, which names the problem)."""
        lines = JudgmentLines(spec, dataset, self.judge_id, self.prompt_version)
        created_at, quiet = now_iso(), lines.tail(*quiet_result(self.profile))
        out = []
        for n, row in enumerate(rows):
            tail = lines.tail(*judge_text(row.get("text"), self.profile)) if fire is None or fire[n] else quiet
            line = lines.line(row, created_at, tail) if tail is not None else None
            if line is None:
                return None
            out.append(line)
        return "".join(out).encode("utf-8")


register_judge_kind(JudgeKind("heuristic", "heuristic-v1: deterministic G1a rules over the text (no LLM)", HeuristicJudge))


class HeuristicV2Judge(HeuristicJudge):
    """``heuristic-v2``: v1's rules plus the precision rules (see :class:`Profile`)."""

    def __init__(self, task: Any) -> None:
        super().__init__(task, "heuristic-v2")


register_judge_kind(JudgeKind(
    "heuristic-v2", "heuristic-v2: G1a rules tuned for precision (no LLM; the demo's default)", HeuristicV2Judge,
))
