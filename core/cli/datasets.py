"""``python -m core datasets import|list|verify|show``: datasets from the command line (SPEC §1)."""

from __future__ import annotations

import argparse
from typing import Any

from core.base.errors import DataError
from core.base.progress import cli_progress
from core.cli import emit
from core.datasets import browse, dataset_info, list_datasets, require_verified, verify_dataset
from core.datasets.db import Database
from core.datasets.importer import import_dataset


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``datasets`` and its subcommands."""
    parser = subparsers.add_parser("datasets", help="import, list, verify and show datasets")
    sub = parser.add_subparsers(dest="datasets_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("import", help="import a SCALE JSONL/Parquet file or a flat Yelp review + business pair")
    p.add_argument("path", help="SCALE file, flat review file (review.json / .parquet) or a Yelp folder")
    p.add_argument("--business", metavar="PATH", help="business file of the flat layout")
    p.add_argument("--name", required=True, help="dataset name (letters, digits, '_', '-', '.')")
    p.add_argument("--replace", action="store_true", help="overwrite an existing dataset of that name")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("list", help="datasets of the workspace with counts and lock status")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("verify", help="re-hash a dataset's tables and sources against its lock")
    p.add_argument("name")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("show", help="counts and sample rows of a dataset (or of one restaurant)")
    p.add_argument("name")
    p.add_argument("--business-id", metavar="ID", help="show this restaurant and its reviews in idx order")
    p.add_argument("--limit", type=int, default=5, help="rows to show (default 5)")
    p.set_defaults(func=cmd_show)


def cmd_import(args: argparse.Namespace) -> int:
    with cli_progress(f"import {args.name}", enabled=not args.no_progress) as progress:
        result = import_dataset(
            args.workspace, args.name, args.path, business_path=args.business, replace=args.replace, progress=progress
        )
    args.workspace.ensure()  # any folder holding datasets is a workspace: give it its workspace.json
    counts = result["counts"]
    lines = [
        f"imported {args.name}: {counts['restaurants']:,} restaurants, {counts['reviews']:,} reviews "
        f"({result['layout']} {result['format']}, {result['seconds']:.1f} s) -> {result['path']}"
    ]
    lines += [f"warning: {w}" for w in result["warnings"]]
    emit(args, result, "\n".join(lines))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    rows = list_datasets(args.workspace)
    if not rows:
        emit(args, rows, f"no datasets in {args.workspace.root}")
        return 0
    text = [f"{'name':<24}{'layout':<8}{'restaurants':>12}{'reviews':>12}  {'created_at':<26}status"]
    for r in rows:
        status = "verified" if r["verified"] else f"NOT VERIFIED: {r['problem']}"
        text.append(
            f"{r['name']:<24}{r['layout'] or '?':<8}{r['n_restaurants'] or 0:>12,}{r['n_reviews'] or 0:>12,}  "
            f"{r['created_at'] or '?':<26}{status}"
        )
    emit(args, rows, "\n".join(text))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    result = verify_dataset(args.workspace, args.name)
    text = [f"{args.name}: tables match the lock"]
    text += [f"source {s['path']}: {s['status']}" for s in result["sources"]]
    text += [f"warning: {w}" for w in result["warnings"]]
    emit(args, result, "\n".join(text))
    return 0


def _frame_text(rows: list[dict[str, Any]], width: int = 70) -> str:
    def cell(value: Any) -> str:
        text = "" if value is None else str(value).replace("\n", " ")
        return text if len(text) <= width else text[: width - 1] + "…"

    return "\n".join("  " + " | ".join(cell(v) for v in row.values()) for row in rows)


def cmd_show(args: argparse.Namespace) -> int:
    require_verified(args.workspace, args.name)  # refuse to show data that changed since import
    info = dataset_info(args.workspace, args.name)
    db = Database(args.workspace.root)
    head = (
        f"{args.name}: {info['counts']['restaurants']:,} restaurants, {info['counts']['reviews']:,} reviews, "
        f"layout {info['layout']}, created {info['created_at']}, verified"
    )
    if args.business_id:
        card = browse.restaurant_card(db, args.name, args.business_id)
        restaurant = [card] if card else []
        if not restaurant:
            raise DataError(f"no restaurant with business_id {args.business_id!r} in dataset {args.name!r}")
        reviews = browse.first_reviews(db, args.name, args.business_id, limit=args.limit)
        payload = {**info, "restaurant": restaurant[0], "reviews": reviews}
        text = f"{head}\n{_frame_text(restaurant)}\nreviews (idx order):\n{_frame_text(reviews)}"
    else:
        sample = browse.sample_restaurants(db, args.name, limit=args.limit)
        payload = {**info, "restaurants": sample}
        text = f"{head}\nreviews from {info.get('date_min')} to {info.get('date_max')}\n{_frame_text(sample)}"
    db.close()
    emit(args, payload, text)
    return 0
