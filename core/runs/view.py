"""The one-run view of a results.json at any size (issue 27): what the Results page shows of a run,
read from the run's JSON once and kept beside it until the file changes.

A results.json of 150,000 samples is 230 MB; parsing it takes 10–30 s and 2 GB. What the page
needs of it is small or columnar: the run's headline fields (:func:`head_of`, a few kB), one row per
sample (:func:`table_of`: the samples table, the consistency details, the ranking score, GT ordinal
and per-restaurant counts the bootstrap resamples) and, for the drilldown, one sample at a time
(:func:`detail_of`: each sample's JSON and its SPEC §5.2 intermediate row, sorted by business_id
and read by row group). They are kept as ``.results.json.view.parquet`` (with the head in
``.results.json.view.json``) and ``.results.json.detail.parquet`` by
:func:`core.base.memo.stamped_frame`; every figure is the one the scored dict gives
(``tests/core/test_runs_view.py`` compares them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import polars as pl

from core.base.memo import stamped_frame, stamped_rows
from core.base.stamps import folder_stamps
from core.metrics import views as mv
from core.metrics.badges import facts_of
from core.metrics.bootstrap import COUNT_COLUMNS, SampleTable
from core.metrics.score import ranking_scores, sample_table
from core.runs.records import read_run_summary

VIEW, DETAIL = "view", "detail"
FORMAT = "run-view-3"  # bump when the kept columns change: older copies are then computed again
DETAIL_ROW_GROUP = 2048  # a drilldown reads one group of this many samples
_PER_SAMPLE = (("intermediate_metrics", "per_sample"), ("consistency_details", "per_sample"))
SHOWN_ORDER = ("correct", "gt_verdict", "name")  # the Results page lists the wrong ones first
_CONSISTENCY = ("method_verdict", "computed_verdict", "computed_score", "consistent", "evidences")
Loader = Callable[[], dict[str, Any]]
Pins = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class RunView:
    """A run as the Results page reads it: ``head`` (:func:`head_of`) and ``table`` (:func:`table_of`)."""

    head: dict[str, Any]
    table: pl.DataFrame


def head_of(scored: Mapping[str, Any], pins: Pins | None = None) -> dict[str, Any]:
    """The scored run without its samples and the per-sample lists of its metrics, with the badges'
    facts (:func:`core.metrics.badges.facts_of`) and what ``pins(scored)`` adds (e.g. the claims'
    ``answers_sha256``), computed while the samples are at hand."""
    head = {key: value for key, value in scored.items() if key != "results"}
    full = dict(head.get("unified_metrics_full") or {})
    for part, key in _PER_SAMPLE:
        if isinstance(full.get(part), Mapping):
            full[part] = {k: v for k, v in full[part].items() if k != key}
    if "unified_metrics_full" in head:
        head["unified_metrics_full"] = full
    head["facts"] = facts_of(scored)
    head.update(pins(scored) if pins is not None else {})
    return head


def _scale(scored: Mapping[str, Any]) -> list[str]:
    return list(scored.get("verdict_scale") or ["Low Risk", "High Risk", "Critical Risk"])


def table_of(scored: Mapping[str, Any]) -> pl.DataFrame:
    """One row per sample in the run's order: :func:`core.metrics.views.samples`' columns, ``judged``
    (GT verdict in the scale), ``gt_ordinal``, ``rank_score`` (SPEC §5.1, over the judged samples),
    the :data:`~core.metrics.bootstrap.COUNT_COLUMNS` of :func:`~core.metrics.score.sample_table`
    (``n_*``), ``shown_order`` (the row's place in the page's order, :data:`SHOWN_ORDER`),
    ``score_all`` (the ranking score over every sample, as
    :func:`core.release.run_figures.samples_frame` gives it) and the consistency details (:func:`core.metrics.views.consistency`, ``cons_order``
    their order; null for a sample without them)."""
    samples = mv.samples(scored)
    scale = _scale(scored)
    judged = samples["gt_verdict"].is_in(scale).fill_null(False)
    rows = np.flatnonzero(judged.to_numpy())
    n = samples.height
    st = sample_table(scored)
    # sample_table's rows are the judged samples in the run's order: its GT ordinals and ranking
    # scores (SPEC §5.1, over the judged samples) are those of :func:`core.metrics.views.pr_curves`
    every, _source = ranking_scores(scored.get("results") or [], scale)  # over every sample (the claims' tables)
    columns: dict[str, Any] = {"judged": judged, "gt_ordinal": _scatter(n, rows, st.gt_ordinal),
                               "rank_score": _scatter(n, rows, st.score), "score_all": pl.Series(every, dtype=pl.Float64)}
    for j, name in enumerate(COUNT_COLUMNS):
        columns[f"n_{name}"] = _scatter(n, rows, st.counts[:, j])
    cons = mv.consistency(scored).drop("name").with_row_index("cons_order")
    shown = samples.with_row_index("i").sort(*SHOWN_ORDER, descending=False, nulls_last=False, maintain_order=True)
    columns["shown_order"] = pl.Series(np.argsort(shown["i"].to_numpy(), kind="stable"))
    return (samples.with_columns(**{k: pl.Series(k, v) if not isinstance(v, pl.Series) else v.alias(k)
                                    for k, v in columns.items()})
            .join(cons, on="business_id", how="left", maintain_order="left"))


def _scatter(n: int, rows: np.ndarray, values: Any) -> pl.Series:
    out = np.full(n, np.nan)
    out[rows] = np.asarray(values, dtype=float)
    return pl.Series(out).fill_nan(None)


def detail_of(scored: Mapping[str, Any]) -> pl.DataFrame:
    """business_id, the sample's JSON and its SPEC §5.2 intermediate row's JSON (null without one),
    sorted by business_id (the drilldown reads one row group)."""
    full = scored.get("unified_metrics_full") or {}
    inter = {r["business_id"]: r for r in (full.get("intermediate_metrics") or {}).get("per_sample") or []}
    results = scored.get("results") or []
    ids = [str(s.get("business_id")) for s in results]
    return pl.DataFrame({"business_id": ids, "sample": [orjson.dumps(s).decode() for s in results],
                         "row": [orjson.dumps(inter[b]).decode() if b in inter else None for b in ids]},
                        schema={"business_id": pl.Utf8, "sample": pl.Utf8, "row": pl.Utf8}).sort("business_id")


def _context(path: Path) -> str:
    """What the view depends on besides the file: a run scored in its file, nothing; one scored when
    read (:func:`core.metrics.score_results` with its policy in force), the workspace's policies."""
    st = path.stat()
    summary = read_run_summary(path, st.st_size, st.st_mtime_ns)
    if summary is not None and summary.get("unified_scores") is not None:
        return FORMAT
    return f"{FORMAT} {folder_stamps(path.parents[2] / 'policies')!r}"  # runs/{id}/results.json


