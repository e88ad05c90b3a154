"""``workbench release --out DIR``: write a static, self-contained release of a workspace.

```
DIR/index.html, app.js, style.css   the page (opens from file:// or any static host; fetches nothing)
DIR/vega.js                         Vega, Vega-Lite and Vega-Embed, bundled (see core.release.page)
DIR/release-data.js                 what the page draws: figures, release.json, the datasheet, the file list
DIR/figures.json                    every figure the page shows, computed from data/ (core.release.figures)
DIR/release.json                    title, scope (datasets, runs, GT definitions and K), workbench version, base URL
DIR/claims.json                     the release's claims (token, statement, claim)
DIR/DATASHEET.md, datasheet.json    the datasheet
DIR/tables/                         Parquet (and CSV for the paired tables) of the figures: GT verdicts, runs, samples, paired
DIR/data/                           the data, as a workspace (core.release.data)
DIR/manifest.json                   sha256 and size of every other file
```

The release is written into a hidden folder beside ``DIR`` and renamed into place: a failed build
leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from core.base.errors import WorkbenchError
from core.base.files import remove_tree, write_bytes_atomic, write_json_atomic
from core.base.settings import env
from core.ground_truth import k_label
from core.release.audits import audit_files, audit_summaries
from core.release.data import DATA_DIR, write_data
from core.release.datasheet import datasheet, to_markdown
from core.release.figures import FORMAT, Computed, compute
from core.release.gt_figures import write_gt_files
from core.release.page import DATA_JS, data_js, write_static
from core.release.scope import Scope, choose_scope
from core.workspace import Workspace

MANIFEST = "manifest.json"
NOT_LISTED = (MANIFEST, DATA_JS)  # the page's file list cannot hold these two
Report = Callable[[str], None]


def workbench_version() -> str:
    """The installed Scale Workbench version (``unknown`` when not installed)."""
    try:
        return metadata.version("scale-workbench")
    except metadata.PackageNotFoundError:
        return "unknown"


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def file_entries(root: Path, *, skip: Sequence[str] = (MANIFEST,)) -> list[dict[str, Any]]:
    """``[{path, bytes, sha256}]`` of every file under ``root`` (sorted; ``skip`` left out)."""
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel in skip:
            continue
        data = path.read_bytes()
        out.append({"path": rel, "bytes": len(data), "sha256": sha256_bytes(data)})
    return out


def write_tables(out: Path, tables: Mapping[str, pl.DataFrame]) -> None:
    """The figures' tables: Parquet (zstd) or CSV by their extension."""
    for rel, frame in tables.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".csv"):
            frame.write_csv(path)
        else:
            frame.write_parquet(path, compression="zstd", statistics=False)


def page_payload(figures: Mapping[str, Any], meta: Mapping[str, Any], sheet: Mapping[str, Any],
                 files: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``release-data.js`` holds."""
    return {"figures": figures, "meta": meta, "datasheet": sheet, "files": files}


def _json(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def derived_files(computed: Computed, meta: Mapping[str, Any]) -> dict[str, bytes]:
    """The files made from the figures alone (verify makes them again and compares bytes)."""
    sheet = datasheet(computed.figures, meta)
    claims = [{"token": c["token"], "statement": c["statement"], "claim": c["claim"]} for c in computed.figures["claims"]]
    return {"figures.json": _json(computed.figures), "datasheet.json": _json(sheet),
            "DATASHEET.md": to_markdown(sheet).encode("utf-8"), "claims.json": _json(claims)}


def _gt_files(data: Workspace, scope: Scope, computed: Computed) -> None:
    for gts in scope.gts:
        for definition in gts.definitions:
            entry = next(e for e in computed.figures["gt"]
                         if (e["dataset"], e["task"], e["definition"]) == (gts.dataset, gts.task, definition))
            lineages = {k_label(k): entry["lineage"][k_label(k)] for k in gts.ks}
            write_gt_files(data, gts, definition, computed.gt_frames[(gts.dataset, gts.task, definition)], lineages)


def _copy_audits(ws: Workspace, data: Workspace, scope: Scope) -> None:
    for rel in audit_files(audit_summaries(ws, scope.datasets)):
        write_bytes_atomic(data.root / rel, (ws.root / rel).read_bytes())  # confined to the release's data


def _write(ws: Workspace, scope: Scope, staging: Path, report: Report) -> dict[str, Any]:
    staging.mkdir(parents=True)
    report("copying the data")
    data = write_data(ws, scope, staging / DATA_DIR)
    _copy_audits(ws, data, scope)
    report("computing every figure from the copied data (GT, scores, paired comparisons, claims)")
    computed = compute(data, scope)
    _gt_files(data, scope, computed)
    write_tables(staging, computed.tables)
    meta = {"format": FORMAT, "title": scope.title, "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "workbench": workbench_version(), "source": ws.root.name, "datasets": list(scope.datasets),
            "scope": scope.as_dict(), "base_url": env("WORKBENCH_BASE_URL")}
    write_json_atomic(staging / "release.json", meta)
    for name, body in derived_files(computed, meta).items():
        write_bytes_atomic(staging / name, body)
    report("writing the page and bundling Vega")
    write_static(staging)
    sheet = orjson.loads((staging / "datasheet.json").read_bytes())
    files = file_entries(staging, skip=NOT_LISTED)
    write_bytes_atomic(staging / DATA_JS, data_js(page_payload(computed.figures, meta, sheet, files)))
    entries = file_entries(staging)
    write_json_atomic(staging / MANIFEST, {"format": FORMAT, "files": entries})
    return {"figures": computed.figures, "files": len(entries) + 1, "bytes": sum(e["bytes"] for e in entries)}


def build_release(ws: Workspace, out: str | Path, *, datasets: Sequence[str] | None = None,
                  runs: Sequence[str] | None = None, title: str | None = None, ks: Sequence[int | None] | None = None,
                  baseline: str | None = None, report: Report | None = None) -> dict[str, Any]:
    """Write the release of ``ws`` into ``out`` (which must not exist, or be an empty folder).

    Returns ``{out, files, bytes, seconds, runs, gts, claims, warnings}``; warnings name the runs whose
    GT is stale and those whose stored scores are not the recomputed ones.
    """
    start = time.perf_counter()
    report = report or (lambda _msg: None)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise WorkbenchError(f"{out} exists and is not an empty folder: choose another --out")
    scope = choose_scope(ws.require(), datasets=datasets, runs=runs, title=title, ks=ks, baseline=baseline)
    staging = out.parent / f".{out.name}.partial"
    remove_tree(staging)  # a partial release left by a killed run
    try:
        written = _write(ws, scope, staging, report)
        if out.exists():
            out.rmdir()
        staging.rename(out)
    finally:
        remove_tree(staging)
    f = written["figures"]
    warnings = [f"run {r['run_id']}: its GT is stale ({'; '.join(r['gt']['stale_reasons'])}); it makes no claim"
                for r in f["runs"] if r["gt"]["stale_reasons"]]
    warnings += [f"run {r['run_id']}: stored {', '.join(r['stored_differs'])} differ from the recomputed (shown)"
                 for r in f["runs"] if r["stored_differs"]]
    return {"out": str(out), "files": written["files"], "bytes": written["bytes"],
            "seconds": round(time.perf_counter() - start, 2), "runs": len(f["runs"]), "gts": len(f["gt"]),
            "claims": len(f["claims"]), "warnings": warnings}
