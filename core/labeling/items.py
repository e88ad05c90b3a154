"""Labeling projects and their items (SPEC §6.1).

A project holds its guidelines (markdown), the scale labels of -1, 0 and +1, the target number
of raters per item (default 3), which item fields raters may see (the title ``prompt_title``
included: a title that carries a reference answer is hidden by leaving it out), the reservation
time, whether repeat audits are on, and the routing of extra raters: a ``target_spread`` beyond
which an item's raters disagree enough to get one more rater, up to ``max_raters``. Items are unique on (dataset, identifier, run_id) across the store;
importing an item that exists already skips it (imports are idempotent).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from core.base.errors import UnknownNameError
from core.base.progress import Progress
from core.base.settings import require_writable
from core.labeling import routing, sources
from core.labeling.answers import AnswerField, check_answer_fields, parse_answer_fields
from core.labeling.store import LabelStore
from core.labeling.store import catalog as sql
from core.workspace import Workspace, check_name

DEFAULT_SCALE_LABELS = ("Strongly negative", "Neutral", "Strongly positive")
ITEM_FIELDS = ("prompt_title", "dataset", "identifier", "run_id", "model_id")  # item columns a project may show
DEFAULT_VISIBLE_FIELDS = ("prompt_title",)
SETTINGS = ("guidelines", "scale_labels", "target_raters", "visible_fields", "reservation_seconds", "repeat_audits",
            "target_spread", "spread_measure", "max_raters")
# Never shown to raters, whatever the project says (SPEC §6.2 blinding: no model score).
BLINDED_FIELDS = frozenset(
    {"score", "scorer_model", "model_score", "risk_score", "verdict", "gt_verdict", "correct", "consensus"}
)
_CHUNK = 1000


@dataclass(frozen=True)
class Project:
    """One labeling project."""

    project_id: int
    name: str
    guidelines: str
    scale_labels: tuple[str, str, str]
    target_raters: int
    visible_fields: tuple[str, ...]
    reservation_seconds: int
    repeat_audits: bool
    created_at: datetime
    target_spread: float | None = None  # None: no extra raters
    spread_measure: str = "range"
    max_raters: int | None = None
    kind: str = "rating"  # or "judgment_audit": raters answer ``answer_fields`` instead of a slider
    answer_fields: tuple[AnswerField, ...] = ()
    kind_spec: Mapping[str, Any] = field(default_factory=dict)  # an audit's plan (core.ground_truth.audit)

    @property
    def is_audit(self) -> bool:
        """True for a judgment audit (categorical answers, no score)."""
        return self.kind == "judgment_audit"

    @property
    def raters_cap(self) -> int:
        """The most raters an item may get: the target, or with routing on the cap (default target + 2)."""
        return routing.raters_cap(self.target_raters, self.target_spread, self.max_raters)


@dataclass
class ImportReport:
    """What an import did."""

    added: int = 0
    skipped: int = 0  # already in the store (same dataset, identifier, run_id)
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"added": self.added, "skipped": self.skipped, **self.details}


def project_from_row(row: Any) -> Project:
    """A :class:`Project` from its ``projects`` row."""
    return Project(
        project_id=row.project_id, name=row.name, guidelines=row.guidelines,
        scale_labels=(row.label_neg, row.label_zero, row.label_pos), target_raters=row.target_raters,
        visible_fields=tuple(json.loads(row.visible_fields or "[]")),
        reservation_seconds=row.reservation_seconds, repeat_audits=bool(row.repeat_audits),
        created_at=row.created_at, target_spread=row.target_spread, spread_measure=row.spread_measure or "range",
        max_raters=row.max_raters, kind=getattr(row, "kind", None) or "rating",
        answer_fields=parse_answer_fields(getattr(row, "answer_fields", None) or "[]"),
        kind_spec=json.loads(getattr(row, "kind_spec", None) or "{}"),
    )


def _check_routing(target_raters: int, target_spread: Any, spread_measure: Any, max_raters: Any) -> None:
    # deferred: the store's tables (SQLAlchemy) only when settings are checked
    from core.labeling.store.tables import SPREAD_MEASURES

    if target_spread is not None and (isinstance(target_spread, bool) or not isinstance(target_spread, int | float)
                                      or not 0 < target_spread <= 2):
        raise ValueError(f"target_spread must be a number in (0, 2] (or None), got {target_spread!r}")
    if spread_measure not in SPREAD_MEASURES:
        raise ValueError(f"invalid spread_measure {spread_measure!r}; valid: {', '.join(SPREAD_MEASURES)}")
    if max_raters is not None and (not isinstance(max_raters, int) or isinstance(max_raters, bool)
                                   or max_raters < target_raters):
        raise ValueError(f"max_raters must be an integer ≥ target_raters ({target_raters}), got {max_raters!r}")


def _check_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Validated column values of a project's settings (``values`` holds every one of SETTINGS)."""
    labels = tuple(str(x).strip() for x in values["scale_labels"])
    if len(labels) != 3 or not all(labels):
        raise ValueError(f"scale_labels needs three non-blank labels (for -1, 0, +1), got {labels!r}")
    target_raters, reservation_seconds = values["target_raters"], values["reservation_seconds"]
    if not isinstance(target_raters, int) or target_raters < 1:
        raise ValueError(f"target_raters must be a positive integer, got {target_raters!r}")
    if not isinstance(reservation_seconds, int) or reservation_seconds < 1:
        raise ValueError(f"reservation_seconds must be a positive integer, got {reservation_seconds!r}")
    fields = list(dict.fromkeys(str(f).strip() for f in values["visible_fields"] if str(f).strip()))
    blinded = sorted(set(fields) & BLINDED_FIELDS)
    if blinded:
        raise ValueError(f"fields {blinded} carry model scores or verdicts and are never shown to raters")
    _check_routing(target_raters, values["target_spread"], values["spread_measure"], values["max_raters"])
    return {
        "guidelines": str(values["guidelines"] or ""), "label_neg": labels[0], "label_zero": labels[1],
        "label_pos": labels[2], "target_raters": target_raters, "visible_fields": json.dumps(fields),
        "reservation_seconds": reservation_seconds, "repeat_audits": bool(values["repeat_audits"]),
        "target_spread": None if values["target_spread"] is None else float(values["target_spread"]),
        "spread_measure": values["spread_measure"], "max_raters": values["max_raters"],
    }


