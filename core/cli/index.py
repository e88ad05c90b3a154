"""``python -m core index``: build the keyword index of a dataset for every task (SPEC §2.2)."""

from __future__ import annotations

import argparse

from core.base.progress import cli_progress
from core.cli import emit
from core.tasks.keyword_index import build_index


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="build the keyword index of a dataset (all tasks, one pass)")
    p.add_argument("--dataset", required=True, help="dataset name")
    p.add_argument("--task", action="append", metavar="T", help="only this task (repeatable; default: all)")
    p.set_defaults(func=run)


def format_stats(stats: dict) -> str:
    """Human-readable summary of :func:`core.tasks.keyword_index.build_index` stats."""
    lines = [f"keyword index of {stats['dataset']}: {stats['total_reviews']:,} reviews, "
             f"{stats['total_restaurants']:,} restaurants ({stats.get('seconds', 0):.2f} s)"]
    for task_id, t in stats["tasks"].items():
        lines.append(
            f"  {task_id} {t['name']}: {t['matches']:,} matches of {t['reviews']:,} reviews "
            f"({t['match_rate_pct']}), {t['restaurants_with_match']:,} restaurants with a match"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    with cli_progress("index", enabled=not args.no_progress and not args.json) as progress:
        stats = build_index(args.workspace, args.dataset, tasks=args.task, progress=progress)
    emit(args, stats, format_stats(stats))
    return 0
