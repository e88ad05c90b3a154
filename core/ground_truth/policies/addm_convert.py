"""Convert one ADDM policy document (with its term libraries) into the project's policy format (SPEC §3.3b).

:func:`convert_policy` reads ``G1/dietary/V2.yaml`` and returns the project policy, the fields its
terms define and the warnings of the conversion; :mod:`core.ground_truth.policies.addm_import` writes
them into a workspace. Where ADDM's code departs from its policy text the text wins (see
docs/policies.md), unless the file is read as ADDM's code computes it (``addm_code=True``: see
:data:`CODE_READING`). A construct the project cannot express is a :class:`DataError` naming the
file and the YAML path; a value outside its term's enum is a warning (such a condition never fires).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import read_yaml_mapping
from core.ground_truth.policies.addm_terms import Terms, by_k_of, listed, unknown_keys, values_of
from core.ground_truth.policies.loader import number

RELEVANCE_FIELD = "is_relevant"
POLICY_KEYS = {"policy_id", "extends", "version", "overview", "normative", "format"}
NORMATIVE_KEYS = {"terms", "decision", "output", "scoring"}
DECISION_KEYS = {"verdicts", "ordered", "rules"}
RULE_KEYS = {"verdict", "label", "logic", "conditions", "precondition", "default", "especially_when"}
CONDITION_KEYS = {"text", "type", "filter", "min_count", "min_count_by_k", "requires"}
SCORING_KEYS = {"field_mapping", "description", "severity_points", "modifiers", "thresholds", "reference_date",
                "recency_rules"}
THRESHOLD_KEYS = {"verdict", "min_score", "max_score", "min_score_by_k", "max_score_by_k"}
# ADDM's scoring code without a field_mapping (its G1 allergy path) uses these fields; kept as data.
LEGACY_SEVERITY = {"mild": "Mild incident", "moderate": "Moderate incident", "severe": "Severe incident"}
LEGACY_MODIFIERS = (("assurance_claim", "true", "False assurance"), ("staff_response", "dismissive", "Dismissive staff"))
LEGACY_CUISINE = ("High-risk cuisine", ("Thai", "Vietnamese", "Chinese", "Asian"))
_AGE_RE = re.compile(r"^(within (?P<within>\d+(\.\d+)?) years?|(?P<lo>\d+)-(?P<hi>\d+) years? old|over (?P<over>\d+) years? old)$")
_WEIGHTS = {"full": 1.0, "half": 0.5, "quarter": 0.25}
# ADDM's code (dev-ADDM @ 239932d, src/addm/tasks/policy_gt.py) departs from its policy text in four
# ways; a file read with ``addm_code=True`` is converted as that code computes it (docs/policies.md):
CODE_READING = (
    "a condition's `requires:` is ignored (only its filter counts)",
    "a YAML boolean filter value (`true`) never equals the judgment's stored value \"true\": the condition counts nothing",
    "scoring counts only firsthand accounts whenever the judgments have an account_type field",
    "recency_rules are not applied (every review weighs 1)",
)


@dataclass
class Imported:
    """One imported policy: its id, topic (task id), the project definition and the task's fields."""

    policy_id: str
    topic: str
    policy: dict[str, Any]
    fields: dict[str, dict[str, Any]]
    overview: dict[str, Any]
    keywords: list[str]
    warnings: list[str] = field(default_factory=list)
    departures: list[str] = field(default_factory=list)  # where ADDM's code reads this file otherwise than its text


