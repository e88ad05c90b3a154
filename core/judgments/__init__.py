"""Judgments as ground truth reads them: the store's latest judgment per review, human overrides on top.

The log itself (paths, appends, stale texts) is :mod:`core.judgments.store`, a task's judges and the GT
judge :mod:`core.judgments.catalog`, both re-exported here; human corrections are :mod:`core.judgments.overrides`. This module sits above both, so the
store never imports the overrides and the overrides never import this.
"""

from __future__ import annotations

import polars as pl

from core.judgments.catalog import (
    get_gt_judge,
    judgment_columns,
    list_judges,
    load_raw_judgments,
    resolve_judge,
    review_metadata,
    set_gt_judge,
    stale_judgments,
)
from core.judgments.overrides import apply_overrides as _apply_overrides
from core.judgments.store import (
    JUDGE_ID_MAX,
    KEY,
    META_COLUMNS,
    RETIRED_DIR,
    SETTINGS_FILE,
    append_judgments,
    check_judge_id,
    current_text_hashes,
    judge_file,
    judged_keys,
    judgment_path,
    latest,
    log_schema,
    now_iso,
    prune_stale,
    read_log,
    split_stale,
    stale_count,
)
from core.tasks import get_task
from core.workspace import Workspace

__all__ = [
    "JUDGE_ID_MAX",
    "KEY",
    "META_COLUMNS",
    "RETIRED_DIR",
    "SETTINGS_FILE",
    "append_judgments",
    "check_judge_id",
    "current_text_hashes",
    "get_gt_judge",
    "judge_file",
    "judged_keys",
    "judgment_columns",
    "judgment_path",
    "latest",
    "list_judges",
    "load_raw_judgments",
    "log_schema",
    "now_iso",
    "prune_stale",
    "read_log",
    "resolve_judge",
    "review_metadata",
    "set_gt_judge",
    "split_stale",
    "stale_count",
    "stale_judgments",
    "load_judgments",
]


def load_judgments(
    ws: Workspace, dataset: str, task: str, judge: str | None = None, *, apply_overrides: bool = True
) -> pl.DataFrame:
    """The latest judgment per review of one judge, review metadata joined, sorted by (business_id, idx).

    Columns: business_id, review_id, idx, date, stars, useful, name, categories, the task's
    schema fields, excerpt, parse_error, judge, overridden, override_id, prompt_version,
    created_at, confidence. ``judge=None`` takes the GT judge (:func:`resolve_judge`). With
    ``apply_overrides`` the active human overrides (:mod:`core.judgments.overrides`) replace the fields
    they correct and set ``overridden``; an override that leaves every field valid clears the
    row's ``parse_error``. Rows with ``parse_error`` set are returned; GT formulas skip them.
    """
    df = load_raw_judgments(ws, dataset, task, judge)
    if not apply_overrides:
        return df
    spec = get_task(task, ws)
    return _apply_overrides(ws, dataset, spec, df).select(judgment_columns(spec)).sort(list(KEY))