def create_project(
    store: LabelStore,
    name: str,
    *,
    guidelines: str = "",
    scale_labels: Iterable[str] = DEFAULT_SCALE_LABELS,
    target_raters: int = 3,
    visible_fields: Iterable[str] = DEFAULT_VISIBLE_FIELDS,
    reservation_seconds: int = 300,
    repeat_audits: bool = True,
    target_spread: float | None = None,
    spread_measure: str = "range",
    max_raters: int | None = None,
    answer_fields: Iterable[AnswerField] | None = None,
    kind_spec: Mapping[str, Any] | None = None,
    exist_ok: bool = False,
) -> Project:
    """Create a project (or, with ``exist_ok``, return the existing one unchanged).

    ``visible_fields`` lists what raters see besides the prompt body and the response: item
    columns (:data:`ITEM_FIELDS`, the title ``prompt_title`` among them) and metadata keys.
    With ``answer_fields`` the project is a *judgment audit*: raters answer each field (one value
    of its enum) instead of moving a slider; ``kind_spec`` keeps what made it (the audit's plan).
    An audit never routes extra raters (its disagreements go to adjudication).

    Raises:
        ValueError: a bad setting, or the project exists and ``exist_ok`` is False.
    """
    require_writable("create a labeling project")
    check_name("project", name)
    values = _check_settings({
        "guidelines": guidelines, "scale_labels": scale_labels, "target_raters": target_raters,
        "visible_fields": visible_fields, "reservation_seconds": reservation_seconds, "repeat_audits": repeat_audits,
        "target_spread": target_spread, "spread_measure": spread_measure, "max_raters": max_raters})
    if answer_fields is not None:
        fields = check_answer_fields(list(answer_fields))
        if target_spread is not None:
            raise ValueError("a judgment audit routes no extra raters (its ties go to adjudication): no target_spread")
        values.update(kind="judgment_audit", answer_fields=json.dumps([f.to_dict() for f in fields], ensure_ascii=False),
                      kind_spec=json.dumps(dict(kind_spec or {}), ensure_ascii=False, default=str))
    with store.write() as conn:
        row = sql.project_row(conn, name)
        if row is not None:
            if exist_ok:
                return project_from_row(row)
            raise ValueError(f"project {name!r} exists already")
        sql.insert_project(conn, {"name": name, "created_at": store.clock(), **values})
    return get_project(store, name)


