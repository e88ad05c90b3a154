"""GT frames one K at a time, kept beside the judge's log (issue 27).

A frame of several K is the K's frames one after the other (each K is computed on its own: the
rows of K = 50 do not depend on the other K asked for), so adding a K to the Ground truth page
computes that K only. Each K's frame of a committed formula or policy (or saved variant) is also
kept as Parquet beside the judge's log (:func:`core.base.memo.stamped_frame`), with the data stamp,
the variants stamp and the stamp of the GT code as its context: a new server process reads it in
milliseconds instead of loading 1 M judgments and computing. What-if changes are never kept on disk.
With each K's frame go its counts (:mod:`core.ground_truth.views.counts`), made once with the frame
and kept with it, from which the page draws its verdict distribution and coverage warning.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl
import streamlit as st

import core.ground_truth
from core.base.memo import stamped_frame
from core.base.stamps import file_stamps
from core.ground_truth.views.counts import KCounts, k_counts
from core.workspace import Workspace

MEMO_VERSION = 1  # of the frames kept beside a log: a new one when their columns change
Changes = tuple[tuple[str, float], ...]
Compute = Callable[[int | None], pl.DataFrame]  # the frame of one K
_LOCK = threading.Lock()
_CORE = Path(core.ground_truth.__file__).parent.parent


def code_stamp() -> str:
    """The digest of the contents of the GT code's files and of the page loader that adds the review
    counts (:func:`core.ui.cache.frame_of`): a kept frame is computed again after an upgrade, and only
    then (another checkout of the same code, whose files have other times, reads it)."""
    files = [*sorted(p for p in Path(core.ground_truth.__file__).parent.glob("**/*.py") if p.is_file()),
             Path(__file__).with_name("cache.py")]
    return _content_digest(file_stamps(files, relative_to=_CORE))


@functools.lru_cache(maxsize=4)
def _content_digest(stamps: tuple[tuple[str, int, int], ...]) -> str:
    """sha256 over the names (relative to ``core/``) and bytes of the files, read once per state of
    the files (``stamps``)."""
    h = hashlib.sha256()
    for name, _mtime, _size in stamps:
        h.update(name.encode("utf-8") + b"\0" + (_CORE / name).read_bytes() + b"\0")
    return h.hexdigest()


@st.cache_resource(max_entries=64, show_spinner=False)  # shared: K -> that K's frame and counts, filled as K are asked for
def _store(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str, changes: Changes,
           vstamp: str) -> dict[int | None, tuple[pl.DataFrame, KCounts]]:
    return {}


def _kept(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str,
          k: int | None, vstamp: str, compute: Compute, code: str) -> tuple[pl.DataFrame, KCounts]:
    """One K's frame and its counts (:func:`~core.ground_truth.views.counts.k_counts`), read from beside
    the judge's log while everything they depend on is unchanged."""
    # deferred: core.judgments pulls in pandas (~500 ms), only needed when a frame is asked for
    from core.judgments import resolve_judge
    from core.judgments.store import judgment_path

    ws = Workspace(Path(root))
    name = resolve_judge(ws, dataset, task, judge)
    context = repr((MEMO_VERSION, name, stamp, definition, k, vstamp, code))  # code: code_stamp()
    kind = "gt-" + hashlib.sha256(repr((definition, k)).encode("utf-8")).hexdigest()[:16]

    def made() -> tuple[pl.DataFrame, KCounts]:
        frame = compute(k)
        return frame, k_counts(frame)

    frame, counts = stamped_frame(judgment_path(ws, dataset, task, name), kind, made, context=context,
                                  compression="uncompressed")  # 25 MB at 150,000 restaurants, read in 20 ms, not 300
    return frame, counts if isinstance(counts, dict) else k_counts(frame)


def frame_at(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str,
             ks: Sequence[int | None], changes: Changes, vstamp: str, compute: Compute) -> pl.DataFrame:
    """GT of every restaurant at ``ks`` (in that order): each K computed once by ``compute(k)`` (the
    frame of one K, :func:`core.ui.cache.frame_of`), kept beside the log when nothing is changed by
    what-if ``changes``."""
    store = _store(root, dataset, task, judge, stamp, definition, changes, vstamp)
    parts: list[pl.DataFrame] = []
    code: str | None = None
    for k in ks:
        with _LOCK:
            part = store.get(k)
        if part is None:
            if changes:
                frame = compute(k)
                part = (frame, k_counts(frame))
            else:
                code = code or code_stamp()  # once per call: ~60 files' stats
                part = _kept(root, dataset, task, judge, stamp, definition, k, vstamp, compute, code)
            with _LOCK:
                store[k] = part
        parts.append(part[0])
    return pl.concat(parts, how="vertical") if len(parts) > 1 else parts[0]


def counts_at(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str,
              ks: Sequence[int | None], changes: Changes, vstamp: str) -> dict[int | None, KCounts] | None:
    """The counts of each K of the frame :func:`frame_at` gave for the same arguments (in ``ks``
    order); None when one is no longer held (the caller counts the frame)."""
    store = _store(root, dataset, task, judge, stamp, definition, changes, vstamp)
    with _LOCK:
        held = [store.get(k) for k in ks]
    if any(part is None for part in held) or len(set(ks)) != len(ks):
        return None
    return {k: part[1] for k, part in zip(ks, held, strict=True) if part is not None}
