"""``plan_run``: check a run's configuration and say what it will do, before anything is written.

The plan holds the samples (restaurants with their first K reviews), the GT reference and the
pre-flight figures: how many LLM calls the cache answers, how many are new, and the estimated
tokens and cost of the new ones. Planning reads the workspace and the cache and writes nothing.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from core.base.errors import UnknownNameError, WorkbenchError
from core.base.settings import env
from core.datasets import scan_restaurants, scan_reviews
from core.ground_truth.lineage import describe as describe_gt
from core.ground_truth.policies import Policy
from core.ground_truth.policies.loader import POLICY_IDS, get_policy
from core.jobs.execution import read_log
from core.llm import (
    OFFLINE_MODEL,
    PRICES,
    cost_usd,
    estimate_tokens,
    get_endpoint,
    price_for,
    workspace_cache,
)
from core.methods import METHODS, MethodContext, RestaurantInput, make_model
from core.methods.contract import evidence_fields, verdict_scale
from core.runs.gt import RunGT, run_gt
from core.runs.records import CONFIG_FILE, SAMPLES_FILE, read_record
from core.runs.spend import COMPLETION_MARGIN, check_cap, check_price, retry_filter
from core.tasks import get_task, task_ids
from core.workspace import Workspace, check_name, is_valid_name
from core.workspace.locks import is_held, run_lock_path

SAMPLE_KEY = "business_id"
KEYWORD_HIT = "task_keyword_hit"  # per review: any of the task's keywords (SPEC §2.2)


@dataclass(frozen=True)
class RunConfig:
    """What to run. ``n`` restaurants drawn with ``seed`` (all when None), or exactly ``samples``."""

    dataset: str
    task: str
    policy: str
    method: str
    model: str = OFFLINE_MODEL
    k: int = 25
    n: int | None = None
    samples: tuple[str, ...] | None = None
    seed: int = 0
    concurrency: int = 8
    endpoint: str | None = None
    run_id: str | None = None
    gt: str | None = None  # "computed" / None: from the workspace's judgments now; else a GT file (core.runs.gt)
    options: dict[str, Any] = field(default_factory=dict)
    max_cost: float | None = None  # USD this run may spend at most, all its starts together (core.runs.spend)
    price: tuple[float, float] | None = None  # USD per million input/output tokens of a model without a list price
    unpriced: bool = False  # run a model without a price (and so without a cap) knowingly

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["samples"] = list(self.samples) if self.samples is not None else None
        out["price"] = list(self.price) if self.price is not None else None
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        if values.get("samples") is not None:
            values["samples"] = tuple(values["samples"])
        if values.get("price") is not None:
            values["price"] = check_price(values["price"])
        return cls(**values)


@dataclass(frozen=True, eq=False)
class RunPlan:
    """A checked configuration with its samples, GT and pre-flight figures."""

    ws: Workspace
    config: RunConfig
    run_id: str
    restaurants: tuple[RestaurantInput, ...]
    run_gt: RunGT  # the GT the run is scored against, with its lineage
    preflight: dict[str, Any]
    warnings: tuple[str, ...]
    retry_errors: str | None = None  # a resume that asks again the samples failed with this kind of error

    @property
    def gt(self) -> dict[str, str]:
        """business_id → GT verdict."""
        return self.run_gt.verdicts

    @property
    def run_dir(self) -> Path:
        return self.ws.runs_dir / self.run_id

    @property
    def policy(self) -> Policy:
        """The run's policy as in force in its workspace."""
        return get_policy(self.config.policy, self.ws)

    def context(self, llm: Any) -> MethodContext:
        policy = self.policy
        task = get_task(self.config.task, self.ws)
        return MethodContext(task=task, policy=policy, scale=verdict_scale(policy), evidence_fields=evidence_fields(task),
                             k=self.config.k, llm=llm, seed=self.config.seed, options=dict(self.config.options))

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "run_dir": str(self.run_dir), "config": self.config.as_dict(),
                "n_samples": len(self.restaurants), "gt": self.run_gt.lineage,
                "gt_description": describe_gt(self.run_gt.lineage), "preflight": self.preflight,
                "warnings": list(self.warnings)}


