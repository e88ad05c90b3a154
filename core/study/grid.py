"""The prompt grid of the perspective study (SPEC §7): matched landlord / tenant / neutral prompts.

A grid is built from *templates* (``data/rent_templates.jsonl``: one scenario wording per line,
written once per perspective) and *factors* (``data/rent_factors.json``: ``base_rent``,
``amount``, ``relationship_quality``). Every combination of a template and factor values is one
scenario; each scenario gives one prompt per perspective with the same factors.

Mirroring. The landlord and tenant wordings of a template must say the same thing from the other
side: the landlord text, with the role words swapped (``landlord`` ↔ ``tenant``) and the
template's own few short ``swaps`` applied (phrases that must change with the speaker, such as
"my tenant pays" ↔ "I pay my landlord"), must equal the tenant text token for token. Numbers,
placeholders and punctuation never change, and the swaps are limited (≤ 4 pairs of ≤ 8 words,
no numbers), so a "mirror" cannot be a different prompt. The neutral wording must carry the same
placeholders. A template that fails is a :class:`~core.base.errors.DataError` naming file and line.

A grid is stored as data, ``studies/{study}/grid.jsonl``: one prompt per line
``{prompt_id, scenario_id, template_id, perspective, factors, messages}``. Reading a grid file
checks every line and that each landlord/tenant pair of a scenario has the same factors and the
same numbers in the same order.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import jsonl_objects, read_json, write_jsonl_atomic

PERSPECTIVES = ("landlord", "tenant", "neutral")
FACTOR_NAMES = ("base_rent", "amount", "relationship_quality")
DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_TEMPLATES = DATA_DIR / "rent_templates.jsonl"
DEFAULT_FACTORS = DATA_DIR / "rent_factors.json"
SYSTEM_PROMPT = "You are a helpful assistant."
ROLE_SWAPS: tuple[tuple[str, str], ...] = (("landlord", "tenant"), ("landlords", "tenants"))
MAX_SWAPS, MAX_SWAP_WORDS = 4, 8
PLACEHOLDERS = ("base_rent", "amount", "relationship")  # what a template may say in braces
MAX_LEVELS, MAX_AMOUNT, MAX_PROMPTS = 100, 10**9, 100_000
_TOKEN = re.compile(r"\{\w+\}|\w+|[^\w\s]")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


@dataclass(frozen=True)
class Template:
    """One scenario wording per perspective, with the speaker-dependent phrase swaps."""

    template_id: str
    texts: dict[str, str]  # perspective -> text with {base_rent}, {amount}, {relationship}
    swaps: tuple[tuple[str, str], ...]


def tokens(text: str) -> list[str]:
    """Lower-case word, placeholder and punctuation tokens.

    >>> tokens("I pay {base_rent}€, OK?")
    ['i', 'pay', '{base_rent}', '€', ',', 'ok', '?']
    """
    return _TOKEN.findall(text.lower())


def swap_roles(words: list[str], swaps: Iterable[tuple[str, str]]) -> list[str]:
    """``words`` with every swap phrase replaced by its counterpart (both directions, longest first).

    >>> swap_roles(tokens("my tenant pays late"), [("my tenant pays", "i pay my landlord")])
    ['i', 'pay', 'my', 'landlord', 'late']
    """
    table: list[tuple[list[str], list[str]]] = []
    for a, b in [*ROLE_SWAPS, *swaps]:
        table += [(tokens(a), tokens(b)), (tokens(b), tokens(a))]
    table.sort(key=lambda pair: -len(pair[0]))
    out, i = [], 0
    while i < len(words):
        for src, dst in table:
            if words[i:i + len(src)] == src:
                out += dst
                i += len(src)
                break
        else:
            out.append(words[i])
            i += 1
    return out


def mirror_problem(landlord: str, tenant: str, swaps: Iterable[tuple[str, str]] = ()) -> str | None:
    """Why ``tenant`` is not the mirror of ``landlord`` (None when it is).

    >>> mirror_problem("My tenant pays {base_rent}€.", "My landlord pays {base_rent}€.") is None
    True
    >>> mirror_problem("My tenant pays {base_rent}€.", "My landlord pays {amount}€.")
    "word 4 differs: mirrored landlord text has '{base_rent}', tenant text has '{amount}'"
    """
    swaps = list(swaps)
    if len(swaps) > MAX_SWAPS:
        return f"{len(swaps)} swaps; at most {MAX_SWAPS} phrases may change with the speaker"
    for pair in swaps:
        for side in pair:
            if len(tokens(side)) > MAX_SWAP_WORDS or _NUMBER.search(side) or "{" in side or "€" in side:
                return f"swap {side!r} is too long or carries a number or placeholder"
    mirrored, target = swap_roles(tokens(landlord), swaps), tokens(tenant)
    for i, (a, b) in enumerate(itertools.zip_longest(mirrored, target, fillvalue="<end>"), start=1):
        if a != b:
            return f"word {i} differs: mirrored landlord text has {a!r}, tenant text has {b!r}"
    return None


def read_templates(path: str | Path = DEFAULT_TEMPLATES) -> list[Template]:
    """Templates of a JSONL file, each checked for mirroring (DataError names file, line, field)."""
    path = Path(path)
    out: list[Template] = []
    seen: set[str] = set()
    for n, obj in jsonl_objects(path):
        tid = obj.get("template_id")
        if not isinstance(tid, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", tid):
            raise DataError("expected a short id (letters, digits, _ or -)", path=path, line=n, field="template_id")
        if tid in seen:
            raise DataError(f"template {tid!r} appears twice", path=path, line=n, field="template_id")
        seen.add(tid)
        texts = {}
        for p in PERSPECTIVES:
            if not isinstance(obj.get(p), str) or not obj[p].strip():
                raise DataError("expected the prompt text of this perspective", path=path, line=n, field=p)
            texts[p] = obj[p]
        raw_swaps = obj.get("swaps") or []
        if not isinstance(raw_swaps, list) or not all(
                isinstance(s, list) and len(s) == 2 and all(isinstance(x, str) for x in s) for s in raw_swaps):
            raise DataError("expected a list of [landlord phrase, tenant phrase] pairs", path=path, line=n,
                            field="swaps")
        swaps = tuple((a, b) for a, b in raw_swaps)
        problem = mirror_problem(texts["landlord"], texts["tenant"], swaps)
        if problem:
            raise DataError(f"landlord/tenant pair is not mirrored: {problem}", path=path, line=n, field="tenant")
        for p, text in texts.items():  # filled by plain substitution: no format spec, index or attribute
            unknown = sorted(set(_PLACEHOLDER.findall(text)) - set(PLACEHOLDERS))
            if unknown or "{" in _PLACEHOLDER.sub("", text) or "}" in _PLACEHOLDER.sub("", text):
                what = f"unknown placeholder {{{unknown[0]}}}" if unknown else "a { or } that is not a placeholder"
                raise DataError(f"{what}; a template may use {', '.join('{' + h + '}' for h in PLACEHOLDERS)}",
                                path=path, line=n, field=p)
        holders = {p: _PLACEHOLDER.findall(t) for p, t in texts.items()}
        if sorted(holders["neutral"]) != sorted(holders["landlord"]):
            raise DataError(f"neutral text has placeholders {holders['neutral']}, the pair has "
                            f"{holders['landlord']}", path=path, line=n, field="neutral")
        out.append(Template(tid, texts, swaps))
    if not out:
        raise DataError("no templates", path=path)
    return out


def read_factors(path: str | Path = DEFAULT_FACTORS) -> dict[str, Any]:
    """Factor levels and relationship phrases (JSON), validated."""
    path = Path(path)
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise DataError("expected a JSON object", path=path)
    for name in ("base_rent", "amount"):
        values = doc.get(name)
        if not isinstance(values, list) or not 0 < len(values) <= MAX_LEVELS or not all(
                isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_AMOUNT for v in values):
            raise DataError(f"expected a list of 1 to {MAX_LEVELS} whole amounts from 1 to {MAX_AMOUNT:,}", path=path,
                            field=name)
    rel = doc.get("relationship_quality")
    phrases = doc.get("relationship_phrases") or {}
    if not isinstance(rel, list) or not 0 < len(rel) <= MAX_LEVELS or not all(
            isinstance(v, str) and isinstance(phrases.get(v), str) and len(phrases[v]) <= 500 for v in rel):
        raise DataError(f"expected 1 to {MAX_LEVELS} levels that each have a phrase (at most 500 characters) in "
                        "relationship_phrases", path=path, field="relationship_quality")
    return doc


def fill(template: str, values: dict[str, Any]) -> str:
    """``template`` with each ``{name}`` replaced by ``values[name]`` (plain text: no format spec,
    index or attribute, as :func:`read_templates` checked).

    >>> fill("rent {base_rent}, raise {amount}", {"base_rent": 600, "amount": 50})
    'rent 600, raise 50'
    """
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def build_grid(templates: list[Template], factors: dict[str, Any], *, template_ids: Iterable[str] | None = None,
               levels: dict[str, list[Any]] | None = None) -> list[dict[str, Any]]:
    """Every template × factor combination, one prompt per perspective, in a fixed order.

    Args:
        template_ids: keep only these templates (all by default).
        levels: override factor levels (e.g. ``{"amount": [100]}`` for a small grid).
    """
    keep = set(template_ids) if template_ids is not None else None
    levels = {name: list((levels or {}).get(name, factors[name])) for name in FACTOR_NAMES}
    size = len(PERSPECTIVES) * len([t for t in templates if keep is None or t.template_id in keep])
    for name in FACTOR_NAMES:
        size *= len(levels[name])
    if size > MAX_PROMPTS:  # counted before anything is built: a 400 x 400 factor file is refused at once
        raise ValueError(f"the grid would have {size:,} prompts; at most {MAX_PROMPTS:,} (fewer templates or levels)")
    prompts = []
    for t in templates:
        if keep is not None and t.template_id not in keep:
            continue
        for base_rent, amount, rel in itertools.product(*(levels[n] for n in FACTOR_NAMES)):
            scenario_id = f"{t.template_id}.{base_rent}.{amount}.{rel}"
            values = {"base_rent": base_rent, "amount": amount,
                      "relationship": factors["relationship_phrases"][rel]}
            for perspective in PERSPECTIVES:
                text = fill(t.texts[perspective], values)
                prompts.append({
                    "prompt_id": f"{scenario_id}.{perspective}", "scenario_id": scenario_id,
                    "template_id": t.template_id, "perspective": perspective,
                    "factors": {"perspective": perspective, "base_rent": base_rent, "amount": amount,
                                "relationship_quality": rel},
                    "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}],
                })
    if keep is not None and not prompts:
        raise ValueError(f"no template among {sorted(keep)}; valid: {', '.join(t.template_id for t in templates)}")
    return prompts


def user_text(prompt: dict[str, Any]) -> str:
    """The last user message of a prompt record."""
    return next(m["content"] for m in reversed(prompt["messages"]) if m.get("role") == "user")


def _check_prompt(obj: dict[str, Any], path: Path, n: int) -> dict[str, Any]:
    for name in ("prompt_id", "scenario_id"):
        if not isinstance(obj.get(name), str) or not obj[name]:
            raise DataError("expected a non-empty string", path=path, line=n, field=name)
    if obj.get("perspective") not in PERSPECTIVES:
        raise DataError(f"expected one of {', '.join(PERSPECTIVES)}, got {obj.get('perspective')!r}", path=path,
                        line=n, field="perspective")
    factors = obj.get("factors")
    if not isinstance(factors, dict) or any(k not in factors for k in FACTOR_NAMES):
        raise DataError(f"expected an object with {', '.join(FACTOR_NAMES)}", path=path, line=n, field="factors")
    if factors.get("perspective", obj["perspective"]) != obj["perspective"]:
        raise DataError("factors.perspective differs from perspective", path=path, line=n, field="factors")
    messages = obj.get("messages")
    if not isinstance(messages, list) or not any(isinstance(m, dict) and m.get("role") == "user"
                                                 and isinstance(m.get("content"), str) for m in messages):
        raise DataError("expected a list of messages with a user message", path=path, line=n, field="messages")
    return obj


def check_pairs(prompts: list[tuple[int, dict[str, Any]]], path: Path) -> None:
    """Each scenario's landlord and tenant prompts have the same factors and the same numbers."""
    by_scenario: dict[str, dict[str, tuple[int, dict[str, Any]]]] = {}
    for n, p in prompts:
        slot = by_scenario.setdefault(p["scenario_id"], {})
        if p["perspective"] in slot:
            raise DataError(f"scenario {p['scenario_id']!r} has a second {p['perspective']} prompt (first on line "
                            f"{slot[p['perspective']][0]})", path=path, line=n, field="perspective")
        slot[p["perspective"]] = (n, p)
    for sid, slot in by_scenario.items():
        if "landlord" not in slot or "tenant" not in slot:
            continue
        (_, land), (n, ten) = slot["landlord"], slot["tenant"]
        strip = {k: v for k, v in land["factors"].items() if k != "perspective"}
        if strip != {k: v for k, v in ten["factors"].items() if k != "perspective"}:
            raise DataError(f"scenario {sid!r}: the tenant prompt's factors differ from the landlord prompt's",
                            path=path, line=n, field="factors")
        if _NUMBER.findall(user_text(land)) != _NUMBER.findall(user_text(ten)):
            raise DataError(f"scenario {sid!r}: the tenant prompt is not mirrored (its numbers differ from the "
                            f"landlord prompt's)", path=path, line=n, field="messages")


