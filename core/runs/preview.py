"""``preview_run``: the pre-flight the Runs page shows, at any scale, without planning the run.

:func:`core.runs.plan.plan_run` loads every sample's reviews and computes the run's GT: 35 s and
3 GB at 150,000 restaurants (issue 27). The page needs only what it shows, and gets it from:

- the samples to run and the "K above the reviews stored" warning: the dataset's restaurant ids
  and how many reviews each has at positions below K (one group-by over the reviews' ids, kept
  while the dataset's files are as they were), with the run's own choice of samples
  (:func:`core.runs.plan.choose_ids`), so the counts are the run's;
- the GT: its lineage (version and words), not its verdicts (:func:`core.runs.gt.gt_reference`);
- an LLM method's calls cached / new and estimated tokens and cost: counted request by request when
  at most :data:`EXACT_UP_TO` samples are to run; beyond, counted on :data:`SAMPLED` of them drawn
  with the run's seed and scaled to all (``preflight["sampled"]`` says how many; the page says it is
  an estimate). A launched run plans in full in its worker and records its own pre-flight.

The preview has no run id (``run_id`` None): a launch makes a new one (:func:`core.runs.plan.new_run_id`),
so a preview shown twice never hands one id to two runs.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from core.base.memo import stamped_frame
from core.base.stamps import file_stamp
from core.datasets import scan_restaurants, scan_reviews
from core.datasets.lock import TABLES
from core.ground_truth.lineage import describe as describe_gt
from core.ground_truth.policies.loader import get_policy
from core.llm import OFFLINE_MODEL, workspace_cache
from core.methods import METHODS, make_model
from core.runs.gt import RunGT, gt_reference
from core.runs.plan import (
    CALL_FIGURES,
    RunConfig,
    RunPlan,
    check_config,
    choose_ids,
    count_calls,
    load_samples,
    new_run_id,
    preflight,
    price_estimate,
    same_config_warning,
    short_warning,
)
from core.workspace import Workspace

EXACT_UP_TO = 500  # samples to run whose LLM requests are all built and counted (about 1 s at K=25)
SAMPLED = 200  # beyond, the samples whose requests are counted, drawn with the run's seed, scaled to all


def preview_run(config: RunConfig, ws: Workspace) -> dict[str, Any]:
    """What :meth:`core.runs.plan.RunPlan.as_dict` says of a new run of ``config`` (samples, GT
    reference, pre-flight figures, warnings), with ``run_id`` None; raises as ``plan_run`` does on a
    bad configuration."""
    check_config(ws, config)
    chosen, n_reviews = chosen_samples(ws, config)
    lineage, gt_warnings = gt_reference(ws, config.dataset, config.task, get_policy(config.policy, ws), config.k,
                                        config.gt)
    warnings = [*short_warning(config, n_reviews), *same_config_warning(ws, config, None), *gt_warnings]
    return {"run_id": None, "run_dir": None, "config": config.as_dict(), "n_samples": len(chosen), "gt": lineage,
            "gt_description": describe_gt(lineage), "preflight": figures(ws, config, chosen), "warnings": warnings}


def chosen_samples(ws: Workspace, config: RunConfig) -> tuple[list[str], pl.Series]:
    """The run's samples (business ids, in the run's order) and the reviews each has below K."""
    ids, counts = _reviews_below_k(str(ws.root), config.dataset, config.k, _dataset_stamp(ws, config.dataset))
    chosen = choose_ids(ids, config)
    if chosen is ids:  # every restaurant (the default): the counts as they are
        return chosen, counts
    found = pl.DataFrame({"business_id": ids, "n": counts})
    picked = pl.DataFrame({"business_id": chosen}).join(found, on="business_id", how="left", maintain_order="left")
    return chosen, picked["n"]


def _dataset_stamp(ws: Workspace, dataset: str) -> tuple[tuple[str, int, int], ...]:
    return ws.files_stamp((str(ws.dataset_dir(dataset).relative_to(ws.root)),))


@lru_cache(maxsize=8)
def _reviews_below_k(root: str, dataset: str, k: int, stamp: tuple[Any, ...]) -> tuple[list[str], pl.Series]:
    """The dataset's restaurant ids (sorted) and the reviews of each at positions below ``k``; kept
    while the dataset's files (``stamp``) are as they were. Callers never change them."""
    ws = Workspace(Path(root))
    frame, contiguous = _reviews_per_restaurant(ws, dataset)
    if contiguous:  # positions 0..n-1 everywhere: the reviews below K are min(n, K)
        counts = frame["n"].clip(upper_bound=k)
    else:
        below = scan_reviews(ws, dataset).filter(pl.col("idx") < k).group_by("business_id").agg(n=pl.len())
        counts = frame.select("business_id").join(below.collect(), on="business_id", how="left",
                                                  maintain_order="left")["n"].fill_null(0)
    return frame["business_id"].to_list(), counts.cast(pl.Int64)