def new_run_id(config: RunConfig, now: datetime | None = None) -> str:
    """``{YYYYmmdd-HHMMSS}-{method}-{model}-K{k}-{4 hex}``, a valid folder name (≤ 64 characters)."""
    now = now or datetime.now(UTC)
    model = re.sub(r"[^A-Za-z0-9.-]", "-", config.model.split("/")[-1])[:20].strip("-.") or "model"
    suffix = f"{random.getrandbits(16):04x}"
    return check_name("run", f"{now:%Y%m%d-%H%M%S}-{config.method}-{model}-K{config.k}-{suffix}")


def check_config(ws: Workspace, config: RunConfig) -> None:
    """Unknown dataset/task/policy/method/model or a bad number → an error listing the valid names."""
    datasets = ws.datasets()
    if config.dataset not in datasets:
        raise UnknownNameError("dataset", config.dataset, datasets)
    tasks, policies = task_ids(ws), POLICY_IDS(ws)
    if config.task not in tasks:
        raise UnknownNameError("task", config.task, tasks)
    if config.policy not in policies:
        raise UnknownNameError("policy", config.policy, policies)
    policy_task = get_policy(config.policy, ws).task
    if policy_task != config.task:
        raise WorkbenchError(f"policy {config.policy} is for task {policy_task}, not {config.task}")
    method = METHODS[config.method]
    if method.uses_llm and config.model != OFFLINE_MODEL:
        _check_model(config)
    check_cap(config.max_cost)
    if config.k < 1:
        raise ValueError(f"K must be >= 1, got {config.k}")
    if config.n is not None and config.n < 1:
        raise ValueError(f"-n must be >= 1, got {config.n}")
    if config.concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {config.concurrency}")
    if config.run_id:
        check_name("run", config.run_id)


def _check_model(config: RunConfig) -> None:
    """A model on a remote endpoint must be known, and priced unless run knowingly without a price."""
    endpoint = get_endpoint(config.endpoint)  # unknown endpoint → lists the valid ones
    priced = config.price is not None or price_for(config.model) is not None
    if endpoint.is_local or priced:
        return
    if not config.unpriced:
        how = ("give its price (--price INPUT,OUTPUT in USD per million tokens, or $WORKBENCH_PRICES) or run it "
               "knowingly without one (--unpriced)")
        known = [OFFLINE_MODEL, *PRICES, *_env_models()]
        if config.model not in known:  # a typo, or a model the endpoint serves: both said, in one line
            unknown = UnknownNameError("model", config.model, known)
            unknown.args = (f"{unknown}. If the endpoint serves it, it has no price: {how}",)
            raise unknown
        raise WorkbenchError(f"model {config.model!r} has no price, so its cost can be neither estimated nor "
                             f"capped: {how}")
    if config.max_cost is not None:
        raise WorkbenchError(f"--max-cost needs a price for model {config.model!r} (--price INPUT,OUTPUT)")


def _env_models() -> list[str]:
    """``$WORKBENCH_MODELS`` (comma list): models of the endpoints that have no list price."""
    return [m.strip() for m in (env("WORKBENCH_MODELS") or "").split(",") if m.strip()]


def choose_ids(ids: list[str], config: RunConfig) -> list[str]:
    """The run's restaurants among ``ids`` (the dataset's, sorted): ``config.samples`` as given, ``n``
    drawn with ``seed``, or all. The pre-flight and the run both choose here, so their counts agree."""
    if config.samples:
        known = set(ids)
        unknown = [s for s in config.samples if s not in known]
        if unknown:
            raise WorkbenchError(f"unknown sample(s) in dataset {config.dataset}: {', '.join(unknown[:5])}")
        return list(dict.fromkeys(config.samples))
    if config.n is not None and config.n < len(ids):
        return sorted(random.Random(config.seed).sample(ids, config.n))
    return ids


def short_warning(config: RunConfig, n_reviews: pl.Series) -> list[str]:
    """The warning of samples with fewer than K reviews stored (``n_reviews``: each sample's reviews
    at positions below K), or none."""
    short = int((n_reviews < config.k).sum())
    if not short:
        return []
    most = int(n_reviews.max() or 0)  # type: ignore[arg-type]  # an Int64 series: an int
    return [f"K={config.k} is above the reviews stored for {short:,} of {len(n_reviews):,} restaurants "
            f"(most stored: {most:,}); they use the reviews they have"]


