"""What-if constants of a GT formula or policy, and named variants saved from them.

The committed formulas (``core.ground_truth.formulas``) and policies (``core/ground_truth/policies/data``) are
never changed from the app. The what-if panel edits a *flat* view of their numbers
(``{"SEVERITY_POINTS.severe": 10, "HIGH_THRESHOLD": 5}``); :func:`whatif_definition` turns the
changed values into what ``compute_gt_frame``/``trace_gt`` take (a formula plus a ``constants``
override, or a modified :class:`~core.ground_truth.policies.Policy` object).

A variant is such a set of changes with a name, saved as ``gt/variants/{name}.json``::

    {name, definition, kind, changes: {flat key: value}, description, author, created_at, base_version}

Saving never touches the official definition, and an existing variant is replaced only on request.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.base.clock import now_iso
from core.base.errors import DataError, UnknownNameError
from core.base.files import read_json, remove_file, write_json_atomic
from core.base.settings import require_writable
from core.ground_truth import FORMULAS, POLICY_IDS, Formula, Policy, get_definition
from core.workspace import Workspace, check_name

VARIANTS_DIR = "variants"
GROUPS = ("Severity points", "Thresholds", "Recency decay", "Weights", "Cuisine risk")

# Formula constants by group (first match of a prefix wins; everything else is a weight).
_GROUP_PREFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Severity points", ("SEVERITY_POINTS.", "SEVERE_WEIGHT", "MILD_BASE", "MODERATE_BASE", "SEVERITY.")),
    ("Thresholds", ("HIGH_THRESHOLD", "CRITICAL_THRESHOLD", "SCORE_M", "TRAJECTORY_RISING_RATIO",
                    "TRAJECTORY_FADING_RATIO", "RULE.")),
    ("Recency decay", ("DECAY_", "REFERENCE_YEAR", "DEFAULT_INCIDENT_YEAR", "RECENT_YEAR", "RECENCY.")),
    ("Cuisine risk", ("CUISINE_RISK.", "CUISINE_FLOOR", "RESTAURANT.")),
)


@dataclass(frozen=True)
class ConstantSpec:
    """One editable number: flat key, group, committed value, whether it is an integer."""

    key: str
    group: str
    value: float
    is_int: bool

    @property
    def step(self) -> float:
        """A sensible input step: 1 for integers, else 0.05 below 1 and 0.5 above."""
        if self.is_int:
            return 1.0
        return 0.05 if abs(self.value) < 1 else 0.5


@dataclass(frozen=True)
class Variant:
    """A named set of what-if changes to one formula or policy."""

    name: str
    definition: str
    kind: str  # "formula" | "policy"
    changes: Mapping[str, float]
    description: str = ""
    author: str = ""
    created_at: str = ""
    base_version: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON document stored for this variant."""
        return {**dataclasses.asdict(self), "changes": dict(self.changes)}


def _group(key: str) -> str:
    for group, prefixes in _GROUP_PREFIXES:
        if key.startswith(prefixes):
            return group
    return "Weights"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def committed_constants(definition: str | Formula | Policy) -> dict[str, float]:
    """The flat, editable numbers of a formula or policy with their committed values.

    Formula constants that are numbers keep their name; numeric tables are flattened to
    ``TABLE.key``. Policy numbers are ``SEVERITY.<severity>``, ``MODIFIER.<label>``,
    ``RESTAURANT.<label>`` and ``RULE.<verdict>.<n>`` (a score threshold of a rule).

    >>> committed_constants("v1")["SEVERITY_POINTS.severe"], committed_constants("v1")["HIGH_THRESHOLD"]
    (15, 4.0)
    """
    d = get_definition(definition, None)  # a name is a built-in's; pass a workspace's definition itself
    if isinstance(d, Formula):
        flat: dict[str, float] = {}
        for name, value in d.constants.items():
            if _is_number(value):
                flat[name] = value
            elif isinstance(value, Mapping) and value and all(_is_number(v) for v in value.values()):
                flat.update({f"{name}.{k}": v for k, v in value.items()})
        return flat
    flat = {f"SEVERITY.{k}": v for k, v in d.severity_points.items()}
    flat.update({f"MODIFIER.{m.label}": m.points for m in d.modifiers})
    flat.update({f"RESTAURANT.{m.label}": m.points for m in d.restaurant_modifiers})
    for rule in d.rules:
        for n, cond in enumerate(rule.conditions):
            key = f"RULE.{rule.verdict}.{n}"
            if cond.score_at_least is not None:
                flat[key] = cond.score_at_least
            elif cond.score_at_most is not None:
                flat[key] = cond.score_at_most
            else:
                flat[key] = int(cond.at_least)
            for k, value in (cond.score_by_k if cond.is_score else cond.at_least_by_k):
                flat[f"{key}.K{k}"] = int(value) if not cond.is_score else value
    return flat


