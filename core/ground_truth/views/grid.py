"""GT frames shaped for the Ground truth page: verdict grid, flips, score vs K, primitives, export.

Every function takes a GT frame of several K (``compute_gt_frame`` / ``compute_policy_gt_frame``
output; see :func:`with_score`) and returns a new polars frame or plain data. No Streamlit here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote_plus, urlencode

import polars as pl

from core.ground_truth import VERDICTS, Formula, Policy, get_definition, gt_filename, k_label
from core.ground_truth.export import gt_payload, with_addm_columns
from core.ground_truth.views.paging import display_name_expr, k_slices, name_frame, side_by_side

SORTS = ("Highest score", "Most verdict changes", "Name")
HIDDEN_COLUMNS = ("formula_version", "dataset", "task", "judge", "judgments_sha256", "incidents", "policy_id", "categories",
                  "_limit", "n_reviews", "n_reviews_stored", "short_of_k", "variant", "variant_constants_sha256")


def verdict_order(frame: pl.DataFrame, scale: Sequence[str] | None = None) -> list[str]:
    """The ordered verdict scale of a GT frame: ``scale`` (its definition's, mildest first; default
    Low/High/Critical Risk), then any other verdict the frame holds, alphabetically."""
    known = list(scale or VERDICTS)
    present = set(frame["verdict"].drop_nulls().unique().to_list()) if "verdict" in frame.columns else set()
    return [*known, *sorted(present - set(known))]


def distribution_table(frame: pl.DataFrame, scale: Sequence[str] | None = None) -> pl.DataFrame:
    """Restaurants per verdict and K for reading: K (text, all last), one column per verdict of
    the scale (full names), total.

    >>> f = pl.DataFrame({"k": [25, 25, None], "verdict": ["Low Risk", "High Risk", "Low Risk"]})
    >>> distribution_table(f).rows()
    [('25', 1, 1, 0, 2), ('all', 1, 0, 0, 1)]
    """
    verdicts = verdict_order(frame, scale)
    counts = frame.group_by("k").agg((pl.col("verdict") == v).sum().cast(pl.Int64).alias(v) for v in verdicts)
    counts = counts.with_columns(pl.sum_horizontal(verdicts).alias("total")).sort("k", nulls_last=True)
    return counts.select(pl.col("k").cast(pl.Utf8).fill_null("all").alias("K"), *verdicts, "total")


def with_score(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with a ``score`` column (a formula's final_risk_score, a policy's score)."""
    if "score" in frame.columns:
        return frame
    return frame.with_columns(pl.col("final_risk_score").cast(pl.Float64).alias("score"))


def k_order(ks: Sequence[int | None]) -> list[int | None]:
    """K values ascending with K = all last.

    >>> k_order([100, None, 25])
    [25, 100, None]
    """
    return sorted(set(ks), key=lambda k: (k is None, k or 0))


def column_of(k: int | None) -> str:
    """The grid column of one K: ``K25``, ``Kall``."""
    return f"K{k_label(k)}"


def display_names(frame: pl.DataFrame) -> dict[str, str]:
    """business_id -> name, with `` [id]`` appended where two restaurants share a name."""
    named = name_frame(frame)
    return dict(zip(named["business_id"].to_list(), named["name"].to_list(), strict=True))


def _per_restaurant(frame: pl.DataFrame) -> pl.DataFrame:
    """business_id, name, max_score, changes (verdict changes along K), path (e.g. Low(25) → High(50))."""
    f = with_score(frame).with_columns(
        pl.col("k").fill_null(2**62).alias("_k"),
    ).sort("business_id", "_k")
    step = (pl.col("verdict") + " (" + pl.col("k").cast(pl.Utf8).fill_null("all") + ")")
    return f.group_by("business_id", maintain_order=True).agg(
        pl.col("name").first(),
        pl.col("score").max().alias("max_score"),
        (pl.col("verdict") != pl.col("verdict").shift(1)).fill_null(False).sum().cast(pl.Int64).alias("changes"),
        step.str.join(" → ").alias("path"),
    )


