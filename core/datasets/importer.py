"""``import_dataset``: detect the layout of a source, read and check it, write the dataset.

The source is read a chunk at a time and staged on disk (:mod:`core.datasets.staging`), so an
import's memory does not grow with the file.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

from core.base.errors import DataError
from core.base.progress import Progress, no_progress
from core.base.settings import require_writable
from core.datasets.flat import stage_flat
from core.datasets.lock import hash_sources
from core.datasets.scale import stage_scale
from core.datasets.sources import (
    FLAT_BUSINESS,
    FLAT_REVIEW,
    SCALE,
    detect_layout,
    file_format,
    resolve_paths,
)
from core.datasets.staging import Stager
from core.datasets.store import ensure_absent, write_streamed
from core.workspace import Workspace
from core.workspace.locks import dataset_lock


def _business_source(review_path: Path, business_path: Path | None) -> tuple[Path, str]:
    if business_path is None:
        raise DataError(
            "this is a flat Yelp review file: pass its business file too (CLI: --business business.json)",
            path=review_path,
        )
    business_path = Path(business_path)
    fmt = file_format(business_path)
    layout = detect_layout(business_path, fmt, default=FLAT_BUSINESS)
    if layout != FLAT_BUSINESS:
        raise DataError(
            f"expected a Yelp business file (business_id, name per line), but this looks like {layout}",
            path=business_path,
        )
    return business_path, fmt


def import_dataset(
    ws: Workspace,
    name: str,
    path: str | Path,
    *,
    business_path: str | Path | None = None,
    replace: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Import a SCALE (SPEC §1.1) or flat Yelp (§1.2) source as dataset ``name``.

    The layout and format (JSONL or Parquet) are detected from the file. Nothing is written unless
    the whole source is valid: the tables and the lock appear together or not at all.

    Args:
        path: the SCALE file, the flat review file, or a folder holding review/business files.
        business_path: the business file of the flat layout.
        replace: overwrite an existing dataset of that name.
        progress: ``(done, total, message)`` callback.

    Returns:
        The dataset's lock plus ``path``, ``format``, ``seconds`` and ``warnings``.

    Raises:
        DataError: bad input, naming the file, the line (1-based; the row for Parquet) and field.
        WorkbenchError: the dataset exists and ``replace`` is false.
    """
    require_writable("import a dataset")
    with dataset_lock(ws, name):  # held from the check to the rename: a concurrent import of the name fails
        return _import(ws, name, path, business_path=business_path, replace=replace, progress=progress)


def _import(
    ws: Workspace, name: str, path: str | Path, *, business_path: str | Path | None, replace: bool,
    progress: Progress | None,
) -> dict[str, Any]:
    started = time.perf_counter()
    progress = progress or no_progress
    ensure_absent(ws, name, replace=replace)
    path, business_path = resolve_paths(Path(path), Path(business_path) if business_path else None)
    fmt = file_format(path)
    layout = detect_layout(path, fmt)
    if layout == FLAT_BUSINESS:
        raise DataError("this is a business file: pass the review file as PATH and this one as --business", path=path)
    warnings: list[str] = []
    if layout == SCALE:
        if business_path is not None:
            raise DataError("a SCALE file carries its businesses: --business is only for the flat layout", path=path)
        files = [path]

        def stage(work: Path) -> tuple[pl.DataFrame, Stager, bool]:
            restaurants, stager, found = stage_scale(path, fmt, work, progress=progress)
            warnings.extend(found)
            return restaurants, stager, False
    else:
        assert layout == FLAT_REVIEW
        business_path, business_fmt = _business_source(path, business_path)
        files = [path, business_path]

        def stage(work: Path) -> tuple[pl.DataFrame, Stager, bool]:
            assert business_path is not None
            restaurants, stager = stage_flat(path, fmt, business_path, business_fmt, work, progress=progress)
            return restaurants, stager, True

    with ThreadPoolExecutor(max_workers=1) as pool:  # the sources are hashed while they are read
        hashes = pool.submit(hash_sources, files, ws.root)
        try:
            result = write_streamed(ws, name, stage, sources=hashes.result, layout="scale" if layout == SCALE else "flat",
                                    replace=replace, progress=progress)
        except BaseException:
            hashes.cancel()
            raise
    return {**result, "format": fmt, "seconds": round(time.perf_counter() - started, 3), "warnings": warnings}
