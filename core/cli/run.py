"""``python -m core run``: run a method over a dataset's restaurants (SPEC §4).

    python -m core run --dataset D --task T --policy P --method M --model MODEL --k K
                       [-n N | --samples IDS] [--seed S] [--concurrency C] [--endpoint E] [--dry-run] [--json]
                       [--max-cost USD] [--price IN,OUT | --unpriced]
    python -m core run --resume RUN_ID [--retry-errors transport|model|all] [--max-cost USD]

Prints the pre-flight figures (cached and new calls, estimated tokens and a cost range), then a
progress bar (done, errors, tokens, cost, ETA) and the run's folder. ``--dry-run`` stops after the
pre-flight. ``--resume`` finishes an interrupted run without repeating a finished sample;
``--retry-errors`` also asks again the samples that failed (core.runs.spend). ``--max-cost`` stops
the run, resumable, before it would spend more (default: the workspace's ``max_cost_usd``).

Exit code 0 when the run finished, 3 when it stopped early (cancelled, the cap) or some samples
failed: a call that failed for good (``--resume --retry-errors transport`` asks again), or every
sample (the same convention as ``judge``), 1 on an error (another process running it included).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from core.base.progress import cli_progress
from core.cli import emit
from core.llm import OFFLINE_MODEL, workspace_cache
from core.methods import METHODS, make_model
from core.runs import RunConfig, execute_run, plan_run, resume_config
from core.runs.spend import RETRY_CHOICES, check_cap, check_price, default_cap


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a method (direct, cot, rag, amos, keyword, random) and score it",
                       description="Plan and run a method over restaurants; results go to runs/{run_id}/.")
    p.add_argument("--dataset", help="dataset name")
    p.add_argument("--task", default="G1a", help="task id (default G1a)")
    p.add_argument("--policy", default="G1_allergy_V2", help="policy id (default G1_allergy_V2)")
    p.add_argument("--method", help=f"one of: {', '.join(METHODS.names())}")
    p.add_argument("--model", default=OFFLINE_MODEL, help="model id on the endpoint, or 'heuristic' (offline; default)")
    p.add_argument("--endpoint", help="named endpoint (WORKBENCH_ENDPOINTS; default: OPENAI_BASE_URL)")
    p.add_argument("--k", type=int, default=25, help="reviews per restaurant (the first K, newest first; default 25)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("-n", type=int, help="number of restaurants, drawn with --seed (default: all)")
    group.add_argument("--samples", help="comma-separated business_ids")
    p.add_argument("--seed", type=int, default=0, help="seed for -n and the random baseline (default 0)")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight at most (default 8)")
    p.add_argument("--rag-top", type=int, help="rag: reviews retrieved per restaurant (default 10)")
    p.add_argument("--gt", help="GT file (default gt/{dataset}/{task}/{policy}_K{k}_groundtruth.json)")
    p.add_argument("--run-id", help="run id (default: time, method, model and K)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and pre-flight figures; run nothing")
    p.add_argument("--resume", metavar="RUN_ID", help="finish an interrupted run")
    p.add_argument("--retry-errors", choices=RETRY_CHOICES,
                   help="with --resume: ask again the samples that failed (transport: timeouts, 429, 5xx; "
                        "model: unusable answers; all)")
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="stop (resumable) before the run spends more than this; default: the workspace's max_cost_usd")
    price = p.add_mutually_exclusive_group()
    price.add_argument("--price", metavar="IN,OUT", help="USD per million input,output tokens of a model without a list price")
    price.add_argument("--unpriced", action="store_true", help="run a model without a price (its cost is unknown, uncapped)")
    p.set_defaults(func=run)


def _config(args: argparse.Namespace) -> RunConfig:
    cap = check_cap(args.max_cost)
    if args.resume:
        config = resume_config(args.workspace, args.resume)
        # a resume may be given a new cap (the old one was reached) or take the one it had
        return replace(config, max_cost=cap if cap is not None else config.max_cost)
    if args.retry_errors:
        raise ValueError("--retry-errors goes with --resume RUN_ID")
    if not args.dataset or not args.method:
        raise ValueError("run needs --dataset and --method (or --resume RUN_ID)")
    options: dict[str, Any] = {"rag_top": args.rag_top} if args.rag_top else {}
    samples = tuple(s.strip() for s in args.samples.split(",") if s.strip()) if args.samples else None
    return RunConfig(dataset=args.dataset, task=args.task, policy=args.policy, method=args.method, model=args.model,
                     k=args.k, n=args.n, samples=samples, seed=args.seed, concurrency=args.concurrency,
                     endpoint=args.endpoint, run_id=args.run_id, gt=args.gt, options=options,
                     max_cost=cap if cap is not None else default_cap(args.workspace),
                     price=check_price(args.price), unpriced=args.unpriced)


def preflight_text(plan_dict: dict[str, Any]) -> str:
    f = plan_dict["preflight"]
    lines = [f"run {plan_dict['run_id']}: {f['to_run']} of {f['samples']} samples to run "
             f"({f['finished']} finished before{', failed ones asked again: ' + f['retry_errors'] if f.get('retry_errors') else ''})"]
    if f["uses_llm"]:
        if f["offline"]:
            lines.append("offline heuristic model (rules, no LLM): no tokens, no cost")
        else:
            lines.append(f"calls: {f['cached_calls']} cached, {f['new_calls']} new; estimated "
                         f"{f['est_prompt_tokens']:,} prompt + {f['est_completion_tokens_low']:,}–"
                         f"{f['est_completion_tokens_high']:,} completion tokens, cost {cost_range(f)}"
                         f"{' (estimate: amos keeps reviews by its compiled spec)' if f['estimated'] else ''}")
            cap = f.get("max_cost_usd")
            lines.append(f"spending cap ${cap:.4f}: the run stops (resumable) before it would spend more"
                         if cap is not None else "no spending cap (--max-cost USD sets one)")
    else:
        lines.append("baseline: no LLM calls")
    lines.extend(f"warning: {w}" for w in plan_dict["warnings"])
    return "\n".join(lines)


def cost_range(f: dict[str, Any]) -> str:
    """``$0.0012–$0.0050`` (low and high completion tokens), or why there is no figure.

    >>> cost_range({"priced": True, "est_cost_usd_low": 0.0012, "est_cost_usd_high": 0.005})
    '$0.0012–$0.0050'
    >>> cost_range({"priced": False})
    'unknown (model has no price)'
    """
    if not f.get("priced"):
        return "unknown (model has no price)"
    return f"${f['est_cost_usd_low']:.4f}–${f['est_cost_usd_high']:.4f}"


def outcome_text(status: dict[str, Any]) -> str:
    """The line after a run: counts, errors by kind, calls cached/new, the cost beside the estimate."""
    text = (f"{status['status']}: {status['done']}/{status['total']} samples, {status['errors']} with an error "
            f"({status.get('errors_transport', 0)} transport, {status.get('errors_model', 0)} model), "
            f"calls cached {status.get('calls_cached', 0)} / new {status.get('calls_new', 0)}, "
            f"{status['prompt_tokens'] + status['completion_tokens']:,} tokens, ${status['cost_usd']:.4f}")
    if status.get("est_cost_usd_high"):
        text += f" (estimated ${status['est_cost_usd_low']:.4f}–${status['est_cost_usd_high']:.4f})"
    text += f", {status['elapsed_s']:.1f} s"
    if status.get("stopped_at_cap"):
        text += (f"\nstopped at the spending cap ${status['max_cost_usd']:.4f} (the run has spent "
                 f"${status['total_cost_usd']:.4f}); `run --resume {status['run_id']} --max-cost USD` continues it")
    return text


def exit_code(status: dict[str, Any]) -> int:
    """0 finished; 3 stopped early, a call failed for good, or every sample failed (as ``judge``)."""
    if status["status"] != "finished" or status.get("errors_transport"):
        return 3
    return 3 if status["total"] and status["errors"] >= status["total"] else 0


def run(args: argparse.Namespace) -> int:
    ws = args.workspace
    config = _config(args)
    plan = plan_run(config, ws, resume=bool(args.resume), retry_errors=args.retry_errors)
    info = plan.as_dict()
    if args.dry_run:
        emit(args, info, preflight_text(info))
        return 0
    quiet = args.json or args.no_progress
    if not quiet:
        print(preflight_text(info))
    llm = make_model(config.model, ws, endpoint=config.endpoint, cache=workspace_cache(ws), concurrency=config.concurrency,
                     price=config.price)
    with cli_progress(f"{config.method} K={config.k}", enabled=not quiet) as progress:
        status = execute_run(plan, llm, progress)
    info["status"] = status
    text = f"{outcome_text(status)}\n{plan.run_dir}"
    # deferred: only the `run` command needs them (CLI start-up)
    from core.metrics.badges import fallback_line
    from core.runs.records import spec_fallback

    info["spec_fallback"] = spec_fallback(plan.run_dir)
    if info["spec_fallback"]:  # the method did not use what it compiled: say so before any score
        text += f"\nwarning: {fallback_line(info['spec_fallback'])}"
    results = plan.run_dir / "results.json"
    if status["status"] == "finished" and results.exists():  # the scores, as `show` prints them
        # deferred: only the `run` command needs it (CLI start-up)
        from core.base.files import read_json
        from core.metrics.summary import format_summary

        text += "\n\n" + format_summary(read_json(results))
    from core.release.links import results_link  # deferred: only the `run` command needs it

    info["link"] = results_link(plan.run_id)
    if info["link"]:  # WORKBENCH_BASE_URL: where the app serves this workspace
        text += f"\npage: {info['link']}"
    emit(args, info, text)
    return exit_code(status)
