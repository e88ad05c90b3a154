"""How sure each GT verdict is, shaped for the Ground truth page (issue 28).

A *source* of the judge's error is a judge audit of the dataset and task (``audit:NAME``, its
consensus: :mod:`core.ground_truth.audit.report`) or a confusion file in the workspace's ``confusion/``
folder (``file:NAME.json``). :func:`probabilities` carries it into every verdict
(:func:`core.ground_truth.uncertainty.verdict_probabilities`); the page shows P(verdict) per
restaurant and K, a paler grid cell for a less sure verdict, and the uncertain restaurants per K.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from core.base.stamps import file_stamp
from core.ground_truth import k_label

if TYPE_CHECKING:
    from core.ground_truth.uncertainty import Confusion
    from core.workspace import Workspace

CONFUSION_DIR = "confusion"
UNCERTAIN_BELOW = 1.0 - 1e-9  # a verdict whose probability is below 1 (beyond rounding) is "uncertain"


def confusion_files(ws: Workspace) -> list[str]:
    """The confusion files of the workspace (``confusion/*.json``), by name."""
    folder = ws.root / CONFUSION_DIR
    return sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []


def audit_projects(ws: Workspace, dataset: str, task: str) -> list[str]:
    """The judge audits of ``dataset``/``task`` in the workspace's label store (none without one)."""
    # deferred: sqlalchemy and the label store (~350 ms), only needed when the workspace has one
    from core.labeling.items import list_projects
    from core.labeling.store import open_store, store_exists

    if not store_exists(ws.root):
        return []
    out = []
    for p in list_projects(open_store(ws.root)):
        plan = p.kind_spec.get("audit") if p.is_audit else None
        if isinstance(plan, dict) and plan.get("dataset") == dataset and plan.get("task") == task:
            out.append(p.name)
    return out


def sources(ws: Workspace, dataset: str, task: str) -> list[str]:
    """Every source the page offers: ``audit:NAME`` then ``file:NAME.json``."""
    return [f"audit:{n}" for n in audit_projects(ws, dataset, task)] + [f"file:{n}" for n in confusion_files(ws)]


def source_stamp(ws: Workspace, source: str) -> tuple:
    """What changes when the source's confusion may change (a cache key)."""
    kind, _, name = source.partition(":")
    if kind == "file":
        stamp = file_stamp(ws.root / CONFUSION_DIR / name, source)
        if stamp is None:
            raise FileNotFoundError(f"confusion file {name} is gone from {CONFUSION_DIR}/")
        return stamp
    # deferred: sqlalchemy and the label store (~350 ms), only needed for an audit source
    from core.labeling.items import get_project
    from core.labeling.store import answer_sql, open_store

    store = open_store(ws.root)
    return (source, answer_sql.audit_stamp(store, get_project(store, name).project_id))


def load_source(ws: Workspace, source: str, task: str, judge: str) -> Confusion:
    """The confusion of ``judge`` from ``source``.

    Raises:
        ValueError / DataError: an unknown source, an audit without that judge, a bad file (naming it).
    """
    # deferred: the GT engine (polars plans, numpy), only needed when a source is chosen
    from core.ground_truth.uncertainty import load_confusion
    from core.tasks import get_task

    kind, _, name = source.partition(":")
    spec = get_task(task, ws)
    if kind == "file":
        from core.workspace import check_name  # deferred: keeps this module's import light for doctests

        check_name("confusion file", name.removesuffix(".json"))
        return load_confusion(ws.root / CONFUSION_DIR / name, fields={f.name: f.values for f in spec.fields})
    if kind == "audit":
        # deferred: sqlalchemy and the label store (~350 ms), only needed for an audit source
        from core.ground_truth.audit.report import audit_confusion
        from core.labeling.store import open_store

        return audit_confusion(open_store(ws.root), ws, name, judge)
    raise ValueError(f"unknown confusion source {source!r}: expected audit:NAME or file:NAME.json")


def probabilities(ws: Workspace, dataset: str, task: str, judge: str, definition: Any, ks: Sequence[int | None],
                  confusion: Confusion, *, constants: dict[str, Any] | None = None) -> pl.DataFrame:
    """business_id, k, verdict, p (struct), p_verdict (of the point verdict), method of every
    restaurant and K (:func:`core.ground_truth.uncertainty.verdict_probabilities_ws`)."""
    from core.ground_truth.uncertainty import (
        verdict_probabilities_ws,  # deferred: the GT engine, only when shown
    )

    frame = verdict_probabilities_ws(ws, dataset, task, definition, list(ks), confusion, judge=judge,
                                     constants=constants)
    return frame.with_columns(p_verdict=pl.Series([row["p"][row["verdict"]] for row in frame.iter_rows(named=True)],
                                                  dtype=pl.Float64))


def uncertain_by_k(probs: pl.DataFrame, ks: Sequence[int | None]) -> pl.DataFrame:
    """K (text), restaurants, uncertain (P(verdict) < 1), and the least sure P, per K.

    >>> f = pl.DataFrame({"k": [25, 25, None], "p_verdict": [1.0, 0.75, 0.5]})
    >>> uncertain_by_k(f, [25, None]).rows()
    [('25', 2, 1, 0.75), ('all', 1, 1, 0.5)]
    """
    rows = []
    for k in ks:
        at = probs.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
        rows.append((k_label(k), at.height, int((at["p_verdict"] < UNCERTAIN_BELOW).sum()),
                     float(at["p_verdict"].cast(pl.Float64).to_numpy().min()) if at.height else None))
    return pl.DataFrame(rows, schema={"K": pl.Utf8, "restaurants": pl.Int64, "uncertain": pl.Int64,
                                      "lowest P(verdict)": pl.Float64}, orient="row")


def with_probability(table: pl.DataFrame, probs: pl.DataFrame, k: int | None) -> pl.DataFrame:
    """The primitives table of one K with ``P(verdict)`` after ``verdict`` and ``other verdicts`` (each
    other verdict's probability, where above 0)."""
    at = probs.filter((pl.col("k").is_null() if k is None else pl.col("k") == k)
                      & pl.col("business_id").is_in(table["business_id"].implode()))  # the rows shown only
    others = {r["business_id"]: ", ".join(f"{v} {p:.2f}" for v, p in r["p"].items() if p > 0 and v != r["verdict"])
              for r in at.iter_rows(named=True)}
    p = dict(at.select("business_id", "p_verdict").iter_rows())
    out = table.with_columns(pl.col("business_id").replace_strict(p, default=None, return_dtype=pl.Float64)
                             .alias("P(verdict)"),
                             pl.col("business_id").replace_strict(others, default="", return_dtype=pl.Utf8)
                             .alias("other verdicts"))
    cols = out.columns
    at_verdict = cols.index("verdict") + 1
    order = [*cols[:at_verdict], "P(verdict)", "other verdicts"]
    return out.select(order + [c for c in cols if c not in order])


def grid_probability(long: pl.DataFrame, probs: pl.DataFrame) -> pl.DataFrame:
    """The grid's long rows with ``p_verdict`` (P of each cell's verdict; 1 where not computed)."""
    p = probs.select("business_id", pl.col("k").cast(pl.Utf8).fill_null("all").alias("k_label"), "p_verdict")
    return long.join(p, on=["business_id", "k_label"], how="left").with_columns(pl.col("p_verdict").fill_null(1.0))


def threshold_rows(edge: dict[str, Any]) -> pl.DataFrame:
    """A knife edge's thresholds (:meth:`core.ground_truth.knife_edge.KnifeEdge.to_dict`) as a table:
    the verdict each condition leads to, the condition, its value, threshold, margin and whether it holds.

    >>> e = {"thresholds": [{"verdict": "High Risk", "text": "score ≥ 4", "value": 3.5, "threshold": 4.0,
    ...                      "margin": -0.5, "holds": False}]}
    >>> threshold_rows(e).row(0)
    ('High Risk', 'score ≥ 4', 3.5, 4.0, -0.5, 'no')
    """
    schema = {"verdict": pl.Utf8, "condition": pl.Utf8, "value": pl.Float64, "threshold": pl.Float64,
              "margin": pl.Float64, "holds": pl.Utf8}
    rows = [(t["verdict"], t["text"], t["value"], t["threshold"], t["margin"], "yes" if t["holds"] else "no")
            for t in edge["thresholds"]]
    return pl.DataFrame(rows, schema=schema, orient="row")


def flip_rows(edge: dict[str, Any]) -> pl.DataFrame:
    """Every change of every smallest flip: the verdict it leads to, the review (idx, id), the field,
    the judged value and the value it would take.

    >>> e = {"flips": {"Low Risk": [{"review_id": "r1", "idx": 3, "field": "incident_severity",
    ...                              "judged": "moderate", "value": "none"}]}}
    >>> flip_rows(e).row(0)
    ('Low Risk', 1, 3, 'r1', 'incident_severity', 'moderate', 'none')
    """
    schema = {"flips to": pl.Utf8, "changes": pl.Int64, "idx": pl.Int64, "review_id": pl.Utf8, "field": pl.Utf8,
              "judged": pl.Utf8, "would be": pl.Utf8}
    rows = [(verdict, len(changes), c["idx"], c["review_id"], c["field"], c["judged"], c["value"])
            for verdict, changes in edge["flips"].items() for c in changes]
    return pl.DataFrame(rows, schema=schema, orient="row")