def update_project(store: LabelStore, name: str, **changes: Any) -> Project:
    """Change settings of a project (any of :data:`SETTINGS`); the new ones apply from the next
    assignment or submission on, in every process (they are read under the project lock)."""
    require_writable("change a labeling project")
    current = get_project(store, name)
    unknown = set(changes) - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown project settings {sorted(unknown)}; valid: {', '.join(SETTINGS)}")
    values = _check_settings({name: changes.get(name, getattr(current, name)) for name in SETTINGS})
    if current.is_audit and values["target_spread"] is not None:
        raise ValueError("a judgment audit routes no extra raters (its ties go to adjudication): no target_spread")
    sql.update_project_row(store, current.project_id, values)
    if {"target_spread", "spread_measure", "max_raters", "target_raters"} & set(changes):
        routing.reevaluate(store, current.project_id)  # items already full may need a rater now
    return get_project(store, name)


def list_projects(store: LabelStore) -> list[Project]:
    """Every project, oldest first."""
    return [project_from_row(r) for r in sql.project_rows(store)]


def get_project(store: LabelStore, name: str) -> Project:
    """The project called ``name``.

    Raises:
        UnknownNameError: no such project (the message lists the existing ones).
    """
    with store.read() as conn:
        row = sql.project_row(conn, name)
        if row is None:
            raise UnknownNameError("labeling project", name, sql.project_names(conn))
    return project_from_row(row)


def add_items(
    store: LabelStore, project: Project, records: Iterable[dict[str, Any]], *, progress: Progress | None = None
) -> ImportReport:
    """Insert normalised item records into ``project`` in one transaction (existing keys are skipped).

    Records without ``created_at`` get the import time; the insertion order breaks ties, so
    "oldest first" follows the file order.
    """
    rows = []
    now = store.clock()
    for rec in records:
        check_name("dataset", rec["dataset"])  # it becomes a file name on export
        rows.append({
            "project_id": project.project_id, "dataset": rec["dataset"], "identifier": rec["identifier"],
            "run_id": rec.get("run_id") or "", "prompt_title": rec.get("prompt_title") or "",
            "prompt_body": rec.get("prompt_body") or "", "response_text": rec.get("response_text") or "",
            "model_id": rec.get("model_id"), "metadata": json.dumps(rec.get("metadata") or {}, ensure_ascii=False),
            "created_at": rec.get("created_at") or now, "n_raters": 0, "n_ratings": 0,
        })
    with store.write() as conn:
        store.lock_project(conn, project.project_id)
        before = sql.count_items(conn)
        for start in range(0, len(rows), _CHUNK):
            sql.insert_items_ignoring_existing(conn, store, rows[start:start + _CHUNK])
            if progress:
                progress(min(start + _CHUNK, len(rows)), len(rows), "items")
        added = sql.count_items(conn) - before
    return ImportReport(added=added, skipped=len(rows) - added)


def import_items_file(
    store: LabelStore, project: Project, path: str | Path, *, dataset: str | None = None, fmt: str = "auto",
    progress: Progress | None = None,
) -> ImportReport:
    """Import items from a file (item JSONL, ``results.json`` or ``run.jsonl``; see
    :mod:`core.labeling.sources`). ``dataset`` defaults to the project's name."""
    records = list(sources.parse_items_file(path, dataset=dataset or project.name, fmt=fmt))
    report = add_items(store, project, records, progress=progress)
    report.details["format"] = sources.detect_format(path) if fmt == "auto" else fmt
    return report


def import_dataset_reviews(
    store: LabelStore, project: Project, ws: Workspace, dataset: str, *, prompt: str = sources.DEFAULT_REVIEW_PROMPT,
    limit: int | None = None, seed: int = 0, contains: str | None = None, progress: Progress | None = None,
) -> ImportReport:
    """Import a dataset's reviews as items (see :func:`core.labeling.sources.dataset_review_items`)."""
    records = sources.dataset_review_items(ws, dataset, prompt=prompt, limit=limit, seed=seed, contains=contains)
    return add_items(store, project, records, progress=progress)


def item_count(store: LabelStore, project: Project) -> int:
    """Number of items in ``project``."""
    with store.read() as conn:
        return sql.count_items(conn, project.project_id)