def load_samples(ws: Workspace, config: RunConfig) -> tuple[list[RestaurantInput], list[str]]:
    """The chosen restaurants with their first K reviews, and warnings (K above the reviews stored)."""
    rest = scan_restaurants(ws, config.dataset).select("business_id", "name", "categories", "n_reviews").collect()
    rest = rest.sort("business_id")
    chosen = choose_ids(rest["business_id"].to_list(), config)
    rest = rest.filter(pl.col("business_id").is_in(chosen))
    reviews = (scan_reviews(ws, config.dataset)
               .filter(pl.col("business_id").is_in(chosen) & (pl.col("idx") < config.k))
               .select("business_id", "review_id", "idx", "date", "stars", "text")
               .collect().sort("business_id", "idx"))
    # the task's keyword match of every review, in one Aho-Corasick pass (SPEC §2.2: substring of the
    # lower-cased text); the keyword baseline and amos's filter read it instead of scanning again
    keywords = [k.lower() for k in get_task(config.task, ws).keywords]
    reviews = reviews.with_columns(
        pl.col("text").fill_null("").str.to_lowercase().str.contains_any(keywords).alias(KEYWORD_HIT))
    by_id: dict[str, list[dict[str, Any]]] = {b: [] for b in chosen}
    for row in reviews.iter_rows(named=True):
        by_id[row["business_id"]].append({k: row[k] for k in ("review_id", "idx", "date", "stars", "text", KEYWORD_HIT)})
    meta = {r["business_id"]: r for r in rest.iter_rows(named=True)}
    samples = [RestaurantInput(b, meta[b]["name"] or "", meta[b]["categories"], tuple(by_id[b])) for b in chosen]
    return samples, short_warning(config, pl.Series([len(s.reviews) for s in samples], dtype=pl.Int64))


def plan_run(config: RunConfig, ws: Workspace, *, resume: bool = False, retry_errors: str | None = None) -> RunPlan:
    """Check ``config`` and plan the run (writes nothing). ``resume``: keep ``config.run_id``;
    ``retry_errors`` (transport, model, all): a resume also runs the samples that failed so."""
    check_config(ws, config)
    if resume and not config.run_id:
        raise ValueError("resume needs the run id")
    if retry_errors is not None and not resume:
        raise ValueError("--retry-errors goes with --resume RUN_ID")
    retry_filter(retry_errors)  # an unknown kind fails here
    run_id = config.run_id or new_run_id(config)
    samples, warnings = load_samples(ws, config)
    gt = run_gt(ws, config.dataset, config.task, get_policy(config.policy, ws), config.k, config.gt)
    warnings.extend(same_config_warning(ws, config, run_id))
    plan = RunPlan(ws, config, run_id, tuple(samples), gt, {}, tuple(warnings) + gt.warnings, retry_errors)
    object.__setattr__(plan, "preflight", preflight(plan))
    return plan


def same_config_warning(ws: Workspace, config: RunConfig, run_id: str | None) -> list[str]:
    """The warning of another run of this configuration executing now, or none."""
    same = same_config_running(ws, config, run_id)
    if not same:
        return []
    return [f"run {same} with the same configuration is in progress: a second one pays again for every "
            "answer it has not cached yet; wait for it to finish (its answers are cached as they arrive)"]


def same_config_running(ws: Workspace, config: RunConfig, run_id: str | None) -> str | None:
    """Another run of this configuration (the same calls) that is executing now, or None."""
    if not ws.runs_dir.is_dir():
        return None
    mine = _call_shape(config.as_dict())
    for folder in sorted(ws.runs_dir.iterdir()):
        if folder.name == run_id or not is_valid_name(folder.name) or not is_held(run_lock_path(ws, folder.name)):
            continue
        other = (read_record(folder / CONFIG_FILE) or {}).get("config") or {}
        if _call_shape(other) == mine:
            return folder.name
    return None