def run_view(path: Path, load: Loader, pins: Pins | None = None) -> RunView:
    """The view of the scored run at ``path`` (``load()`` gives the scored dict when the kept copy is
    missing or stale: then the detail copy is kept too, from the same read; ``pins``: see
    :func:`head_of`)."""
    made: dict[str, dict[str, Any]] = {}

    def scored() -> dict[str, Any]:
        if "run" not in made:
            made["run"] = load()
        return made["run"]

    context = _context(path)
    table, head = stamped_frame(path, VIEW, lambda: (table_of(scored()), head_of(scored(), pins)),
                               context=context)
    if "run" in made:
        stamped_frame(path, DETAIL, lambda: (detail_of(made["run"]), None), context=context,
                      row_group_size=DETAIL_ROW_GROUP)
    return RunView(head, table)


def run_sample(path: Path, business_id: str, load: Loader) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the sample of ``business_id``, its SPEC §5.2 intermediate row or None), read from the kept
    detail copy; a KeyError when the run has no such sample."""
    found = stamped_rows(path, DETAIL, lambda: (detail_of(load()), None), "business_id", business_id,
                         context=_context(path), row_group_size=DETAIL_ROW_GROUP)
    if not found.height:
        raise KeyError(business_id)
    row = found["row"][0]
    return orjson.loads(found["sample"][0]), None if row is None else orjson.loads(row)


def one_sample_run(head: Mapping[str, Any], sample: Mapping[str, Any], row: Mapping[str, Any] | None) -> dict[str, Any]:
    """A scored dict holding one sample and its intermediate row, for
    :func:`core.metrics.views.sample_detail`."""
    full = dict(head.get("unified_metrics_full") or {})
    full["intermediate_metrics"] = {**(full.get("intermediate_metrics") or {}), "per_sample": [row] if row else []}
    return {**head, "results": [dict(sample)], "unified_metrics_full": full}


# -- the one-run tables from the view -------------------------------------------------------------
def samples(view: RunView) -> pl.DataFrame:
    """:func:`core.metrics.views.samples` of the run."""
    return view.table.select("business_id", "name", "gt_verdict", "verdict", "risk_score", "correct", "error",
                             "tokens", "cost_usd")


def samples_shown(view: RunView) -> pl.DataFrame:
    """:func:`samples` in the order the Results page lists them (:data:`SHOWN_ORDER`, sorted once)."""
    return samples(RunView(view.head, view.table.sort("shown_order")))


def consistency(view: RunView) -> pl.DataFrame:
    """:func:`core.metrics.views.consistency` of the run."""
    return (view.table.filter(pl.col("cons_order").is_not_null()).sort("cons_order")
            .select("business_id", "name", *_CONSISTENCY))


def confusion(view: RunView) -> pl.DataFrame:
    """:func:`core.metrics.views.confusion` of the run."""
    verdict = pl.when(pl.col("verdict").is_null() | (pl.col("verdict") == "")).then(pl.lit("(none)"))
    return (view.table.filter("judged").select("gt_verdict", verdict.otherwise(pl.col("verdict")).alias("method_verdict"))
            .group_by("gt_verdict", "method_verdict").len("count").sort("gt_verdict", "method_verdict"))


def pr_curves(view: RunView) -> pl.DataFrame:
    """:func:`core.metrics.views.pr_curves` of the run."""
    judged = view.table.filter("judged")
    return mv.pr_points(judged["gt_ordinal"].to_numpy(), judged["rank_score"].to_numpy(), _scale(view.head))


def table_for_bootstrap(view: RunView) -> SampleTable:
    """:func:`core.metrics.score.sample_table` of the run (paired differences)."""
    judged = view.table.filter("judged")
    counts = judged.select([f"n_{c}" for c in COUNT_COLUMNS]).to_numpy().astype(float)
    return SampleTable(tuple(judged["business_id"].to_list()), judged["gt_ordinal"].to_numpy().astype(float),
                       judged["rank_score"].to_numpy().astype(float), counts, len(_scale(view.head)))


def samples_frame(view: RunView) -> pl.DataFrame:
    """:func:`core.release.run_figures.samples_frame` of the run (the paired table's input)."""
    error = pl.when(pl.col("error") == "").then(None).otherwise(pl.col("error")).alias("error")
    return view.table.select("business_id", "name", "gt_verdict", "verdict", "correct",
                             pl.col("score_all").alias("score"), error)


BUCKETS = ("newly failing", "newly fixed", "still failing", "still right")
GT_DIFFERS = "GT differs"


def buckets(base: RunView, other: RunView) -> pl.DataFrame:
    """:func:`core.metrics.views.buckets` of two runs (the restaurants both judged, in ``other``'s order)."""
    a = base.table.filter("judged").select("business_id", pl.col("correct").fill_null(False).alias("was"),
                                           pl.col("gt_verdict").alias("baseline_gt_verdict"),
                                           pl.col("verdict").alias("baseline_verdict"))
    b = other.table.filter("judged").select("business_id", "name", "gt_verdict", "verdict",
                                            pl.col("correct").fill_null(False).alias("now"))
    both = b.join(a, on="business_id", how="inner", maintain_order="left")
    bucket = (pl.when(pl.col("gt_verdict") != pl.col("baseline_gt_verdict")).then(pl.lit(GT_DIFFERS))
              .when(pl.col("was") & pl.col("now")).then(pl.lit(BUCKETS[3]))
              .when(pl.col("was")).then(pl.lit(BUCKETS[0]))
              .when(pl.col("now")).then(pl.lit(BUCKETS[1])).otherwise(pl.lit(BUCKETS[2])))
    return both.select(bucket.alias("bucket"), "business_id", "name", "gt_verdict", "baseline_gt_verdict",
                       "baseline_verdict", "verdict")
