"""``python -m core demo``: generate the embedded demo workspace (synthetic Yelp data, planted truth)."""

from __future__ import annotations

import argparse

from core.base.errors import WorkbenchError
from core.base.progress import cli_progress
from core.base.settings import deployment_setup
from core.cli import emit
from core.demo import (
    default_truth_path,
    demo_is_current,
    foreign_demo_dataset,
    generate_demo,
    is_demo_workspace,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` command."""
    p = subparsers.add_parser(
        "demo",
        help="generate the demo workspace (deterministic synthetic Yelp-schema data)",
        description="Write synthetic business.json/review.json under sources/demo/, import them as dataset "
        "'demo' and write the planted truth (for tests): data/demo.truth.parquet for the embedded demo, "
        "else sources/demo/planted_truth.parquet inside the workspace.",
    )
    p.add_argument("--seed", type=int, default=7, help="random seed (default 7); same seed, same bytes")
    p.add_argument("--restaurants", type=int, default=100, metavar="N", help="restaurants (default 100)")
    p.add_argument("--reviews", type=int, default=200, metavar="N", help="reviews per restaurant (default 200)")
    p.add_argument("--truth", metavar="PATH", help="where to write the planted truth (default: the demo's own place)")
    p.add_argument("--only-demo-workspace", action="store_true",
                   help="do nothing unless the workspace is data/demo or already holds the demo "
                        "(what `make run` uses: any other workspace is served as it is)")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--if-missing", action="store_true",
                      help="do nothing when the workspace already holds a finished, current demo")
    when.add_argument("--force", action="store_true",
                      help="replace a dataset named 'demo' even if the demo generator did not write it")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    root = args.workspace.root
    if args.only_demo_workspace and not is_demo_workspace(root):
        emit(args, {"skipped": True, "workspace": str(root), "reason": "not the demo workspace"},
             f"serving {root} as it is (not the demo workspace: nothing generated)")
        return 0
    if args.if_missing and demo_is_current(root):
        emit(args, {"skipped": True, "workspace": str(root)}, f"demo workspace already present: {root}")
        return 0
    if foreign_demo_dataset(root) and not args.force:
        raise WorkbenchError(
            f"{root} has a dataset 'demo' that the demo generator did not write; use --force to replace it"
        )
    truth = args.truth or default_truth_path(root)
    with cli_progress("demo", enabled=not args.no_progress) as progress, deployment_setup():
        summary = generate_demo(root, seed=args.seed, n_restaurants=args.restaurants,
                                reviews_per_restaurant=args.reviews, truth_path=truth, progress=progress)
    kinds = ", ".join(f"{k} {v:,}" for k, v in summary["planted_by_kind"].items())
    emit(args, summary,
         f"demo workspace {root}: {summary['restaurants']:,} restaurants, {summary['reviews']:,} reviews, "
         f"{summary['planted_reviews']:,} planted ({kinds}) in {summary['seconds']['total']:.1f} s\n"
         f"planted truth (tests only): {summary['truth_path']}")
    return 0