def constant_specs(definition: str | Formula | Policy) -> list[ConstantSpec]:
    """The editable numbers of a definition, grouped (order of :data:`GROUPS`, then as defined)."""
    specs = [ConstantSpec(k, _group(k), float(v), isinstance(v, int) and not isinstance(v, bool))
             for k, v in committed_constants(definition).items()]
    return sorted(specs, key=lambda s: GROUPS.index(s.group))


def changed_constants(definition: str | Formula | Policy, values: Mapping[str, float]) -> dict[str, float]:
    """The entries of ``values`` that differ from the committed ones (unknown keys raise ValueError).

    >>> changed_constants("v1", {"HIGH_THRESHOLD": 4.0, "BASE_RISK": 3})
    {'BASE_RISK': 3}
    """
    committed = committed_constants(definition)
    out: dict[str, float] = {}
    for key, value in values.items():
        if key not in committed:
            raise ValueError(f"unknown constant {key!r}; valid: {', '.join(committed)}")
        if not _is_number(value) or not math.isfinite(float(value)):
            raise ValueError(f"constant {key!r} must be a finite number, got {value!r}")
        if float(value) != float(committed[key]):
            out[key] = int(value) if isinstance(committed[key], int) and float(value).is_integer() else value
    return out


def formula_overrides(formula: Formula, changes: Mapping[str, float]) -> dict[str, Any]:
    """The ``constants=`` argument of ``compute_gt_frame`` for flat ``changes`` of a formula."""
    out: dict[str, Any] = {}
    for key, value in changes.items():
        table, _, entry = key.partition(".")
        if entry:
            out.setdefault(table, dict(formula.constants[table]))[entry] = value
        else:
            out[key] = value
    return out


def policy_with_changes(policy: Policy, changes: Mapping[str, float]) -> Policy:
    """A copy of ``policy`` with changed points and score thresholds (the registry is untouched)."""
    if not changes:
        return policy
    points = dict(policy.severity_points)
    points.update({k[len("SEVERITY."):]: float(v) for k, v in changes.items() if k.startswith("SEVERITY.")})
    mods = tuple(dataclasses.replace(m, points=float(changes.get(f"MODIFIER.{m.label}", m.points)))
                 for m in policy.modifiers)
    rmods = tuple(dataclasses.replace(m, points=float(changes.get(f"RESTAURANT.{m.label}", m.points)))
                  for m in policy.restaurant_modifiers)
    rules = tuple(
        dataclasses.replace(rule, conditions=tuple(
            _condition_with_changes(c, f"RULE.{rule.verdict}.{n}", changes) for n, c in enumerate(rule.conditions)
        ))
        for rule in policy.rules
    )
    return dataclasses.replace(policy, severity_points=points, modifiers=mods, restaurant_modifiers=rmods,
                               rules=rules, version=f"{policy.version}+whatif")


def _condition_with_changes(cond: Any, key: str, changes: Mapping[str, float]) -> Any:
    """A rule condition with a changed default threshold (``key``) and per-K thresholds (``key.K<k>``)."""
    out = cond
    if key in changes:
        value = changes[key]
        if cond.score_at_least is not None:
            out = dataclasses.replace(out, score_at_least=float(value))
        elif cond.score_at_most is not None:
            out = dataclasses.replace(out, score_at_most=float(value))
        else:
            out = dataclasses.replace(out, at_least=int(value))
    by_k = cond.score_by_k if cond.is_score else cond.at_least_by_k
    if any(f"{key}.K{k}" in changes for k, _ in by_k):
        new = tuple((k, changes.get(f"{key}.K{k}", v)) for k, v in by_k)
        out = dataclasses.replace(out, **({"score_by_k": new} if cond.is_score else {"at_least_by_k": new}))
    return out


def whatif_definition(
    definition: str | Formula | Policy, values: Mapping[str, float] | None, ws: Workspace | None,
) -> tuple[Formula | Policy, dict[str, Any] | None]:
    """(definition, constants) to compute a what-if: a formula with its ``constants=`` override,
    or a modified policy with None. Unchanged values give the committed definition and None."""
    d = get_definition(definition, ws)
    changes = changed_constants(d, values or {})
    if not changes:
        return d, None
    if isinstance(d, Formula):
        return d, formula_overrides(d, changes)
    return policy_with_changes(d, changes), None


# -- named variants ------------------------------------------------------------------------------
def variants_dir(ws: Workspace) -> Path:
    """``gt/variants`` of the workspace."""
    return ws.variants_dir


def variant_path(ws: Workspace, name: str) -> Path:
    """Path of the variant ``name`` (validated as a file-name-safe name)."""
    return variants_dir(ws) / f"{check_name('variant', name)}.json"