def _joined_rows(f: pl.DataFrame, ks: list[int | None], rank_by: Sequence[str] | None,
                 names: Mapping[str, str] | None) -> pl.DataFrame:
    """:func:`verdict_grid`'s rows of a frame whose K do not line up (grouped and pivoted)."""
    wide = f.select("business_id", pl.col("k").fill_null(2**62).alias("_k"), "score").pivot(
        on="_k", index="business_id", values="score", sort_columns=True
    )
    wide = wide.rename({str(k if k is not None else 2**62): column_of(k) for k in ks})
    rows = _per_restaurant(f).join(wide, on="business_id", how="left")
    names = display_names(f) if names is None else names
    rows = rows.with_columns(pl.col("business_id").replace_strict(names, default=pl.col("name")).alias("name"))
    if rank_by:
        rank = {v: i for i, v in enumerate(rank_by)}
        top = f.group_by("business_id").agg(pl.col("verdict").replace_strict(rank, default=-1).max().alias("_rank"))
        return rows.join(top, on="business_id", how="left")
    return rows.with_columns(pl.lit(0).alias("_rank"))


GRID_ORDERS: dict[str, tuple[list[str], list[bool]]] = {  # sort name -> (columns, descending) of verdict_grid_rows
    "Highest score": (["_rank", "max_score", "name"], [True, True, False]),
    "Most verdict changes": (["changes", "max_score", "name"], [True, True, False]),
    "Name": (["name"], [False]),
}


def grid_columns(rows: pl.DataFrame) -> list[str]:
    """The columns :func:`verdict_grid` shows of :func:`verdict_grid_rows`' ``rows``."""
    return [c for c in rows.columns if c not in ("_rank", "_short", "_stored")]


def verdict_grid_rows(frame: pl.DataFrame, *, flips_only: bool = False, search: str = "",
                      rank_by: Sequence[str] | None = None, names: Mapping[str, str] | None = None,
                      keep_hidden: bool = False) -> pl.DataFrame:
    """:func:`verdict_grid`'s rows in the frame's order, with ``_rank`` (sort them by
    :data:`GRID_ORDERS`, or page them with :func:`~core.ground_truth.views.paging.sorted_page`)."""
    f = with_score(frame)
    ks = k_order(f["k"].unique().to_list())
    parts = k_slices(f, ks)
    if parts is not None:  # every K holds the same restaurants in the same order: columns side by side
        rank = {v: i for i, v in enumerate(rank_by)} if rank_by else None
        rows = side_by_side(parts, ks, [column_of(k) for k in ks], rank)
        if names is not None:
            rows = rows.with_columns(pl.col("business_id").replace_strict(names, default=pl.col("name")).alias("name"))
    else:
        rows = _joined_rows(f, ks, rank_by, names)
    if flips_only:
        rows = rows.filter(pl.col("changes") > 0)
    if search.strip():
        rows = rows.filter(pl.col("name").str.to_lowercase().str.contains(search.strip().lower(), literal=True))
    extra = [c for c in ("_short", "_stored") if keep_hidden and c in rows.columns]
    return rows.select("name", "path", "changes", "max_score", *[column_of(k) for k in ks], "business_id", "_rank",
                       *extra)


def verdict_grid(frame: pl.DataFrame, *, flips_only: bool = False, sort: str = "Highest score",
                 search: str = "", rank_by: Sequence[str] | None = None,
                 names: Mapping[str, str] | None = None, keep_hidden: bool = False) -> pl.DataFrame:
    """One row per restaurant: name, verdict path, changes, max_score, the score at each K (``K25``…).

    Args:
        flips_only: keep restaurants whose verdict changes with K.
        sort: one of :data:`SORTS` (ties keep the frame's order).
        search: keep names containing this text (case-insensitive).
        rank_by: an ordered verdict scale (mildest first): "Highest score" then ranks restaurants by
            their highest verdict at any K (for a rule policy, whose score is always 0).
        names: ``display_names(frame)`` when the caller has it.
        keep_hidden: also ``_short`` (fewer reviews stored than some K) and ``_stored`` (reviews
            stored), when the frame lines up by K (:func:`~core.ground_truth.views.paging.k_slices`).
    """
    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r}; valid: {', '.join(SORTS)}")
    rows = verdict_grid_rows(frame, flips_only=flips_only, search=search, rank_by=rank_by, names=names,
                             keep_hidden=keep_hidden)
    by, descending = GRID_ORDERS[sort]
    return rows.sort(by, descending=descending, maintain_order=True).drop("_rank")


