"""GT frames one K at a time, kept beside the judge's log (issue 27).

A frame of several K is the K's frames one after the other (each K is computed on its own: the
rows of K = 50 do not depend on the other K asked for), so adding a K to the Ground truth page
computes that K only. Each K's frame of a committed formula or policy (or saved variant) is also
kept as Parquet beside the judge's log (:func:`core.base.memo.stamped_frame`), with the data stamp,
the variants stamp and the stamp of the GT code as its context: a new server process reads it in
milliseconds instead of loading 1 M judgments and computing. What-if changes are never kept on disk.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl
import streamlit as st

import core.ground_truth
from core.base.memo import stamped_frame
from core.base.stamps import file_stamps, folder_stamps
from core.workspace import Workspace

MEMO_VERSION = 1  # of the frames kept beside a log: a new one when their columns change
Changes = tuple[tuple[str, float], ...]
Compute = Callable[[int | None], pl.DataFrame]  # the frame of one K
_LOCK = threading.Lock()


def code_stamp() -> str:
    """The digest of the GT code's files and of the page loader that adds the review counts
    (:func:`core.ui.cache.frame_of`): a kept frame is computed again after an upgrade."""
    stamps = (*folder_stamps(Path(core.ground_truth.__file__).parent, "**/*.py"),
              *file_stamps([Path(__file__).with_name("cache.py")]))
    return hashlib.sha256(repr(stamps).encode("utf-8")).hexdigest()


@st.cache_resource(max_entries=64, show_spinner=False)  # shared: K -> that K's frame, filled as K are asked for
def _store(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str, changes: Changes,
           vstamp: str) -> dict[int | None, pl.DataFrame]:
    return {}


def _kept(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str,
          k: int | None, vstamp: str, compute: Compute) -> pl.DataFrame:
    """One K's frame, read from beside the judge's log while everything it depends on is unchanged."""
    # deferred: core.judgments pulls in pandas (~500 ms), only needed when a frame is asked for
    from core.judgments import resolve_judge
    from core.judgments.store import judgment_path

    ws = Workspace(Path(root))
    name = resolve_judge(ws, dataset, task, judge)
    context = repr((MEMO_VERSION, name, stamp, definition, k, vstamp, code_stamp()))
    kind = "gt-" + hashlib.sha256(repr((definition, k)).encode("utf-8")).hexdigest()[:16]
    frame, _ = stamped_frame(judgment_path(ws, dataset, task, name), kind, lambda: (compute(k), None), context=context)
    return frame


def frame_at(root: str, dataset: str, task: str, judge: str | None, stamp: str, definition: str,
             ks: Sequence[int | None], changes: Changes, vstamp: str, compute: Compute) -> pl.DataFrame:
    """GT of every restaurant at ``ks`` (in that order): each K computed once by ``compute(k)`` (the
    frame of one K, :func:`core.ui.cache.frame_of`), kept beside the log when nothing is changed by
    what-if ``changes``."""
    store = _store(root, dataset, task, judge, stamp, definition, changes, vstamp)
    parts = []
    for k in ks:
        with _LOCK:
            part = store.get(k)
        if part is None:
            part = (compute(k) if changes
                    else _kept(root, dataset, task, judge, stamp, definition, k, vstamp, compute))
            with _LOCK:
                store[k] = part
        parts.append(part)
    return pl.concat(parts, how="vertical") if len(parts) > 1 else parts[0]
