"""Loading policy definitions (with ``extends``), validated: the package's ``core/ground_truth/policies/data``
and a workspace's ``policies/`` folder (e.g. policies imported from ADDM, see
:mod:`core.ground_truth.policies.addm_import`). A workspace policy with a built-in id replaces the
built-in in that workspace (and says so: ``Policy.replaces_builtin``).

A bad file is a :class:`core.base.errors.DataError` naming the file, line (YAML syntax) or field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.base.errors import DataError, UnknownNameError
from core.base.files import read_yaml_mapping
from core.base.registry import Registry
from core.base.stamps import folder_stamps
from core.ground_truth.formulas import VERDICTS
from core.ground_truth.policies import (
    ByK,
    Condition,
    Match,
    Modifier,
    Policy,
    Recency,
    RestaurantModifier,
    Rule,
    Signal,
    norm,
)

if TYPE_CHECKING:
    from core.workspace import Workspace

POLICY_DIR = Path(__file__).resolve().parent / "data"
POLICY_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")  # a file name in a policies folder, never a path
MAX_POINTS = 1e9  # thresholds, points and weights: a policy's numbers are small; beyond this a typo


def number(value: Any, src: str | Path, where: str, *, integer: bool = False, minimum: float | None = None) -> Any:
    """``value`` as a finite float (or an int when ``integer``) of at most :data:`MAX_POINTS` in size
    and at least ``minimum``; anything else (NaN, inf, 1e400, "x", -5 counts) is a DataError naming
    the file and field."""
    try:
        out = int(value) if integer and float(value) == int(value) else float(value)
    except (TypeError, ValueError, OverflowError):
        out = math.nan
    if isinstance(value, bool) or not math.isfinite(out) or abs(out) > MAX_POINTS or (integer and not isinstance(out, int)):
        kind = "a whole number" if integer else "a finite number"
        raise DataError(f"expected {kind} of at most {MAX_POINTS:g} in size, got {value!r:.40}", path=src, field=where)
    if minimum is not None and out < minimum:
        raise DataError(f"expected at least {minimum:g}, got {value!r:.40}", path=src, field=where)
    return out


def _read(path: Path) -> dict[str, Any]:
    data = read_yaml_mapping(path)
    if "policy_id" not in data:
        raise DataError("a policy file must be a mapping with policy_id", path=path)
    return data


def _merged(policy_id: str, folder: Path, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    path = folder / f"{policy_id}.yaml"
    if not path.exists():
        raise UnknownNameError("policy", policy_id, _ids(folder))
    data = _read(path)
    parent = data.get("extends")
    if not parent:
        return {**data, "_source": str(path)}
    if parent in seen:
        raise DataError(f"policy extends itself through {parent}", path=path, field="extends")
    parent_folder = folder if (folder / f"{parent}.yaml").exists() else POLICY_DIR
    base = _merged(parent, parent_folder, (*seen, policy_id))
    merged = {**base, **data, "_source": str(path)}
    merged["scoring"] = {**(base.get("scoring") or {}), **(data.get("scoring") or {})}
    return merged


def _match(value: Any, path: str, where: str) -> Match:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise DataError("expected a mapping of field -> values", path=path, field=where)
    out = []
    for name, allowed in value.items():
        values = allowed if isinstance(allowed, list) else [allowed]
        out.append((str(name), tuple(v for v in (norm(x) for x in values) if v is not None)))
    return tuple(out)


def _build(data: dict[str, Any]) -> Policy:
    src = data["_source"]
    signals = {
        name: Signal(name, s.get("label", name), s.get("description", ""),
                     tuple(_match(m, src, f"signals.{name}.any") for m in s.get("any", [])))
        for name, s in (data.get("signals") or {}).items()
    }
    scoring = data.get("scoring") or {}
    modifiers = []
    for i, m in enumerate(scoring.get("modifiers") or []):
        if m.get("signal") not in signals:
            raise DataError(f"unknown signal {m.get('signal')!r}", path=src, field=f"scoring.modifiers[{i}].signal")
        modifiers.append(Modifier(m["signal"], m.get("label", signals[m["signal"]].label),
                                  number(m.get("points"), src, f"scoring.modifiers[{i}].points")))
    restaurant_mods = tuple(
        RestaurantModifier(r["label"], number(r.get("points"), src, f"scoring.restaurant_modifiers[{i}].points"),
                           number(r.get("min_incidents", 0), src, f"scoring.restaurant_modifiers[{i}].min_incidents",
                                  integer=True, minimum=0),
                           tuple(r.get("categories_contain") or ()), r.get("description", ""))
        for i, r in enumerate(scoring.get("restaurant_modifiers") or [])
    )
    verdicts = tuple(str(v) for v in (data.get("verdicts") or VERDICTS))
    if len(verdicts) < 2 or len(set(verdicts)) != len(verdicts):
        raise DataError("verdicts must list at least 2 distinct labels, lowest first", path=src, field="verdicts")
    rules = [_rule(r, i, verdicts, signals, src) for i, r in enumerate(data.get("rules") or [])]
    default_verdict = str(data.get("default_verdict", verdicts[0]))
    if default_verdict not in verdicts:
        raise DataError(f"default_verdict must be one of {list(verdicts)}", path=src, field="default_verdict")
    incident = data.get("incident") or {}
    return Policy(
        policy_id=data["policy_id"], task=data.get("task", ""), version=str(data.get("version", "")),
        title=data.get("title", ""), description=(data.get("description") or "").strip(),
        incident_when=_match(incident.get("when"), src, "incident.when"),
        incident_unless=_match(incident.get("unless"), src, "incident.unless"),
        incident_any=tuple(_match(m, src, f"incident.any[{i}]") for i, m in enumerate(incident.get("any") or [])),
        signals=signals, severity_points={k: number(v, src, f"scoring.severity_points.{k}")
                                          for k, v in (scoring.get("severity_points") or {}).items()},
        modifiers=tuple(modifiers), restaurant_modifiers=restaurant_mods, recency=_recency(scoring, signals, src),
        rules=tuple(rules), default_verdict=default_verdict, source=src,
        has_scoring=bool(scoring.get("severity_points")), verdicts=verdicts,
        severity_field=str(data.get("severity_field") or "incident_severity"),
        relevance_field=data.get("relevance_field") or None, origin=str(data.get("origin") or ""),
        import_warnings=tuple(str(w) for w in data.get("import_warnings") or ()),
    )


def _by_k(value: Any, src: str, where: str) -> ByK:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise DataError("expected a mapping K -> threshold", path=src, field=where)
    return tuple(sorted((number(k, src, where, integer=True, minimum=1), number(v, src, f"{where}.{k}"))
                        for k, v in value.items()))


def _rule(r: Mapping[str, Any], i: int, verdicts: tuple[str, ...], signals: Mapping[str, Signal], src: str) -> Rule:
    if r.get("verdict") not in verdicts:
        raise DataError(f"verdict must be one of {list(verdicts)}", path=src, field=f"rules[{i}].verdict")
    logic = str(r.get("logic", "any")).lower()
    if logic not in ("any", "all"):
        raise DataError("logic must be any or all", path=src, field=f"rules[{i}].logic")
    key = "conditions" if "conditions" in r else "any"
    conds = []
    for j, c in enumerate(r.get(key) or []):
        where = f"rules[{i}].{key}[{j}]"
        missing = [s for s in c.get("signals", []) if s not in signals]
        if missing:
            raise DataError(f"unknown signal(s) {missing}", path=src, field=f"{where}.signals")
        if c.get("count", "incidents") not in ("incidents", "reviews"):
            raise DataError("count must be incidents or reviews", path=src, field=f"{where}.count")
        if c.get("score_at_least") is not None and c.get("score_at_most") is not None:
            raise DataError("a condition has one score direction", path=src, field=where)
        match = _match(c.get("where"), src, f"{where}.where") + _match(c.get("requires"), src, f"{where}.requires")
        conds.append(Condition(
            text=c.get("text", ""),
            score_at_least=None if c.get("score_at_least") is None else number(c["score_at_least"], src,
                                                                                f"{where}.score_at_least"),
            score_at_most=None if c.get("score_at_most") is None else number(c["score_at_most"], src,
                                                                              f"{where}.score_at_most"),
            score_by_k=_by_k(c.get("score_by_k"), src, f"{where}.score_by_k"),
            count=c.get("count", "incidents"), where=match,
            signals=tuple(c.get("signals", [])), at_least=number(c.get("at_least", 1), src, f"{where}.at_least",
                                                                 integer=True, minimum=0),
            at_least_by_k=tuple((k, number(v, src, f"{where}.at_least_by_k.{k}", integer=True, minimum=0))
                                for k, v in _by_k(c.get("at_least_by_k"), src, f"{where}.at_least_by_k")),
        ))
    return Rule(r["verdict"], r.get("label", r["verdict"]), tuple(conds), logic)


def _recency(scoring: Mapping[str, Any], signals: Mapping[str, Signal], src: str) -> Recency | None:
    rec = scoring.get("recency")
    if not rec:
        return None
    discard = rec.get("discard_old") or {}
    if discard and discard.get("signal") not in signals:
        raise DataError(f"unknown signal {discard.get('signal')!r}", path=src, field="scoring.recency.discard_old.signal")
    ref_date = rec.get("reference_date")
    if ref_date is not None:
        try:
            date.fromisoformat(str(ref_date))
        except ValueError:
            raise DataError("reference_date must be YYYY-MM-DD", path=src, field="scoring.recency.reference_date") from None
    return Recency(
        reference_year=None if rec.get("reference_year") is None else int(rec["reference_year"]),
        reference_date=None if ref_date is None else str(ref_date),
        bands=tuple((None if b.get("max_age") is None else _checked(b["max_age"], src, f"scoring.recency.bands[{i}].max_age"),
                     number(b.get("weight"), src, f"scoring.recency.bands[{i}].weight", minimum=0))
                    for i, b in enumerate(rec.get("bands") or [])),
        discard_older_than=discard.get("older_than"), discard_signal=discard.get("signal"),
        discard_min_reviews=int(discard.get("min_reviews", 0)), discard_within=float(discard.get("within", 0)),
    )


def _checked(value: Any, src: str, where: str) -> Any:
    """``value`` as given (2 stays 2, not 2.0: GT files show it) once :func:`number` accepts it."""
    number(value, src, where, minimum=0)
    return value


def _ids(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


@lru_cache(maxsize=256)
def _load(policy_id: str, folder: str, stamp: tuple = ()) -> Policy:
    return _build(_merged(policy_id, Path(folder)))


def load_policy_file(path: str | Path) -> Policy:
    """Parse and validate one policy file (its ``extends`` parent from the same folder or the package)."""
    path = Path(path)
    return _build(_merged(path.stem, path.parent))


def _stamp(folder: Path) -> tuple:
    """The stamps of a folder's policy files: a cache key that changes with the files."""
    return folder_stamps(folder, "*.yaml")


