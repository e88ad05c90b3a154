"""File stamps: what changes when a file changes, for cache keys (``st.cache_data`` parameters,
``functools.lru_cache`` arguments, staleness checks). One helper instead of a ``stat()`` tuple
written out in every loader.

A stamp is ``(name, mtime_ns, size)``: a rewrite in place changes the mtime, an atomic replace
changes both. Stamps are cache keys, never proofs of content (the lineage digests are that).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

Stamp = tuple[str, int, int]


def file_stamp(path: str | os.PathLike[str], name: str | None = None) -> Stamp | None:
    """``(name or path, mtime_ns, size)`` of a file, or None when it cannot be read (missing, removed
    meanwhile, no permission).

    >>> file_stamp("/nonexistent/x.json") is None
    True
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (str(path) if name is None else name, st.st_mtime_ns, st.st_size)


def file_stamps(paths: Iterable[str | os.PathLike[str]], relative_to: Path | None = None) -> tuple[Stamp, ...]:
    """The stamps of ``paths`` in their order, named by their path (relative to ``relative_to`` if
    given); files that cannot be read are left out."""
    out = []
    for path in paths:
        name = str(Path(path).relative_to(relative_to)) if relative_to is not None else None
        stamp = file_stamp(path, name)
        if stamp is not None:
            out.append(stamp)
    return tuple(out)


def folder_stamps(folder: Path, pattern: str = "*") -> tuple[Stamp, ...]:
    """The stamps of the files in ``folder`` matching ``pattern`` (sorted, named relative to the
    folder; ``**`` patterns reach subfolders); () when the folder does not exist."""
    if not folder.is_dir():
        return ()
    return file_stamps((p for p in sorted(folder.glob(pattern)) if p.is_file()), relative_to=folder)
