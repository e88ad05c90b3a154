"""Compare two judgment sets of one dataset and task: fields, then the GT verdicts they produce.

GT is only as good as the judgments under it (the original benchmark found 78 % verdict agreement
between two models judging the same reviews). :func:`compare_judges` answers, for judges A and B:

- on the reviews both judged, each field's agreement, Cohen's κ and confusion matrix (rows A,
  columns B, over the task's enum in its order);
- the reviews only one of them judged;
- for each formula or policy and K: verdict agreement, the verdict confusion matrix, the mean
  absolute score difference and the restaurants whose verdict differs, each with the reviews
  (idx < K) whose judgments differ, the causes.

Judgments are compared after human overrides (the values GT uses); a judgment with a parse error
counts as judged with null fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from core.ground_truth import compute_gt, get_definition, list_formulas, list_policies, normalize_ks
from core.judgments import load_judgments
from core.tasks import get_task
from core.workspace import Workspace

KEY = ["business_id", "idx"]


def cohen_kappa(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any]) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e) of two raters over ``labels``; None when undefined.

    p_o is the observed agreement, p_e the agreement expected from the two marginals. κ is
    undefined (None) with no items, and 1.0 when both raters always give one and the same label.

    >>> cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"], ["x", "y"])  # p_o=.75, p_e=.5
    0.5
    >>> cohen_kappa(["x", "x"], ["x", "x"], ["x", "y"])
    1.0
    """
    if len(a) != len(b):
        raise ValueError(f"a and b differ in length: {len(a)} != {len(b)}")
    if not len(a):
        return None
    cm = confusion(a, b, labels).astype(float)
    n = cm.sum()
    p_o = np.trace(cm) / n
    p_e = float((cm.sum(axis=1) * cm.sum(axis=0)).sum() / n**2)
    if p_e == 1.0:
        return 1.0 if p_o == 1.0 else None
    return float((p_o - p_e) / (1 - p_e))