def policy_registry(ws: Workspace | None) -> Registry[Policy]:
    """Every policy in force in ``ws``: the package's, with the workspace's ``policies/`` added.

    A workspace policy whose id is a built-in one replaces it in that workspace (its
    ``replaces_builtin`` is set, so lists and pickers can say so); the package's own files are
    never changed. ``ws=None`` means the package's policies only: a caller always says which.
    """
    reg: Registry[Policy] = Registry("policy")
    own: dict[str, Policy] = {}
    if ws is not None:
        folder = ws.policies_dir
        stamp = _stamp(folder)
        own = {i: _load(i, str(folder), stamp) for i in _ids(folder)}
    for i in _ids(POLICY_DIR):
        reg.add(replace(own.pop(i), replaces_builtin=True) if i in own else _load(i, str(POLICY_DIR)))
    for policy in own.values():
        reg.add(policy)
    return reg


def get_policy(policy_id: str, ws: Workspace | None) -> Policy:
    """The policy ``policy_id`` in force in ``ws`` (see :func:`policy_registry`); an unknown id is
    an UnknownNameError listing the valid ones."""
    if not isinstance(policy_id, str) or not POLICY_ID_RE.fullmatch(policy_id):  # "../x", "G1_a_V2\n"
        raise UnknownNameError("policy", str(policy_id), POLICY_IDS(ws))
    if ws is None or not (ws.policies_dir / f"{policy_id}.yaml").exists():
        if (POLICY_DIR / f"{policy_id}.yaml").exists():
            return _load(policy_id, str(POLICY_DIR))
    return policy_registry(ws)[policy_id]


def POLICY_IDS(ws: Workspace | None) -> list[str]:  # noqa: N802 - reads like the registries' dict keys
    """The ids of the policies in force in ``ws`` (built-in ones first)."""
    return policy_registry(ws).names()


def builtin_policy_ids() -> list[str]:
    """The ids of the package's own policies (``core/ground_truth/policies/data``)."""
    return _ids(POLICY_DIR)


def list_policies(ws: Workspace | None, task: str | None = None) -> list[Policy]:
    """Every policy in force in ``ws``, optionally only those of ``task``."""
    return [p for p in policy_registry(ws).values() if task is None or p.task == task]
