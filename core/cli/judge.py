"""``python -m core judge``: judge a dataset's keyword-matched reviews for a task (SPEC §2.3).

```
python -m core judge --dataset D --task G1a --judge heuristic|openai [--model M] [--resume]
    [--limit N] [--concurrency N] [--mode ondemand|batch] [--ensemble SPEC]
python -m core judge --collect BATCH_ID [--wait SECONDS]
python -m core judge --dataset D --task G1a --low-confidence 0.67 --ensemble SPEC|--judge-id ID
```
Exit code 0 when every planned review got a stored judgment (parse errors included), 3 when some
calls failed (they are retried by ``--resume``), 1 on an error.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.base.progress import cli_progress
from core.cli import emit

EXIT_FAILURES = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="judge keyword-matched reviews (heuristic, any OpenAI-compatible model, ensembles)")
    p.add_argument("--dataset", help="dataset name")
    p.add_argument("--task", default="G1a", help="task id (default G1a)")
    p.add_argument("--judge", choices=["heuristic", "heuristic-v2", "cues", "openai"], default="heuristic",
                   help="judge kind: heuristic (= heuristic-v1, kept for reproducibility), heuristic-v2 (offline, "
                        "precision first), cues (the offline phrase matcher of tasks whose fields list cues), openai")
    p.add_argument("--model", help="model id for --judge openai (default $WORKBENCH_JUDGE_MODEL)")
    p.add_argument("--seed", type=int, help="sampling seed sent with every request (part of the judge id)")
    p.add_argument("--temperature", type=float, help="sampling temperature (default: the endpoint's)")
    p.add_argument("--ensemble", metavar="SPEC",
                   help="NAME:MEMBER[*W],... with MEMBER heuristic | openai:MODEL[#SEED], e.g. "
                        "trio:openai:gpt-4o-mini#1,openai:gpt-4o-mini#2,openai:gpt-4o-mini#3")
    p.add_argument("--resume", action="store_true",
                   help="skip reviews already judged and collect finished batches first")
    p.add_argument("--limit", type=int, help="judge at most N reviews")
    p.add_argument("--concurrency", type=int, default=4, help="parallel requests (default 4)")
    p.add_argument("--max-cost", metavar="USD", help="stop before a call could take this run past USD (default: the "
                                                     "workspace's max_cost_usd or $WORKBENCH_MAX_COST); --resume continues")
    p.add_argument("--mode", choices=["ondemand", "batch"], default="ondemand", help="on-demand calls or Batch API")
    p.add_argument("--collect", metavar="BATCH_ID", help="check a submitted batch and store its results")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="with --collect/--resume: keep polling a running batch up to this long")
    p.add_argument("--poll", type=float, default=30.0, metavar="SECONDS", help="seconds between batch polls")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)")
    p.add_argument("--timeout", type=float, help="seconds per request attempt (default $WORKBENCH_LLM_TIMEOUT or 60)")
    p.add_argument("--max-retries", type=int, help="retries on 429/5xx/timeouts/connection errors (default $WORKBENCH_LLM_MAX_RETRIES or 3)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the workspace's LLM response cache")
    p.add_argument("--low-confidence", type=float, metavar="THRESHOLD",
                   help="list ensemble judgments with a field's confidence below THRESHOLD (no judging)")
    p.add_argument("--judge-id", help="with --low-confidence: the stored judge to list (e.g. ensemble-trio)")
    p.set_defaults(func=run)


def _factories(args: argparse.Namespace) -> tuple[Any, Any]:
    """(openai judge factory, batch judge factory) with the endpoint options and the workspace cache."""
    # deferred: only the `judge` command needs it (CLI start-up)
    from core.judgments.judges.openai_judge import OpenAIJudge
    from core.llm import workspace_cache
    from core.tasks import get_task

    cache = None if args.no_cache else workspace_cache(args.workspace)
    endpoint = {"base_url": args.base_url, "timeout": args.timeout, "max_retries": args.max_retries, "cache": cache}

    def openai_judge(task: Any, *, model: str | None = None, seed: int | None = None) -> OpenAIJudge:
        return OpenAIJudge(task, model=model or args.model, seed=seed, temperature=args.temperature, **endpoint)

    def batch_judge(task_id: str, entry: dict[str, Any]) -> OpenAIJudge:
        return OpenAIJudge(get_task(task_id, args.workspace), model=entry["model"], seed=entry.get("seed"),
                           temperature=entry.get("temperature"), judge_id=entry["judge"], **endpoint)

    return openai_judge, batch_judge


def _build_judge(args: argparse.Namespace, task: Any, openai_judge: Any) -> Any:
    # deferred: only the `judge` command needs it (CLI start-up)
    from core.judgments.judges.ensemble import build_ensemble
    from core.judgments.judges.heuristic import HeuristicJudge

    if args.ensemble:
        return build_ensemble(task, args.ensemble, openai_factory=openai_judge)
    if args.judge == "openai":
        return openai_judge(task, seed=args.seed)
    if args.judge == "cues":
        # deferred: only the `judge` command needs it (CLI start-up)
        from core.judgments.judges.cues import CueJudge

        return CueJudge(task)
    return HeuristicJudge(task, "heuristic-v2" if args.judge == "heuristic-v2" else "heuristic-v1")


def _low_confidence(args: argparse.Namespace) -> int:
    # deferred: only the `judge` command needs it (CLI start-up)
    from core.judgments.judges.ensemble import low_confidence, parse_ensemble_spec

    judge_id = args.judge_id or (f"ensemble-{parse_ensemble_spec(args.ensemble)[0]}" if args.ensemble else None)
    if not judge_id:
        raise ValueError("--low-confidence needs --judge-id ID or --ensemble SPEC")
    df = low_confidence(args.workspace, args.dataset, args.task, judge_id, args.low_confidence)
    rows = df.to_dicts()
    text = f"{len(rows)} judgments of {judge_id} below confidence {args.low_confidence}:\n{df}" if rows else \
        f"no judgment of {judge_id} below confidence {args.low_confidence}"
    emit(args, {"judge": judge_id, "threshold": args.low_confidence, "n": len(rows), "judgments": rows}, text)
    return 0


def _collect(args: argparse.Namespace, batch_judge: Any) -> int:
    # deferred: only the `judge` command needs it (CLI start-up)
    from core.judgments.judges.batch import collect_batch

    with cli_progress("collect", enabled=not args.no_progress and not args.json) as progress:
        report = collect_batch(args.workspace, args.collect, batch_judge, wait_seconds=args.wait,
                               poll_seconds=args.poll, progress=progress)
    emit(args, report.as_dict(), report.summary_text())
    return EXIT_FAILURES if report.failures else 0


def _cap(args: argparse.Namespace, judge: Any) -> float | None:
    """The run's dollar cap: --max-cost, else the workspace default; offline judges spend nothing."""
    # deferred: only the `judge` command needs it (CLI start-up)
    from core.llm.budget import check_cap, default_cap

    if not hasattr(judge, "messages") and not hasattr(judge, "members"):
        return None  # rules over the text: no call, no cost
    return check_cap(args.max_cost) if args.max_cost is not None else default_cap(args.workspace)