def _call_shape(config: dict[str, Any]) -> dict[str, Any]:
    """What decides a run's calls (not its id, concurrency or cap)."""
    return {k: v for k, v in config.items() if k not in ("run_id", "concurrency", "max_cost", "unpriced", "gt")}


COMPLETION_LOW = 0.25  # the low end of the estimate: answers a quarter of the expected size


def pending_samples(plan: RunPlan) -> list[RestaurantInput]:
    """The samples an execution of ``plan`` will run: those not in the run's log yet, and on a
    resume with ``retry_errors`` those whose latest record failed with that kind of error."""
    log = plan.run_dir / SAMPLES_FILE
    latest = {str(r[SAMPLE_KEY]): r for r in read_log(log) if SAMPLE_KEY in r} if log.exists() else {}
    redo = retry_filter(plan.retry_errors)
    return [r for r in plan.restaurants
            if r.business_id not in latest or (redo is not None and redo(latest[r.business_id]))]


def preflight(plan: RunPlan) -> dict[str, Any]:
    """Cached calls, new calls, estimated tokens and cost (a range over the answers' length: low and
    high completion tokens) of the samples to run, and the run's cap."""
    config = plan.config
    method = METHODS[config.method]
    todo = pending_samples(plan)
    out: dict[str, Any] = {"samples": len(plan.restaurants), "finished": len(plan.restaurants) - len(todo),
                           "to_run": len(todo), "uses_llm": method.uses_llm, "model": config.model,
                           "offline": config.model == OFFLINE_MODEL or not method.uses_llm,
                           "cached_calls": 0, "new_calls": 0, "est_prompt_tokens": 0,
                           "est_completion_tokens": 0, "est_completion_tokens_low": 0, "est_completion_tokens_high": 0,
                           "est_cost_usd": 0.0, "est_cost_usd_low": 0.0, "est_cost_usd_high": 0.0, "priced": True,
                           "price": None, "estimated": False, "max_cost_usd": config.max_cost,
                           "retry_errors": plan.retry_errors}
    if not method.uses_llm:
        return out
    if out["offline"]:  # the offline model costs nothing: no need to build every request to count
        out["new_calls"] = None
        return out
    llm = make_model(config.model, plan.ws, endpoint=config.endpoint, cache=workspace_cache(plan.ws), price=config.price)
    ctx = plan.context(llm)
    out["estimated"] = method.prepare is not None  # amos: the kept reviews depend on the compiled spec
    once = count_calls(llm, method.prepare_requests(ctx) if method.prepare_requests else [])
    each = count_calls(llm, (req for r in todo for req in method.requests(ctx, r)))
    for key, value in once.items():
        out[key] = value + each[key]
    return price_estimate(out, config)


CALL_FIGURES = ("cached_calls", "new_calls", "est_prompt_tokens", "est_completion_tokens")


def count_calls(llm: Any, requests: Iterable[Any]) -> dict[str, int]:
    """Of ``requests``: how many the cache answers, how many are new, and the new ones' estimated
    prompt and completion tokens (:data:`CALL_FIGURES`)."""
    out = dict.fromkeys(CALL_FIGURES, 0)
    for req in requests:
        if llm.is_cached(req.messages, req.response_format):
            out["cached_calls"] += 1
            continue
        out["new_calls"] += 1
        out["est_prompt_tokens"] += estimate_tokens(req.messages)
        out["est_completion_tokens"] += req.completion_tokens
    return out


def price_estimate(out: dict[str, Any], config: RunConfig) -> dict[str, Any]:
    """``out`` with the completion range and the cost of its estimated tokens (low, expected, high)."""
    out["est_completion_tokens_low"] = math.floor(out["est_completion_tokens"] * COMPLETION_LOW)
    out["est_completion_tokens_high"] = math.ceil(out["est_completion_tokens"] * COMPLETION_MARGIN)
    price = config.price or price_for(config.model)
    out["priced"], out["price"] = price is not None, list(price) if price else None
    for suffix, completion in (("", "est_completion_tokens"), ("_low", "est_completion_tokens_low"),
                               ("_high", "est_completion_tokens_high")):
        cost = cost_usd(config.model, out["est_prompt_tokens"], out[completion], price=price)
        out[f"est_cost_usd{suffix}"] = round(cost or 0.0, 6)
    return out
