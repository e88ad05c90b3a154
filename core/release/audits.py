"""Judge audits in a release, where the workspace has them: the small interface a release reads.

An audit feature contributes by exposing a function ``release_summaries(ws) -> list[dict]`` and
naming it in :data:`AUDIT_PROVIDERS` (``"module:function"``). Each summary is::

    {"dataset": str, "task": str, "judge": str, "title": str,
     "figures": {label: number or null},      what the release shows (and verify recomputes)
     "notes": [str],                           plain text
     "files": [path relative to the workspace]}  what the figures are computed from

The release copies ``files`` into its data workspace, shows the figures on its Judges page and in
the datasheet, and ``release verify`` calls the same provider on the release's data and compares
every figure. A provider that is not installed (its module cannot be imported) contributes
nothing; with none, the release and its datasheet say that the workspace holds no judge audit.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.base.errors import WorkbenchError
from core.workspace import Workspace, is_inside

AUDIT_PROVIDERS: tuple[str, ...] = ("core.judgments.judges.audit:release_summaries",)


def _provider(spec: str) -> Any:
    module, _, name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def _checked(ws: Workspace, item: Mapping[str, Any], spec: str) -> dict[str, Any]:
    if not isinstance(item, Mapping) or not isinstance(item.get("figures"), Mapping):
        raise WorkbenchError(f"audit provider {spec}: a summary must be an object with 'figures'")
    files = [str(f) for f in item.get("files") or []]
    for f in files:
        if Path(f).is_absolute() or not is_inside(ws.root / f, ws.root):
            raise WorkbenchError(f"audit provider {spec}: file {f!r} is not inside the workspace")
    figures = {str(k): (None if v is None else float(v)) for k, v in item["figures"].items()}
    return {"dataset": str(item.get("dataset") or ""), "task": str(item.get("task") or ""),
            "judge": str(item.get("judge") or ""), "title": str(item.get("title") or "judge audit"),
            "figures": figures, "notes": [str(n) for n in item.get("notes") or []], "files": sorted(files),
            "provider": spec}


def audit_summaries(ws: Workspace, datasets: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Every installed provider's audit summaries of ``ws`` (of ``datasets`` when given), checked."""
    out = []
    for spec in AUDIT_PROVIDERS:
        provider = _provider(spec)
        if provider is None:
            continue
        for item in provider(ws) or []:
            summary = _checked(ws, item, spec)
            if datasets is None or summary["dataset"] in datasets:
                out.append(summary)
    return sorted(out, key=lambda s: (s["dataset"], s["task"], s["judge"], s["title"]))


def audit_files(summaries: list[dict[str, Any]]) -> list[str]:
    """The workspace files the audits are computed from (copied into the release)."""
    return sorted({f for s in summaries for f in s["files"]})