def _check_batch_cap(judge: Any, plan: Any, cap: float | None) -> None:
    """A batch is paid as a whole: refuse it when its upper bound is over the cap."""
    # deferred: only the `judge` command needs it (CLI start-up)
    from core.judgments.judges.spend import batch_bound, judging_budget

    if judging_budget(judge, cap) is None or cap is None:
        return
    bound = batch_bound(judge, plan.rows)
    if bound > cap:
        raise ValueError(f"this batch of {len(plan.rows)} reviews may cost up to {_usd(bound)}, over the cap of "
                         f"{_usd(cap)}: judge fewer reviews (--limit) or raise --max-cost")


def _usd(amount: float) -> str:
    """Dollars to the micro-dollar, without trailing zeros: ``$0.000001``, ``$0.0032``."""
    return "$" + f"{amount:.6f}".rstrip("0").rstrip(".")


def run(args: argparse.Namespace) -> int:
    # deferred: only the `judge` command needs it (CLI start-up)
    from core.judgments.judges.batch import collect_pending, submit_batch
    from core.judgments.judges.runner import execute_judging, plan_judging
    from core.tasks import get_task
    from core.workspace.locks import judge_lock

    openai_judge, batch_judge = _factories(args)
    if args.collect:
        return _collect(args, batch_judge)
    if not args.dataset:
        raise ValueError("--dataset is required (or --collect BATCH_ID)")
    if args.low_confidence is not None:
        return _low_confidence(args)
    task = get_task(args.task, args.workspace)
    judge = _build_judge(args, task, openai_judge)
    if args.mode == "batch" and not hasattr(judge, "record_from_completion"):
        raise ValueError("--mode batch needs --judge openai (one model; ensembles and the heuristic run on demand)")
    collected = []
    with judge_lock(args.workspace, args.dataset, task.task_id, judge.judge_id):  # one run per judge at a time
        if args.resume and hasattr(judge, "record_from_completion"):
            collected = collect_pending(args.workspace, args.dataset, task.task_id, judge.judge_id, batch_judge,
                                        wait_seconds=args.wait, poll_seconds=args.poll)
        plan = plan_judging(args.workspace, args.dataset, task.task_id, judge, limit=args.limit, resume=args.resume)
        cap = _cap(args, judge)
        with cli_progress(f"judge {judge.judge_id}", enabled=not args.no_progress and not args.json) as progress:
            if args.mode == "batch":
                _check_batch_cap(judge, plan, cap)
                report = submit_batch(plan, judge, progress=progress)
            else:
                report = execute_judging(plan, judge, concurrency=args.concurrency, progress=progress, max_cost=cap)
    payload = report.as_dict()
    payload["plan"] = plan.as_dict()
    payload["collected_batches"] = [c.as_dict() for c in collected]
    text = "\n".join([*(c.summary_text() for c in collected), report.summary_text()])
    if plan.stale:
        text += (f"\n{plan.stale} stored judgments were of another text (the review changed since): "
                 "treated as absent" + (" and judged again" if args.resume else "") +
                 f"; `python -m core judgments prune --dataset {args.dataset} --task {task.task_id} "
                 f"--judge {judge.judge_id}` retires them")
    if plan.in_pending_batches:
        text += f"\n{plan.in_pending_batches} reviews wait in submitted batches (collect with --collect or --resume)"
    emit(args, payload, text)
    failures = len(report.failures) + sum(len(c.failures) for c in collected)
    return EXIT_FAILURES if failures else 0