def _reviews_per_restaurant(ws: Workspace, dataset: str) -> tuple[pl.DataFrame, bool]:
    """Every restaurant id (sorted) with its number of reviews ``n``, and whether every restaurant's
    positions are 0..n-1; kept beside the reviews table (:func:`core.base.memo.stamped_frame`) while
    it and the restaurants table are as they were, so a new server process reads 150,000 rows
    instead of grouping 2 M reviews."""
    folder = ws.dataset_dir(dataset)
    restaurants = folder / TABLES[0]
    context = repr(file_stamp(restaurants))

    def compute() -> tuple[pl.DataFrame, bool]:
        ids = scan_restaurants(ws, dataset).select("business_id").collect().sort("business_id")
        per = (scan_reviews(ws, dataset).group_by("business_id")
               .agg(n=pl.len(), ok=(pl.col("idx").min() == 0) & (pl.col("idx").max() == pl.len() - 1)
                    & (pl.col("idx").n_unique() == pl.len())).collect())
        frame = ids.join(per, on="business_id", how="left", maintain_order="left")
        contiguous = bool(frame["ok"].fill_null(True).all())
        return frame.select("business_id", pl.col("n").fill_null(0).cast(pl.Int64)), contiguous

    frame, contiguous = stamped_frame(folder / TABLES[1], "per-restaurant", compute, context=context)
    return frame, bool(contiguous)


def figures(ws: Workspace, config: RunConfig, chosen: list[str]) -> dict[str, Any]:
    """The pre-flight figures of a new run over ``chosen`` (none of them run yet)."""
    method = METHODS[config.method]
    if not method.uses_llm or config.model == OFFLINE_MODEL:  # no call counted: the figures need no sample
        out = preflight(_plan(ws, config, []))
    else:
        stamp = ws.files_stamp((str(ws.dataset_dir(config.dataset).relative_to(ws.root)), "cache", "tasks", "policies"))
        out = dict(_llm_figures(str(ws.root), json.dumps(config.as_dict(), sort_keys=True, default=str),
                                tuple(chosen), stamp))
    out.update(samples=len(chosen), finished=0, to_run=len(chosen))
    return out


@lru_cache(maxsize=16)
def _llm_figures(root: str, config_json: str, chosen: tuple[str, ...], stamp: tuple[Any, ...]) -> dict[str, Any]:
    """An LLM method's calls and cost over ``chosen``, kept while the dataset, the response cache,
    the tasks and the policies (``stamp``) are as they were."""
    ws, config = Workspace(Path(root)), RunConfig.from_dict(json.loads(config_json))
    counted = list(chosen)
    if len(counted) > EXACT_UP_TO:
        counted = sorted(random.Random(config.seed).sample(counted, SAMPLED))
    restaurants, _ = load_samples(ws, replace(config, samples=tuple(counted), n=None))
    plan = _plan(ws, config, restaurants)
    out = preflight(plan)
    if len(counted) == len(chosen):
        return out
    method = METHODS[config.method]
    llm = make_model(config.model, ws, endpoint=config.endpoint, cache=workspace_cache(ws), price=config.price)
    once = count_calls(llm, method.prepare_requests(plan.context(llm)) if method.prepare_requests else [])
    scale = len(chosen) / len(counted)
    for key in CALL_FIGURES:  # the per-sample calls scaled to all samples; the run's own calls (amos's spec) once
        out[key] = once[key] + round((out[key] - once[key]) * scale)
    out.update(estimated=True, sampled=len(counted))
    return price_estimate(out, config)


def _plan(ws: Workspace, config: RunConfig, restaurants: list[Any]) -> RunPlan:
    """A plan over ``restaurants`` to count with (never run: a fresh run id, no GT)."""
    return RunPlan(ws, config, new_run_id(config), tuple(restaurants), RunGT({}, None, None), {}, ())