def grid_long(frame: pl.DataFrame, business_ids: Sequence[str] | None = None,
              names: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Long rows for the heat map: business_id, name, k, k_label, verdict, score (restaurants in
    ``business_ids`` order when given); ``names``: ``display_names(frame)`` when the caller has it."""
    f = with_score(frame)
    names = display_names(f) if names is None else names
    if business_ids is not None:
        pos = {b: i for i, b in enumerate(business_ids)}
        f = f.filter(pl.col("business_id").is_in(list(business_ids))).with_columns(
            pl.col("business_id").replace_strict(pos, return_dtype=pl.Int64).alias("row")
        )
    else:
        f = f.with_columns(pl.lit(0, pl.Int64).alias("row"))
    short = pl.col("short_of_k") if "short_of_k" in f.columns else pl.lit(False)
    return f.select(
        "business_id", pl.col("business_id").replace_strict(names, default=pl.col("name")).alias("name"),
        "k", pl.col("k").cast(pl.Utf8).fill_null("all").alias("k_label"), "verdict",
        pl.col("score").cast(pl.Float64), "row", short.alias("short"),
    ).sort("row", pl.col("k").fill_null(2**62))


def flips(frame: pl.DataFrame) -> pl.DataFrame:
    """Restaurants whose verdict changes with K: name, path, changes, max_score, business_id."""
    return verdict_grid(frame, flips_only=True, sort="Most verdict changes").select(
        "name", "path", "changes", "max_score", "business_id")


def score_series(frame: pl.DataFrame, business_id: str) -> pl.DataFrame:
    """One restaurant's k, k_label, score and verdict, K ascending (all last)."""
    rows = with_score(frame).filter(pl.col("business_id") == business_id)
    if rows.height == 0:
        raise ValueError(f"no restaurant with business_id {business_id!r} in this GT")
    return rows.select("k", pl.col("k").cast(pl.Utf8).fill_null("all").alias("k_label"),
                       pl.col("score").cast(pl.Float64), "verdict").sort(pl.col("k").fill_null(2**62))


PRIMITIVE_ORDER: tuple[list[str], list[bool]] = (["score", "name"], [True, False])  # highest score first, then name


def primitive_rows(frame: pl.DataFrame, k: int | None) -> pl.DataFrame:
    """:func:`primitive_table` in the frame's order (page it with
    :func:`~core.ground_truth.views.paging.sorted_page` by :data:`PRIMITIVE_ORDER`)."""
    rows = with_score(frame).filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
    keep = [c for c in rows.columns if c not in (*HIDDEN_COLUMNS, "business_id", "name", "k", "verdict", "score",
                                                  "final_risk_score")]
    return rows.select(display_name_expr(), "verdict", "score", *keep, "business_id")


def primitive_table(frame: pl.DataFrame, k: int | None) -> pl.DataFrame:
    """Every restaurant at one K with every primitive: name, verdict, score, the record fields
    (formula) or counts (policy), business_id; highest score first (ties in the frame's order)."""
    by, descending = PRIMITIVE_ORDER
    return primitive_rows(frame, k).sort(by, descending=descending, maintain_order=True)


def trace_params(dataset: str, task: str, definition: str, k: int | None, business_id: str,
                 judge: str | None = None) -> dict[str, str]:
    """The query parameters of a Trace page link (judge only when not the default)."""
    params = {"dataset": dataset, "task": task, "formula": definition, "k": k_label(k), "business_id": business_id}
    if judge:
        params["judge"] = judge
    return params


def trace_url(dataset: str, task: str, definition: str, k: int | None, business_id: str,
              judge: str | None = None) -> str:
    """A relative link to the Trace page (``trace?dataset=…``), for link columns and sharing.

    >>> trace_url("demo", "G1a", "v1", 50, "abc")
    'trace?dataset=demo&task=G1a&formula=v1&k=50&business_id=abc'
    """
    return trace_urls(dataset, task, definition, k, [business_id], judge)[0]


_URL_SAFE = re.compile(r"[A-Za-z0-9_.~-]*").fullmatch  # what quote_plus leaves as it is (Yelp ids): 10x faster


def trace_urls(dataset: str, task: str, definition: str, k: int | None, business_ids: Sequence[str],
               judge: str | None = None) -> list[str]:
    """Relative links to the Trace page of each of ``business_ids``, the query of
    :func:`trace_params` (the shared parameters encoded once).

    >>> trace_urls("demo", "G1a", "v1", None, ["a b", "c"], "j")
    ['trace?dataset=demo&task=G1a&formula=v1&k=all&business_id=a+b&judge=j', 'trace?dataset=demo&task=G1a&formula=v1&k=all&business_id=c&judge=j']
    """
    head = "trace?" + urlencode({"dataset": dataset, "task": task, "formula": definition, "k": k_label(k)})
    tail = "&" + urlencode({"judge": judge}) if judge else ""
    return [f"{head}&business_id={b if _URL_SAFE(b) else quote_plus(b)}{tail}" for b in map(str, business_ids)]


def thresholds(definition: Any, constants: dict[str, Any] | None = None) -> list[tuple[str, float]]:
    """(verdict, lowest score giving it) of a formula or point policy, ascending; [] for rule policies."""
    d = get_definition(definition, None)
    if isinstance(d, Formula):
        c = d.resolve_constants(constants)
        return [(VERDICTS[1], float(c["HIGH_THRESHOLD"])), (VERDICTS[2], float(c["CRITICAL_THRESHOLD"]))]
    # "score ≥" rules only (the chart labels a line "verdict ≥ value"); a "score ≤" rule is not drawn
    found = [(r.verdict, c.score_at_least) for r in d.rules for c in r.conditions if c.score_at_least is not None]
    return sorted(((v, float(s)) for v, s in found), key=lambda t: t[1])


def score_thresholds(definition: Any, ks: Sequence[int | None], constants: dict[str, Any] | None = None,
                     ) -> pl.DataFrame:
    """Every score threshold of a formula or policy at each K, for the score chart: verdict, op
    ("≥" or "≤"), k_label, y, constant (True when the threshold is the same at every K).

    A policy's "score ≥" and "score ≤" rules are both listed, with their per-K thresholds; a rule
    policy's count conditions are not scores (the Trace page shows them against their thresholds).

    >>> score_thresholds("v1", [25, None]).select("verdict", "op", "k_label", "y").rows()[:2]
    [('High Risk', '≥', '25', 4.0), ('High Risk', '≥', 'all', 4.0)]
    """
    d = get_definition(definition, None)
    labels = [k_label(k) for k in ks]
    lines: list[tuple[str, str, list[float]]] = []
    if isinstance(d, Formula):
        c = d.resolve_constants(constants)
        lines = [(VERDICTS[1], "≥", [float(c["HIGH_THRESHOLD"])] * len(ks)),
                 (VERDICTS[2], "≥", [float(c["CRITICAL_THRESHOLD"])] * len(ks))]
    else:
        for rule in d.rules:
            for cond in rule.conditions:
                if cond.is_score:
                    op = "≤" if cond.score_at_most is not None else "≥"
                    lines.append((rule.verdict, op, [cond.threshold(k) for k in ks]))
    rows = [{"verdict": v, "op": op, "k_label": lab, "y": y, "constant": len(set(ys)) == 1}
            for v, op, ys in lines for lab, y in zip(labels, ys, strict=True)]
    schema = {"verdict": pl.String, "op": pl.String, "k_label": pl.String, "y": pl.Float64, "constant": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)


def is_scored(definition: Formula | Policy) -> bool:
    """True for a formula or a policy with points; False for a rule policy, whose score is always 0."""
    return isinstance(definition, Formula) or bool(definition.has_scoring)


def verdict_scale(definition: Formula | Policy) -> tuple[str, ...]:
    """The ordered verdict scale (lowest first) of a formula or policy."""
    return VERDICTS if isinstance(definition, Formula) else definition.verdicts


def export_document(frame: pl.DataFrame, *, task: str, definition: str | Formula | Policy, k: int | None, layout: str,
                    judgments: pl.DataFrame | None = None, restaurants: pl.DataFrame | None = None,
                    name: str | None = None, constants: Mapping[str, Any] | None = None) -> tuple[str, bytes]:
    """(file name, JSON bytes) of the GT of one K in the xnot or ADDM layout (SPEC §3.3/§3.4).

    A formula written in the ADDM layout needs ``judgments`` and ``restaurants`` (its incidents,
    categories and review counts are listed), as ``python -m core gt --format addm`` writes them.
    ``name`` (a saved variant's) names the file instead of ``definition``.
    """
    if layout not in ("xnot", "addm"):
        raise ValueError(f"unknown layout {layout!r}; valid: xnot, addm")
    rows = frame.filter(pl.col("k").is_null() if k is None else pl.col("k") == k)
    if rows.height == 0:
        raise ValueError(f"no GT rows at K={k_label(k)}")
    d = get_definition(definition, None)
    if layout == "addm" and isinstance(d, Formula):
        if judgments is None or restaurants is None:
            raise ValueError("the ADDM layout of a formula GT needs the judgments and the restaurants "
                             "(to list incidents, categories and review counts)")
        rows = with_addm_columns(rows, judgments, restaurants, d.name, [k], constants=constants)
    payload = gt_payload(rows, layout=layout, task=task, k=k, policy=None if isinstance(d, Formula) else d)
    text = json.dumps(payload, indent=2, ensure_ascii=False, default=str)
    return gt_filename(name or d.name, k, layout), text.encode("utf-8")


def compare_distributions(committed: pl.DataFrame, whatif: pl.DataFrame,
                          scale: Sequence[str] | None = None) -> pl.DataFrame:
    """Long verdict counts per K of both frames: k, k_label, verdict, count, version
    ("committed" / "what-if"); ``scale``: the definition's verdicts (default Low/High/Critical Risk)."""
    parts = []
    for version, frame in (("committed", committed), ("what-if", whatif)):
        counts = frame.group_by("k", "verdict").len("count")
        grid = frame.select("k").unique().join(pl.DataFrame({"verdict": verdict_order(frame, scale)}), how="cross")
        parts.append(grid.join(counts, on=["k", "verdict"], how="left", nulls_equal=True)
                     .with_columns(pl.col("count").fill_null(0).cast(pl.Int64), pl.lit(version).alias("version")))
    out = pl.concat(parts)
    return out.select("k", pl.col("k").cast(pl.Utf8).fill_null("all").alias("k_label"), "verdict", "count",
                      "version").sort(pl.col("k").fill_null(2**62), "version", "verdict")


def verdict_moves(committed: pl.DataFrame, whatif: pl.DataFrame) -> pl.DataFrame:
    """Restaurant × K whose verdict differs between the committed GT and the what-if:
    name, k_label, committed, what_if, score_committed, score_what_if, business_id."""
    a = with_score(committed).select("business_id", "name", "k", "verdict", "score")
    b = with_score(whatif).select("business_id", "k", pl.col("verdict").alias("what_if"),
                                  pl.col("score").alias("score_what_if"))
    both = a.join(b, on=["business_id", "k"], how="inner", nulls_equal=True)
    moved = both.filter(pl.col("verdict") != pl.col("what_if")).sort("name", pl.col("k").fill_null(2**62))
    return moved.select(
        "name", pl.col("k").cast(pl.Utf8).fill_null("all").alias("k_label"), pl.col("verdict").alias("committed"),
        "what_if", pl.col("score").alias("score_committed"), "score_what_if", "business_id",
    )