def confusion(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any]) -> np.ndarray:
    """Counts ``m[i, j]`` of items A labelled ``labels[i]`` and B ``labels[j]`` (others ignored).

    >>> confusion(["x", "y", "y"], ["x", "x", "y"], ["x", "y"]).tolist()
    [[1, 0], [1, 1]]
    """
    index = {label: i for i, label in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for x, y in zip(a, b, strict=True):
        if x in index and y in index:
            m[index[x], index[y]] += 1
    return m


def _fields_frame(ws: Workspace, dataset: str, task: str, judge: str) -> pl.DataFrame:
    spec = get_task(task, ws)
    df = load_judgments(ws, dataset, task, judge)
    return df.select("business_id", "idx", "review_id", "name", *spec.field_names)


def compare_fields(a: pl.DataFrame, b: pl.DataFrame, fields: Sequence[str],
                   enums: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Per-field agreement, κ and confusion on the reviews in both frames, and the reviews in one only."""
    both = a.join(b, on=KEY, how="inner", suffix="_b")
    out: dict[str, Any] = {"n_both": both.height, "fields": {}}
    for field in fields:
        x, y = both[field].to_list(), both[f"{field}_b"].to_list()
        labels = list(enums.get(field) or sorted({v for v in x + y if v is not None}))
        agree = sum(1 for p, q in zip(x, y, strict=True) if p == q)
        out["fields"][field] = {
            "labels": labels,
            "agreement": agree / len(x) if x else None,
            "kappa": cohen_kappa(x, y, labels),
            "confusion": confusion(x, y, labels).tolist(),
        }
    keep = ["business_id", "idx", "review_id", "name"]
    out["only_a"] = a.join(b, on=KEY, how="anti").select(keep).to_dicts()
    out["only_b"] = b.join(a, on=KEY, how="anti").select(keep).to_dicts()
    return out


def _score_column(frame: pl.DataFrame) -> str:
    return "final_risk_score" if "final_risk_score" in frame.columns else "score"


def _mean_abs(diff: pl.Series) -> float | None:
    """Mean of |diff|, None for an empty series."""
    return float(diff.abs().cast(pl.Float64).mean() or 0.0) if len(diff) else None  # type: ignore[arg-type]


def _differences(a: pl.DataFrame, b: pl.DataFrame, fields: Sequence[str], business_id: str,
                 k: int | None) -> list[dict[str, Any]]:
    """The reviews of one restaurant (idx < k) whose judgments differ, with both values of each field."""
    sel = [pl.col("business_id") == business_id]
    if k is not None:
        sel.append(pl.col("idx") < k)
    both = a.filter(*sel).join(b.filter(*sel), on=KEY, how="full", suffix="_b", coalesce=True)
    out = []
    for row in both.sort("idx").iter_rows(named=True):
        changed = {f: {"a": row.get(f), "b": row.get(f"{f}_b")} for f in fields if row.get(f) != row.get(f"{f}_b")}
        if changed:
            out.append({"idx": row["idx"], "review_id": row.get("review_id") or row.get("review_id_b"),
                        "fields": changed})
    return out


def compare_verdicts(ws: Workspace, dataset: str, task: str, a: str, b: str, definition: str,
                     ks: Sequence[int | None], *, frames: tuple[pl.DataFrame, pl.DataFrame] | None = None,
                     ) -> list[dict[str, Any]]:
    """For each K: verdict agreement, confusion, mean |score A − score B|, differing restaurants."""
    spec = get_task(task, ws)
    verdicts = list(getattr(get_definition(definition, ws), "verdicts", None) or spec.verdict_scale)
    ja = load_judgments(ws, dataset, task, a)
    jb = load_judgments(ws, dataset, task, b)
    fa, fb = frames or (ja, jb)
    ga = compute_gt(ws, dataset, task, definition, list(ks), judgments=ja)
    gb = compute_gt(ws, dataset, task, definition, list(ks), judgments=jb)
    score = _score_column(ga)
    joined = ga.select("business_id", "name", "k", "verdict", score).join(
        gb.select("business_id", "k", "verdict", score), on=["business_id", "k"], how="inner", suffix="_b",
        nulls_equal=True,
    )
    out = []
    for k in ks:
        part = joined.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
        va, vb = part["verdict"].to_list(), part["verdict_b"].to_list()
        differ = part.filter(pl.col("verdict") != pl.col("verdict_b")).sort("name")
        out.append({
            "definition": definition, "k": k, "n_restaurants": part.height,
            "verdict_agreement": (sum(p == q for p, q in zip(va, vb, strict=True)) / len(va)) if va else None,
            "verdict_kappa": cohen_kappa(va, vb, verdicts),
            "labels": verdicts,
            "confusion": confusion(va, vb, verdicts).tolist(),
            "mean_abs_score_diff": _mean_abs(part[score] - part[f"{score}_b"]),
            "differing": [
                {"business_id": r["business_id"], "name": r["name"], "verdict_a": r["verdict"],
                 "verdict_b": r["verdict_b"], "score_a": r[score], "score_b": r[f"{score}_b"],
                 "reviews": _differences(fa, fb, spec.field_names, r["business_id"], k)}
                for r in differ.iter_rows(named=True)
            ],
        })
    return out


def compare_judges(ws: Workspace, dataset: str, task: str, a: str, b: str, *,
                   definitions: Sequence[str] | None = None, ks: Any = (25, 50, 100, 200)) -> dict[str, Any]:
    """Fields and verdicts of judges ``a`` and ``b`` compared (see the module docstring).

    ``definitions`` defaults to every formula and policy of the task.
    """
    if a == b:
        raise ValueError(f"compare two different judges (both are {a!r})")
    spec = get_task(task, ws)
    fa, fb = _fields_frame(ws, dataset, task, a), _fields_frame(ws, dataset, task, b)
    enums = {f.name: list(f.values) for f in spec.fields}
    report: dict[str, Any] = {
        "dataset": dataset, "task": task, "a": a, "b": b,
        "n_a": fa.height, "n_b": fb.height,
        **compare_fields(fa, fb, spec.field_names, enums),
    }
    klist = normalize_ks(ks)
    names = list(definitions) if definitions else _definitions_of(ws, task)
    report["verdicts"] = [row for name in names
                          for row in compare_verdicts(ws, dataset, task, a, b, name, klist, frames=(fa, fb))]
    return report


def _definitions_of(ws: Workspace, task: str) -> list[str]:
    return [f.name for f in list_formulas(task)] + [p.name for p in list_policies(ws, task)]
