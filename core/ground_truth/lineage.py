"""GT lineage: what a ground truth was made from, named once, and checked against the workspace now.

A computed GT is identified by its inputs (:func:`computed_lineage`):

```
dataset, dataset_sha256        the dataset and the sha256 of its lock (sources and tables)
task
definition                     name, kind (formula / policy / variant), base, sha256 of its content,
                               replaces_builtin (a workspace policy in force instead of a built-in)
judge, judgments_sha256, n_judgments   the GT judge and a digest of its judgments as it wrote them
overrides_sha256, n_overrides, override_ids   the human overrides in force (their corrections)
k
```

``version`` is the sha256 of those inputs (canonical JSON): two GTs with the same version come from
the same inputs. A GT file imported from elsewhere has ``origin: "imported"`` and its source file
(name, sha256, layout) instead. Every GT file the workbench writes carries its lineage under the
key ``lineage``; every run records the lineage of the GT it was scored against.

A run's GT is *stale* when an input changed since (:func:`stale_reasons`): an override added or
reverted, judgments added or retired, another GT judge, a changed definition or dataset, or a GT
file that is no longer what the run read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import fields as dataclass_fields
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from core.base.errors import UnknownNameError, WorkbenchError
from core.base.files import read_json, sha256_file
from core.base.memo import stamped
from core.base.stamps import file_stamp
from core.ground_truth.formulas import Formula
from core.ground_truth.policies import Policy
from core.ground_truth.variants import ResolvedDefinition, resolve_definition
from core.judgments import get_gt_judge, load_raw_judgments
from core.judgments.overrides import active_overrides
from core.judgments.store import judgment_path
from core.tasks import get_task
from core.workspace import Workspace

ORIGINS = ("computed", "imported", "file", "embedded")
_NOT_CONTENT = ("source", "origin", "replaces_builtin")  # where a policy lives, not what it says


def canonical(value: Any) -> Any:
    """A JSON-ready, order-stable form of ``value`` (mappings, tuples, dataclasses, floats).

    >>> canonical({"b": (1, 2.0), "a": {"y": None}})
    {'a': {'y': None}, 'b': [1, 2.0]}
    """
    if isinstance(value, Mapping):
        return {str(k): canonical(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: canonical(getattr(value, f.name)) for f in dataclass_fields(value)}
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def digest(value: Any) -> str:
    """sha256 (hex) of the canonical JSON of ``value``."""
    text = json.dumps(canonical(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def definition_sha256(definition: Formula | Policy, constants: Mapping[str, Any] | None = None) -> str:
    """sha256 of what a definition says: a policy's rules, points, scale (not where its file lives);
    a formula's name, version and resolved constants (a what-if's included)."""
    if isinstance(definition, Formula):
        return digest({"formula": definition.name, "version": definition.version,
                       "constants": definition.resolve_constants(constants)})
    content = {f.name: getattr(definition, f.name) for f in dataclass_fields(definition) if f.name not in _NOT_CONTENT}
    return digest({"policy": content})


def definition_lineage(chosen: ResolvedDefinition) -> dict[str, Any]:
    """The ``definition`` part of a lineage: name, kind, base, content sha256, replaces_builtin."""
    d = chosen.definition
    kind = "variant" if chosen.variant is not None else ("formula" if isinstance(d, Formula) else "policy")
    return {"name": chosen.name, "kind": kind, "base": chosen.base,
            "sha256": definition_sha256(d, chosen.constants),
            "replaces_builtin": bool(getattr(d, "replaces_builtin", False))}


def dataset_sha256(ws: Workspace, dataset: str) -> str:
    """sha256 of what the dataset's lock says of its content: the sha256 of its sources and tables and
    its counts (not where the sources were, nor when it was imported: a copied workspace, or the
    same files imported again, is the same dataset)."""
    path = ws.dataset_dir(dataset) / "dataset.lock.json"
    if not path.exists():
        raise WorkbenchError(f"dataset {dataset!r} has no dataset.lock.json in {ws.root}")
    lock = read_json(path)
    return digest({"sources": sorted(str(s.get("sha256")) for s in lock.get("sources") or []),
                   "tables": lock.get("tables"), "counts": lock.get("counts")})


def _stamp(path: Path) -> tuple[str, int, int]:
    return file_stamp(path) or (str(path), 0, -1)


def judgments_state(ws: Workspace, dataset: str, task: str, judge: str) -> tuple[str, int]:
    """(sha256, count) of a judge's judgments as it wrote them (the latest per review, stale ones
    left out, no overrides): what they say, not when they were written."""
    log = ws.judgments_dir(dataset, task)
    stamps = (_stamp(ws.dataset_dir(dataset) / "dataset.lock.json"),
              *(_stamp(p) for p in sorted(log.glob("*.jsonl")) if log.is_dir()))
    return _judgments_state(str(ws.root), dataset, task, judge, stamps)


@lru_cache(maxsize=64)
def _judgments_state(root: str, dataset: str, task: str, judge: str, stamps: tuple) -> tuple[str, int]:
    ws = Workspace(Path(root))
    spec = get_task(task, ws)

    def compute() -> list[Any]:
        frame = load_raw_judgments(ws, dataset, task, judge)
        content = frame.select("business_id", "review_id", "idx", *spec.field_names, "parse_error").sort("business_id", "idx")
        return [hashlib.sha256(content.write_ndjson().encode("utf-8")).hexdigest(), frame.height]

    # kept beside a large log while it, the dataset and the task's fields are as they were (seconds at 1 M judgments)
    context = digest({"stamps": [list(s) for s in stamps], "fields": list(spec.field_names)})
    sha, n = stamped(judgment_path(ws, dataset, task, judge), "state", compute, context=context)
    return str(sha), int(n)


def overrides_state(ws: Workspace, dataset: str, task: str) -> dict[str, Any]:
    """The human overrides in force: sha256 of their corrections, their count and their ids."""
    items = active_overrides(ws, dataset, task) if ws.overrides_path(dataset, task).exists() else []
    content = sorted(([m["business_id"], m.get("review_id"), m.get("idx"), m["corrected"]] for m in items),
                     key=lambda row: json.dumps(row, sort_keys=True, default=str))
    ids = sorted(i for m in items for i in m["override_ids"])
    return {"overrides_sha256": digest(content), "n_overrides": len(items), "override_ids": ids}


def computed_lineage(ws: Workspace, dataset: str, task: str, definition: str | ResolvedDefinition, k: int | None, *,
                     judge: str | None = None) -> dict[str, Any]:
    """The lineage of the GT that ``definition`` (a name or a resolved one) gives at ``k`` from the
    workspace's judgments now (``judge``: the GT judge when None)."""
    chosen = definition if isinstance(definition, ResolvedDefinition) else resolve_definition(ws, definition)
    judge = judge or get_gt_judge(ws, dataset, task)
    if judge is None:
        raise WorkbenchError(f"no judgments of {task} in dataset {dataset}: there is no GT to compute")
    sha, n = judgments_state(ws, dataset, task, judge)
    inputs = {"dataset": dataset, "dataset_sha256": dataset_sha256(ws, dataset), "task": task,
              "definition": definition_lineage(chosen), "judge": judge, "judgments_sha256": sha, "n_judgments": n,
              **overrides_state(ws, dataset, task), "k": k}
    return {"origin": "computed", "version": digest(inputs)[:16], **inputs}