_POLICY_ID = re.compile(r"(G(?:10|[1-9])_[a-z][a-z0-9_]{0,40})_(V\d{1,6})")
class _Builder:
    """Builds one project policy from one ADDM policy document."""

    def __init__(self, data: dict[str, Any], src: Path, terms: Terms, *, addm_code: bool = False) -> None:
        self.data, self.src, self.terms, self.addm_code = data, src, terms, addm_code
        self.warnings: list[str] = []
        self.departures: list[str] = []
        self.fields: dict[str, dict[str, Any]] = {}
        self.keywords: list[str] = []

    def warn(self, where: str, message: str) -> None:
        self.warnings.append(f"{self.src}: {where}: {message}")

    def checkvalues_of(self, filt: Mapping[str, Any], where: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, value in filt.items():
            values = values_of(value)
            boolean = name != RELEVANCE_FIELD and any(isinstance(v, bool) for v in listed(value))
            if boolean:
                self.departures.append("YAML boolean filter")
            if self.addm_code and boolean:
                values = [v for v, raw in zip(values, listed(value), strict=True) if not isinstance(raw, bool)]
                self.warn(f"{where}.{name}", "a YAML boolean never equals the stored value in ADDM's code: "
                          "that value never matches")
            out[str(name)] = values
            if name == RELEVANCE_FIELD:
                continue
            if name not in self.fields:
                self.warn(f"{where}.{name}", f"field {name!r} is not among the policy's terms: this condition never fires")
                continue
            bad = [v for v in values if v not in self.fields[name]["values"]]
            if bad:
                self.warn(f"{where}.{name}", f"value(s) {bad} outside the enum {list(self.fields[name]['values'])}: never match")
        return out

    def load_terms(self, normative: Mapping[str, Any]) -> None:
        for i, entry in enumerate(normative.get("terms") or []):
            where = f"normative.terms[{i}]"
            ref = entry.get("ref") if isinstance(entry, dict) else entry
            name, term, topical = self.terms.resolve(str(ref), where, self.src)
            self.fields[name] = {
                "description": str(term.get("description") or term.get("name") or name),
                "values": {str(v["id"]): str(v.get("description") or v.get("label") or v["id"]) for v in term["values"]},
            }
            cues = {str(v["id"]): [str(c).lower() for c in v.get("cues") or []] for v in term["values"] if v.get("cues")}
            if cues:  # the term's cue phrases: what the offline cue judge (`judge --judge cues`) looks for
                self.fields[name]["cues"] = cues
            if topical:
                self.keywords.extend(str(c).lower() for v in term["values"] for c in v.get("cues") or [])

    def build(self) -> Imported:
        data, src = self.data, self.src
        unknown_keys(data, POLICY_KEYS, src, "")
        policy_id = str(data.get("policy_id") or "")
        m = _POLICY_ID.fullmatch(policy_id)  # fullmatch: "$" would take a trailing newline
        if not m:
            raise DataError(f"policy_id {policy_id!r:.80} is not G<n>_<topic>_V<n> (at most 60 characters)", path=src,
                            field="policy_id")
        normative = data.get("normative") or {}
        unknown_keys(normative, NORMATIVE_KEYS, src, "normative")
        self.load_terms(normative)
        decision = normative.get("decision") or {}
        unknown_keys(decision, DECISION_KEYS, src, "normative.decision")
        verdicts = [str(v) for v in decision.get("verdicts") or []]
        if len(verdicts) < 2:
            raise DataError("needs an ordered list of at least 2 verdicts", path=src, field="normative.decision.verdicts")
        if decision.get("ordered") is False:
            raise DataError("an unordered verdict scale cannot be expressed", path=src, field="normative.decision.ordered")
        overview = data.get("overview") or {}
        firsthand = "firsthand" in str(overview.get("incident_definition", "")).lower()
        if not firsthand and "account_type" in self.fields and normative.get("scoring"):
            self.departures.append("firsthand-only scoring")
        if self.addm_code:  # ADDM's code: whenever the judgments carry an account_type
            firsthand = "account_type" in self.fields
        policy: dict[str, Any] = {
            "policy_id": policy_id, "task": m.group(1), "version": str(data.get("version", "1.0")),
            "title": str(overview.get("title", policy_id)), "description": str(overview.get("purpose", "")).strip(),
            "origin": f"ADDM {src.parent.parent.name}/{src.parent.name}/{src.name}"
                      + (f" (extends {data['extends']})" if data.get("extends") else "")
                      + (", read as ADDM's code computes it" if self.addm_code else ""),
            "verdicts": verdicts, "relevance_field": RELEVANCE_FIELD,
        }
        rules = decision.get("rules") or []
        default = [r.get("verdict") for r in rules if isinstance(r, dict) and r.get("default")]
        policy["default_verdict"] = default[0] if default else verdicts[0]
        if policy["default_verdict"] not in verdicts:
            raise DataError(f"default verdict {policy['default_verdict']!r} is not in verdicts", path=src,
                            field="normative.decision.rules")
        if normative.get("scoring"):
            self.scoring(policy, normative["scoring"], rules, verdicts, firsthand)
        else:
            policy["rules"] = self.rules(rules, verdicts)
            self.evidence(policy)
        kw = list(dict.fromkeys(k for k in self.keywords if len(k) >= 3))
        if self.warnings:  # kept with the policy: a part that never applies stays visible after the import
            policy["import_warnings"] = [w.removeprefix(f"{src}: ") for w in self.warnings]
        return Imported(policy_id, m.group(1), policy, self.fields, overview, kw, self.warnings,
                        list(dict.fromkeys(self.departures)))

    # -- qualitative rules (V1/V2) ------------------------------------------------------------
    def rules(self, rules: list[Any], verdicts: list[str]) -> list[dict[str, Any]]:
        out = []
        for i, rule in enumerate(rules):
            where = f"normative.decision.rules[{i}]"
            if not isinstance(rule, dict):
                raise DataError("expected a mapping", path=self.src, field=where)
            unknown_keys(rule, RULE_KEYS, self.src, where)
            if rule.get("verdict") not in verdicts:
                raise DataError(f"verdict {rule.get('verdict')!r} is not in verdicts", path=self.src, field=f"{where}.verdict")
            if rule.get("default"):
                continue
            logic = str(rule.get("logic", "ANY")).upper()
            if logic not in ("ANY", "ALL"):
                raise DataError(f"logic {logic!r} cannot be expressed (ANY or ALL)", path=self.src, field=f"{where}.logic")
            conds = [self.condition(c, f"{where}.conditions[{j}]")
                     for j, c in enumerate(rule.get("conditions") or []) if isinstance(c, dict)]
            if not conds:
                self.warn(where, "no structured condition: the rule is text only and never fires (as in ADDM)")
                continue
            out.append({"verdict": rule["verdict"], "label": str(rule.get("label", rule["verdict"])),
                        "logic": logic.lower(), "conditions": conds})
        return out

    def evidence(self, policy: dict[str, Any]) -> None:
        """A rule policy's incidents (the evidence listed in its GT file): the relevant reviews
        that some condition counts; their "severity" is the field most conditions filter on."""
        filters = [c["where"] for r in policy["rules"] for c in r["conditions"]]
        names = [n for f in filters for n in f if n not in ("account_type", RELEVANCE_FIELD)]
        if not names:
            return
        policy["severity_field"] = max(dict.fromkeys(names), key=names.count)
        policy["incident"] = {"any": [dict(f, **c.get("requires", {})) for r in policy["rules"]
                                      for c in r["conditions"] for f in [c["where"]]]}

    def condition(self, cond: dict[str, Any], where: str) -> dict[str, Any]:
        unknown_keys(cond, CONDITION_KEYS, self.src, where)
        kind = cond.get("type", "count_threshold")
        if kind not in ("count_threshold", "exists", "compound"):
            raise DataError(f"condition type {kind!r} cannot be expressed", path=self.src, field=f"{where}.type")
        filt = cond.get("filter") or {}
        if not isinstance(filt, dict):
            raise DataError("expected a mapping field -> value(s)", path=self.src, field=f"{where}.filter")
        requires = cond.get("requires") or {}
        if not isinstance(requires, dict):
            raise DataError("expected a mapping field -> value(s)", path=self.src, field=f"{where}.requires")
        at_least = 1 if kind == "exists" else number(cond.get("min_count", 1), self.src, f"{where}.min_count",
                                                     integer=True, minimum=0)
        by_k = None if kind == "exists" else by_k_of(cond.get("min_count_by_k"), self.src, f"{where}.min_count_by_k")
        text = str(cond.get("text") or "").replace("{min_count}", str(at_least))
        out: dict[str, Any] = {"text": text or f"count ≥ {at_least}", "count": "reviews",
                               "where": self.checkvalues_of(filt, f"{where}.filter"), "at_least": at_least}
        if requires:
            self.departures.append("requires")
        if requires and self.addm_code:
            self.warn(f"{where}.requires", "ignored, as ADDM's code does: only the filter counts")
        elif requires:
            out["requires"] = self.checkvalues_of(requires, f"{where}.requires")
        if by_k:
            out["at_least_by_k"] = {k: int(v) for k, v in by_k.items()}
        return out

    # -- scoring (V3/V4) ----------------------------------------------------------------------
    def scoring(self, policy: dict[str, Any], scoring: Mapping[str, Any], rules: list[Any], verdicts: list[str],
                firsthand: bool) -> None:
        src = self.src
        unknown_keys(scoring, SCORING_KEYS, src, "normative.scoring")
        mapping = scoring.get("field_mapping")
        if mapping is None:
            self.warn("normative.scoring", "no field_mapping: ADDM's legacy fields (incident_severity, "
                      "assurance_claim, staff_response) are used")
            severity_field, value_map = "incident_severity", dict(LEGACY_SEVERITY)
            mod_maps = [{"field": f, "value": v, "label": lbl} for f, v, lbl in LEGACY_MODIFIERS]
        else:
            unknown_keys(mapping, {"severity_field", "value_mappings", "modifier_mappings"}, src, "normative.scoring.field_mapping")
            severity_field = str(mapping.get("severity_field") or "")
            value_map = {str(k).lower(): str(v) for k, v in (mapping.get("value_mappings") or {}).items()}
            mod_maps = list(mapping.get("modifier_mappings") or [])
        if severity_field not in self.fields:
            self.warn("normative.scoring.field_mapping.severity_field",
                      f"{severity_field!r} is not among the policy's terms: no incident can occur")
        points_by_label = {str(p["label"]): number(p.get("points", 0), src, f"normative.scoring.severity_points[{i}].points")
                           for i, p in enumerate(scoring.get("severity_points") or [])}
        severity_points = {}
        for value, label in value_map.items():
            if label not in points_by_label:
                self.warn(f"normative.scoring.field_mapping.value_mappings.{value}",
                          f"label {label!r} has no severity_points entry: 0 points")
            severity_points[value] = points_by_label.get(label, 0)
            if severity_field in self.fields and value not in self.fields[severity_field]["values"]:
                self.warn(f"normative.scoring.field_mapping.value_mappings.{value}", "value outside the enum: never matches")
        for label in points_by_label:
            if label not in value_map.values():
                self.warn("normative.scoring.severity_points", f"{label!r} has no field value mapped to it: never scores")
        signals: dict[str, Any] = {}
        modifiers, restaurant_modifiers = [], []
        for i, mod in enumerate(scoring.get("modifiers") or []):
            label = str(mod.get("label"))
            alts = [{str(mm["field"]): values_of(mm["value"])} for mm in mod_maps if str(mm.get("label")) == label]
            for alt in alts:
                self.checkvalues_of(alt, f"normative.scoring.field_mapping.modifier_mappings[{label}]")
            # ADDM's code adds "High-risk cuisine" once per restaurant with an incident, field_mapping or not
            if not alts and LEGACY_CUISINE[0].lower() in label.lower():
                restaurant_modifiers.append({"label": label, "points": mod.get("points", 0), "min_incidents": 1,
                                             "categories_contain": list(LEGACY_CUISINE[1]),
                                             "description": str(mod.get("description") or "")})
                continue
            if not alts:
                self.warn(f"normative.scoring.modifiers[{i}]", f"modifier {label!r} has no field mapping: never applies")
                continue
            name = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_") or f"modifier_{i}"
            signals[name] = {"label": label, "description": str(mod.get("description") or ""), "any": alts}
            modifiers.append({"signal": name, "label": label, "points": mod.get("points", 0)})
        known = {str(m.get("label")) for m in scoring.get("modifiers") or []}
        for mm in mod_maps:
            if str(mm.get("label")) not in known:
                self.warn("normative.scoring.field_mapping.modifier_mappings",
                          f"{mm.get('label')!r} has no modifiers entry: never applies")
        when = {severity_field: sorted(v for v in value_map if v != "none")}
        if firsthand:
            when = {"account_type": ["firsthand"], **when}
        policy.update({"severity_field": severity_field, "incident": {"when": when}, "signals": signals})
        policy["scoring"] = {"severity_points": severity_points, "modifiers": modifiers}
        if restaurant_modifiers:
            policy["scoring"]["restaurant_modifiers"] = restaurant_modifiers
        if self.addm_code:
            self.integral_points(policy["scoring"])
        recency = None if self.addm_code else self.recency(scoring)
        if scoring.get("recency_rules"):
            self.departures.append("recency")
        if self.addm_code and scoring.get("recency_rules"):
            self.warn("normative.scoring.recency_rules", "not applied, as ADDM's code does: every review weighs 1")
        if recency:
            policy["scoring"]["recency"] = recency
        policy["rules"] = self.thresholds(scoring.get("thresholds") or [], rules, verdicts)

    def integral_points(self, scoring: Mapping[str, Any]) -> None:
        """ADDM's code truncates each review's points to an integer (``int(points × weight)``), which the
        policy language does not express: refused for fractional points rather than computed otherwise."""
        points = [("severity_points", p) for p in scoring["severity_points"].values()]
        points += [("modifiers", m["points"]) for m in scoring["modifiers"]]
        for where, value in points:
            if float(value) != int(float(value)):
                raise DataError(f"fractional points ({value}) cannot be read as ADDM's code computes them (it "
                                "truncates each review's points)", path=self.src, field=f"normative.scoring.{where}")

    def recency(self, scoring: Mapping[str, Any]) -> dict[str, Any] | None:
        rules = scoring.get("recency_rules") or []
        if not rules:
            return None
        bands = []
        for i, r in enumerate(rules):
            where = f"normative.scoring.recency_rules[{i}]"
            max_age, weight = r.get("max_age_years"), r.get("weight_multiplier")
            if max_age is None or weight is None:
                max_age, weight = self._parse_band(str(r.get("age", "")), str(r.get("weight", "")), where)
            max_age = number(max_age, self.src, f"{where}.max_age_years", minimum=0)
            bands.append({"max_age": None if max_age >= 999 else max_age,
                          "weight": number(weight, self.src, f"{where}.weight_multiplier", minimum=0)})
        out: dict[str, Any] = {"bands": bands}
        if scoring.get("reference_date"):
            out["reference_date"] = str(scoring["reference_date"])[:10]
        return out

    def _parse_band(self, age: str, weight: str, where: str) -> tuple[float, float]:
        m = _AGE_RE.match(age.strip().lower())
        words = [w for w in _WEIGHTS if weight.lower().startswith(w)]
        if not m or not words or " or " in weight.lower():
            raise DataError(f"recency rule {age!r} / {weight!r} cannot be expressed (give max_age_years and "
                            "weight_multiplier)", path=self.src, field=where)
        limit = m.group("within") or m.group("hi") or 999
        return float(limit), _WEIGHTS[words[0]]

    def thresholds(self, thresholds: list[Any], rules: list[Any], verdicts: list[str]) -> list[dict[str, Any]]:
        order = [r.get("verdict") for r in rules if isinstance(r, dict) and not r.get("default")]
        indexed = list(enumerate(thresholds))
        indexed.sort(key=lambda it: order.index(it[1].get("verdict")) if it[1].get("verdict") in order else len(order))
        out = []
        for i, t in indexed:
            where = f"normative.scoring.thresholds[{i}]"
            unknown_keys(t, THRESHOLD_KEYS, self.src, where)
            if t.get("verdict") not in verdicts:
                raise DataError(f"verdict {t.get('verdict')!r} is not in verdicts", path=self.src, field=f"{where}.verdict")
            for direction, key in (("score_at_least", "min_score"), ("score_at_most", "max_score")):
                if t.get(key) is None:
                    continue
                number(t[key], self.src, f"{where}.{key}")  # NaN, inf, 1e400, "x": named here, not a traceback
                by_k = by_k_of(t.get(f"{key}_by_k"), self.src, f"{where}.{key}_by_k")
                op = "≥" if key == "min_score" else "≤"
                cond: dict[str, Any] = {"text": f"score {op} {t[key]}" + (" (per-K thresholds)" if by_k else ""),
                                        direction: t[key]}
                if by_k:
                    cond["score_by_k"] = by_k
                out.append({"verdict": t["verdict"], "label": t["verdict"], "conditions": [cond]})
        return out


def convert_policy(path: str | Path, terms: Terms, *, addm_code: bool = False) -> Imported:
    """Convert one ADDM policy file (DataError naming the file and YAML path when it cannot be expressed).

    Args:
        path: the ADDM policy YAML.
        terms: its term libraries.
        addm_code: read it as ADDM's code computes it (the departures in :data:`CODE_READING`, each
            one that applies listed in the warnings) rather than as its text says (SPEC §3.3b).
    """
    path = Path(path)
    return _Builder(read_yaml_mapping(path), path, terms, addm_code=addm_code).build()