def read_grid(path: str | Path) -> list[dict[str, Any]]:
    """A grid file, every line and every landlord/tenant pair checked."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such grid file: {path}")
    prompts = [(n, _check_prompt(obj, path, n)) for n, obj in jsonl_objects(path)]
    seen: dict[str, int] = {}
    for n, p in prompts:
        if p["prompt_id"] in seen:
            raise DataError(f"prompt_id {p['prompt_id']!r} appears twice (first on line {seen[p['prompt_id']]})",
                            path=path, line=n, field="prompt_id")
        seen[p["prompt_id"]] = n
    check_pairs(prompts, path)
    return [p for _, p in prompts]


def write_grid(path: str | Path, prompts: list[dict[str, Any]]) -> int:
    """Write a grid file atomically (after checking its pairs); returns the number of prompts."""
    check_pairs(list(enumerate(prompts, start=1)), Path(path))
    return write_jsonl_atomic(path, prompts)


def grid_from_seed(path: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Prompts and responses of a scenario seed (item JSONL like ``scenario_seed.jsonl``).

    Each line: ``identifier`` ``"{prompt_id}:{perspective}"``, ``prompt_body``, ``metadata.factors``
    (and ``metadata.perspective``); ``model_response_text``/``model_id``/``run_id`` when present
    give a response. Scenarios are the factor combinations. Returns (prompts, run records).
    """
    path = Path(path)
    prompts: list[tuple[int, dict[str, Any]]] = []
    responses = []
    for n, obj in jsonl_objects(path):
        ident = obj.get("identifier")
        meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
        if not isinstance(ident, str) or not ident.strip():
            raise DataError("missing identifier", path=path, line=n, field="identifier")
        prompt_id, _, tail = ident.partition(":")
        perspective = meta.get("perspective") or tail
        factors = meta.get("factors")
        if not isinstance(factors, dict):
            raise DataError("expected an object of factors", path=path, line=n, field="metadata.factors")
        if not isinstance(obj.get("prompt_body"), str) or not obj["prompt_body"].strip():
            raise DataError("expected the prompt text", path=path, line=n, field="prompt_body")
        factors = {"perspective": perspective, **{k: v for k, v in factors.items() if k != "perspective"}}
        key = ".".join(str(factors.get(k)) for k in FACTOR_NAMES)
        prompt = {"prompt_id": prompt_id, "scenario_id": meta.get("scenario_id") or key, "template_id": "imported",
                  "perspective": perspective, "factors": factors,
                  "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                               {"role": "user", "content": obj["prompt_body"]}]}
        prompts.append((n, _check_prompt(prompt, path, n)))
        text = obj.get("model_response_text", obj.get("response_text"))
        if isinstance(text, str) and obj.get("model_id"):
            responses.append({
                "run_id": str(obj.get("run_id") or "imported"), "timestamp_iso": obj.get("created_at"),
                "model_id": obj["model_id"], "provider": meta.get("provider"), "prompt_id": prompt_id,
                "perspective": perspective, "factors": factors, "messages": prompt["messages"],
                "response_text": text,
            })
    check_pairs(prompts, path)
    return [p for _, p in prompts], responses


def grid_summary(prompts: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of a grid: prompts, scenarios, by perspective, and the factor levels used."""
    by = {p: sum(1 for x in prompts if x["perspective"] == p) for p in PERSPECTIVES}
    levels = {n: sorted({x["factors"][n] for x in prompts}) for n in FACTOR_NAMES}
    return {"prompts": len(prompts), "scenarios": len({x["scenario_id"] for x in prompts}), "by_perspective": by,
            "levels": levels}


def dumps_prompt(prompt: dict[str, Any]) -> str:
    """One grid line (for messages and tests)."""
    return json.dumps(prompt, ensure_ascii=False)