def lineages_by_k(ws: Workspace, dataset: str, task: str, definition: str | ResolvedDefinition,
                  ks: list[int | None], *, judge: str | None = None) -> dict[int | None, dict[str, Any]]:
    """:func:`computed_lineage` of each K (what ``export_gt`` writes into each file)."""
    chosen = definition if isinstance(definition, ResolvedDefinition) else resolve_definition(ws, definition)
    return {k: computed_lineage(ws, dataset, task, chosen, k, judge=judge) for k in ks}


def file_lineage(path: str | Path, *, origin: str = "file", shown: str | None = None,
                 inner: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The lineage of a GT read from a file (imported or exported): its name, sha256 and, when the
    file carries one, the lineage it was computed with (``computed_from``)."""
    path = Path(path)
    sha = sha256_file(path)
    out: dict[str, Any] = {"origin": origin, "version": sha[:16], "file": shown or str(path), "file_sha256": sha}
    if inner:
        out["computed_from"] = dict(inner)
    return out


def describe(lineage: Mapping[str, Any] | None) -> str:
    """One line naming a GT in words, e.g. "computed from heuristic-v2 judgments with G1_allergy_V2
    at K=25, 3 overrides · version 1a2b3c4d5e6f7a8b".

    >>> describe({"origin": "file", "file": "gt/x.json", "file_sha256": "ab" * 32, "version": "ab" * 8})
    'GT file gt/x.json (sha256 abababababab…)'
    >>> describe(None)
    "no GT recorded (each sample's own gt_verdict)"
    """
    if not lineage:
        return "no GT recorded (each sample's own gt_verdict)"
    origin = lineage.get("origin")
    if origin == "computed":
        d = lineage.get("definition") or {}
        what = d.get("name", "?") + (f" (a variant of {d.get('base')})" if d.get("kind") == "variant" else "")
        own = " (this workspace's, in force instead of the built-in)" if d.get("replaces_builtin") else ""
        n = int(lineage.get("n_overrides") or 0)
        k = "all reviews" if lineage.get("k") is None else f"K={lineage.get('k')}"
        return (f"computed from {lineage.get('judge')} judgments with {what}{own} at {k}, "
                f"{n} override{'' if n == 1 else 's'} · version {lineage.get('version')}")
    if origin == "embedded":
        return f"the GT verdicts inside the imported results file {lineage.get('file')}"
    kind = "imported GT file" if origin == "imported" else "GT file"
    return f"{kind} {lineage.get('file')} (sha256 {str(lineage.get('file_sha256'))[:12]}…)"


def stale_reasons(ws: Workspace, lineage: Mapping[str, Any] | None, *, cache: dict[Any, Any] | None = None) -> list[str]:
    """Why a GT of this lineage is no longer what the workspace gives (empty: it is current).

    Computed: the dataset, the definition, the GT judge, its judgments or the overrides changed.
    A GT file: the file changed or is gone. Embedded GT never goes stale. ``cache`` (a dict the
    caller keeps for one listing) holds the current lineage of each (dataset, task, definition, K).
    """
    if not lineage or lineage.get("origin") == "embedded":
        return []
    if lineage.get("origin") in ("file", "imported"):
        path = Path(str(lineage.get("file")))
        path = path if path.is_absolute() else ws.root / path
        if not path.exists():
            return [f"the GT file {lineage.get('file')} is gone"]
        now = stamped(path, "sha256", lambda: sha256_file(path))  # kept beside the file until it changes
        return [] if now == lineage.get("file_sha256") else [f"the GT file {lineage.get('file')} changed"]
    return _computed_reasons(ws, lineage, {} if cache is None else cache)


def _computed_reasons(ws: Workspace, was: Mapping[str, Any], cache: dict[Any, Any]) -> list[str]:
    dataset, task, d = str(was.get("dataset")), str(was.get("task")), was.get("definition") or {}
    key = (dataset, task, str(d.get("name")), was.get("k"))
    if key not in cache:
        try:
            cache[key] = computed_lineage(ws, dataset, task, str(d.get("name")), was.get("k"))
        except (UnknownNameError, WorkbenchError) as exc:
            cache[key] = exc
    now = cache[key]
    if isinstance(now, Exception):
        return [f"its GT can no longer be computed: {now}"]
    reasons = []
    if now["dataset_sha256"] != was.get("dataset_sha256"):
        reasons.append(f"dataset {dataset} changed")
    if now["definition"]["sha256"] != d.get("sha256"):
        reasons.append(f"definition {d.get('name')} changed")
    if now["judge"] != was.get("judge"):
        reasons.append(f"the GT judge is now {now['judge']} (was {was.get('judge')})")
    elif now["judgments_sha256"] != was.get("judgments_sha256"):
        delta = now["n_judgments"] - int(was.get("n_judgments") or 0)
        change = f"{abs(delta)} {'added' if delta > 0 else 'retired'}" if delta else "some changed"
        reasons.append(f"judgments of {now['judge']} changed ({change})")
    if now["overrides_sha256"] != was.get("overrides_sha256"):
        before, after = set(was.get("override_ids") or []), set(now["override_ids"])
        added, gone = len(after - before), len(before - after)
        parts = [f"{added} added"] * bool(added) + [f"{gone} reverted"] * bool(gone)
        reasons.append("overrides changed (" + (", ".join(parts) or "corrections edited") + ")")
    return reasons


def gt_snapshot_frame(payload: Mapping[str, Any]) -> pl.DataFrame:
    """business_id, name, verdict and incidents (review_id, severity) of an ADDM-layout GT document."""
    rows = []
    for bid, entry in (payload.get("restaurants") or {}).items():
        g = entry.get("ground_truth") or {}
        rows.append({"business_id": str(bid), "name": entry.get("name"), "verdict": g.get("verdict"),
                     "incidents": sorted(f"{i.get('review_id')}:{i.get('severity')}" for i in g.get("incidents") or [])})
    return pl.DataFrame(rows, schema={"business_id": pl.String, "name": pl.String, "verdict": pl.String,
                                      "incidents": pl.List(pl.String)})