def save_variant(
    ws: Workspace, name: str, definition: str, values: Mapping[str, float], *,
    description: str = "", author: str = "", replace: bool = False,
) -> Variant:
    """Save the changed values of ``definition`` as variant ``name``; returns it.

    Raises:
        ValueError: bad name, unknown constant, nothing changed, or the name exists (without ``replace``).
    """
    require_writable("save a variant")
    d = get_definition(definition, ws)
    try:
        taken = get_definition(name, ws)
    except UnknownNameError:
        taken = None
    if taken is not None:
        raise ValueError(f"{name!r} is the name of a committed formula or policy; choose another variant name")
    changes = changed_constants(d, values)
    if not changes:
        raise ValueError("nothing to save: every constant equals the committed definition")
    path = variant_path(ws, name)
    if path.exists() and not replace:
        raise ValueError(f"a variant named {name!r} exists already; choose another name or replace it")
    variant = Variant(
        name=name, definition=d.name, kind="formula" if isinstance(d, Formula) else "policy", changes=changes,
        description=description.strip(), author=author.strip(),
        created_at=now_iso(), base_version=d.version,
    )
    write_json_atomic(path, variant.to_dict())
    return variant


def _read_variant(path: Path) -> Variant:
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError("a variant must be a JSON object", path=path)
    for key in ("name", "definition", "changes"):
        if key not in data:
            raise DataError(f"missing {key!r}", path=path, field=key)
    if not isinstance(data["changes"], dict):
        raise DataError("changes must be an object of constant -> number", path=path, field="changes")
    try:
        changes = changed_constants(data["definition"], data["changes"])
    except (ValueError, UnknownNameError) as exc:
        raise DataError(str(exc), path=path, field="changes") from exc
    known = {f.name for f in dataclasses.fields(Variant)}
    return Variant(**{**{k: v for k, v in data.items() if k in known}, "changes": changes})


def load_variant(ws: Workspace, name: str) -> Variant:
    """The saved variant ``name``; UnknownNameError lists the saved ones."""
    path = variant_path(ws, name)
    if not path.exists():
        raise UnknownNameError("variant", name, [v.name for v in list_variants(ws)])
    return _read_variant(path)


def list_variants(ws: Workspace, definition: str | None = None) -> list[Variant]:
    """Saved variants (of ``definition`` only, when given), by name."""
    folder = variants_dir(ws)
    if not folder.exists():
        return []
    out = [_read_variant(p) for p in sorted(folder.glob("*.json"))]
    return [v for v in out if definition is None or v.definition == definition]


def delete_variant(ws: Workspace, name: str) -> None:
    """Remove a saved variant (UnknownNameError when there is none)."""
    require_writable("delete a variant")
    load_variant(ws, name)
    remove_file(variant_path(ws, name), missing_ok=False)


# -- variants as first-class definitions ---------------------------------------------------------
@dataclass(frozen=True)
class ResolvedDefinition:
    """What a formula, policy or saved-variant name stands for.

    ``definition`` is the formula or the (modified) policy to compute with, ``constants`` the
    formula's constants override (None for policies and committed formulas), ``variant`` the saved
    variant when the name is one.
    """

    name: str
    definition: Formula | Policy
    constants: dict[str, Any] | None
    variant: Variant | None = None

    @property
    def base(self) -> str:
        """The committed formula or policy the name builds on."""
        return self.variant.definition if self.variant else self.definition.name

    def provenance(self) -> dict[str, str]:
        """``variant`` and ``variant_constants_sha256`` for a variant (stamped on frames and files)."""
        if self.variant is None:
            return {}
        return {"variant": self.variant.name, "variant_constants_sha256": constants_sha256(self.variant)}


def constants_sha256(variant: Variant) -> str:
    """sha256 of a variant's base definition and changed constants (canonical JSON).

    >>> v = Variant("lenient", "v1", "formula", {"CRITICAL_THRESHOLD": 20.0})
    >>> constants_sha256(v)[:12]
    '12956986bac8'
    """
    canonical = json.dumps({"definition": variant.definition, "changes": dict(variant.changes)}, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def resolve_definition(ws: Workspace | None, name: str) -> ResolvedDefinition:
    """A formula or policy by name, else a variant saved in ``ws`` (UnknownNameError lists all)."""
    try:
        d = get_definition(name, ws)
    except UnknownNameError:
        if ws is None or not variant_path(ws, name).exists():
            saved = [v.name for v in list_variants(ws)] if ws is not None else []
            raise UnknownNameError("formula, policy or saved variant", name,
                                   [*FORMULAS, *POLICY_IDS(ws), *saved]) from None
        variant = load_variant(ws, name)
        base, constants = whatif_definition(variant.definition, variant.changes, ws)
        return ResolvedDefinition(name, base, constants, variant)
    return ResolvedDefinition(d.name, d, None)


def task_variants(ws: Workspace, task: str) -> list[Variant]:
    """Saved variants of the task's formulas and policies, by name."""
    out = []
    for v in list_variants(ws):
        try:
            if get_definition(v.definition, ws).task == task:
                out.append(v)
        except UnknownNameError:
            continue
    return out
