"""``python -m core run``: run a method over a dataset's restaurants (SPEC §4).

    python -m core run --dataset D --task T --policy P --method M --model MODEL --k K
                       [-n N | --samples IDS] [--seed S] [--concurrency C] [--endpoint E] [--dry-run] [--json]
    python -m core run --resume RUN_ID

Prints the pre-flight figures (cached and new calls, estimated tokens and cost), then a progress
bar (done, errors, tokens, cost, ETA) and the run's folder. ``--dry-run`` stops after the
pre-flight. ``--resume`` finishes an interrupted run without repeating a finished sample.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.base.progress import cli_progress
from core.cli import emit
from core.llm import OFFLINE_MODEL, workspace_cache
from core.methods import METHODS, make_model
from core.runs import RunConfig, execute_run, plan_run, resume_config


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
    p.set_defaults(func=run)


def _config(args: argparse.Namespace) -> RunConfig:
    if args.resume:
        return resume_config(args.workspace, args.resume)
    if not args.dataset or not args.method:
        raise ValueError("run needs --dataset and --method (or --resume RUN_ID)")
    options: dict[str, Any] = {"rag_top": args.rag_top} if args.rag_top else {}
    samples = tuple(s.strip() for s in args.samples.split(",") if s.strip()) if args.samples else None
    return RunConfig(dataset=args.dataset, task=args.task, policy=args.policy, method=args.method, model=args.model,
                     k=args.k, n=args.n, samples=samples, seed=args.seed, concurrency=args.concurrency,
                     endpoint=args.endpoint, run_id=args.run_id, gt=args.gt, options=options)


def preflight_text(plan_dict: dict[str, Any]) -> str:
    f = plan_dict["preflight"]
    lines = [f"run {plan_dict['run_id']}: {f['to_run']} of {f['samples']} samples to run "
             f"({f['finished']} finished before)"]
    if f["uses_llm"]:
        if f["offline"]:
            lines.append("offline heuristic model (rules, no LLM): no tokens, no cost")
        else:
            cost = f"${f['est_cost_usd']:.4f}" if f["priced"] else "unknown (model has no price)"
            lines.append(f"calls: {f['cached_calls']} cached, {f['new_calls']} new; estimated "
                         f"{f['est_prompt_tokens']:,} prompt + {f['est_completion_tokens']:,} completion tokens, "
                         f"cost {cost}{' (estimate: amos keeps reviews by its compiled spec)' if f['estimated'] else ''}")
    else:
        lines.append("baseline: no LLM calls")
    lines.extend(f"warning: {w}" for w in plan_dict["warnings"])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    ws = args.workspace
    config = _config(args)
    plan = plan_run(config, ws, resume=bool(args.resume))
    info = plan.as_dict()
    if args.dry_run:
        emit(args, info, preflight_text(info))
        return 0
    quiet = args.json or args.no_progress
    if not quiet:
        print(preflight_text(info))
    llm = make_model(config.model, ws, endpoint=config.endpoint, cache=workspace_cache(ws), concurrency=config.concurrency)
    with cli_progress(f"{config.method} K={config.k}", enabled=not quiet) as progress:
        status = execute_run(plan, llm, progress)
    info["status"] = status
    text = (f"{status['status']}: {status['done']}/{status['total']} samples, {status['errors']} with an error, "
            f"{status['prompt_tokens'] + status['completion_tokens']:,} tokens, ${status['cost_usd']:.4f}, "
            f"{status['elapsed_s']:.1f} s\n{plan.run_dir}")
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
    return 0 if status["status"] == "finished" else 3
