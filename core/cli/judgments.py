"""``python -m core judgments``: import/export xnot judgment files, list judges, pick the GT judge."""

from __future__ import annotations

import argparse

from core.base.progress import cli_progress
from core.cli import emit
from core.judgments import list_judges, prune_stale, set_gt_judge
from core.judgments.xnot_files import export_xnot_judgments, import_xnot_judgments


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judgments", help="import, export and list stored judgments")
    cmds = p.add_subparsers(dest="judgments_command", metavar="ACTION", required=True)

    imp = cmds.add_parser("import", help="attach an xnot judgments.json to the dataset that has the texts, or "
                                         "import a generic JSONL of any task")
    imp.add_argument("path", help="judgments.json in the xnot layout (SPEC §2.4), or JSONL "
                                  "{business_id, review_id, fields}")
    imp.add_argument("--task", help="task id (default: the file's task_id; required for the generic JSONL)")
    imp.add_argument("--dataset", help="dataset to attach to (default: the only dataset); created from the "
                                       "file, without texts, only when no dataset holds its restaurants")
    imp.add_argument("--judge", help="judge id to store them under (default: xnot-import-<prompt version>)")
    imp.set_defaults(func=run_import)

    exp = cmds.add_parser("export", help="write one judge's judgments in the xnot layout")
    exp.add_argument("--dataset", required=True)
    exp.add_argument("--task", required=True)
    exp.add_argument("--judge", required=True)
    exp.add_argument("--out", required=True, help="output file")
    exp.add_argument("--apply-overrides", action="store_true", help="export the human-corrected values")
    exp.set_defaults(func=run_export)

    lst = cmds.add_parser("list", help="judges of a dataset/task with counts and parse errors")
    lst.add_argument("--dataset", required=True)
    lst.add_argument("--task", required=True)
    lst.set_defaults(func=run_list)

    gt = cmds.add_parser("set-gt", help="record the judge whose judgments ground truth uses")
    gt.add_argument("--dataset", required=True)
    gt.add_argument("--task", required=True)
    gt.add_argument("--judge", required=True)
    gt.set_defaults(func=run_set_gt)

    prune = cmds.add_parser("prune", help="retire stale judgments (of a review text that has changed since)")
    prune.add_argument("--dataset", required=True)
    prune.add_argument("--task", required=True)
    prune.add_argument("--judge", help="only this judge (default: every judge of the dataset/task)")
    prune.set_defaults(func=run_prune)


def run_import(args: argparse.Namespace) -> int:
    # deferred: only the `judgments` command needs it (CLI start-up)
    from core.judgments.generic import is_generic_layout

    if is_generic_layout(args.path):
        return _run_import_generic(args)
    with cli_progress("import", enabled=not args.no_progress and not args.json) as progress:
        report = import_xnot_judgments(args.workspace, args.path, task=args.task, dataset=args.dataset,
                                       judge=args.judge, progress=progress)
    created = (" (dataset created from the file: synthetic ids, no review texts)"
               if report["dataset_created"] else "")
    lines = [f"matched {report['matched']:,} of {report['judgments']:,} judgments of {report['restaurants']:,} "
             f"restaurants to {report['dataset']}/{report['task']} as {report['judge']}{created}: "
             f"{report['appended']:,} new, {report['unchanged']:,} unchanged, {report['parse_errors']:,} parse errors"]
    if report["unmatched"]:
        reasons = ", ".join(f"{kind} {n:,}" for kind, n in report["unmatched_by_reason"].items())
        lines.append(f"not matched (not stored): {report['unmatched']:,} judgments ({reasons})")
        if report["unmatched_restaurants"]:
            shown = ", ".join(report["unmatched_restaurants"][:10])
            more = len(report["unmatched_restaurants"]) - 10
            lines.append(f"  {len(report['unmatched_restaurants']):,} restaurants not in the dataset: {shown}"
                         + (f" (and {more} more)" if more > 0 else ""))
        lines += [f"  {u['name']} idx {u['idx']}: {u['reason']}" for u in report["unmatched_examples"]
                  if u["kind"] != "no such idx"][:10]
    emit(args, report, "\n".join(lines))
    return 0


def _run_import_generic(args: argparse.Namespace) -> int:
    # deferred: only the `judgments` command needs it (CLI start-up)
    from core.judgments.generic import import_generic_judgments

    if not args.judge or not args.task:
        raise ValueError("--task and --judge are required for the generic JSONL layout")
    dataset = args.dataset
    if dataset is None:
        existing = args.workspace.datasets()
        if len(existing) != 1:
            raise ValueError("choose the dataset with --dataset (the workspace does not hold exactly one)")
        dataset = existing[0]
    report = import_generic_judgments(args.workspace, args.path, task=args.task, dataset=dataset, judge=args.judge)
    emit(args, report, f"imported {report['judgments']:,} judgments as {report['judge']} into "
                       f"{report['dataset']}/{report['task']}: {report['appended']:,} stored, "
                       f"{report['parse_errors']:,} parse errors" + "".join(f"\n  {e}" for e in report["errors"]))
    return 0


def run_export(args: argparse.Namespace) -> int:
    report = export_xnot_judgments(args.workspace, args.dataset, args.task, args.judge, args.out,
                                   apply_overrides=args.apply_overrides)
    emit(args, report, f"wrote {report['judgments']:,} judgments of {report['restaurants']:,} restaurants to "
                       f"{report['path']} ({report['skipped_parse_errors']} parse errors left out)")
    return 0


def run_list(args: argparse.Namespace) -> int:
    judges = list_judges(args.workspace, args.dataset, args.task)
    lines = [f"{'judge':<28} {'n':>8} {'errors':>7}  last created_at            prompt" if judges
             else f"no judgments for {args.dataset}/{args.task}"]
    for j in judges:
        mark = " (GT)" if j["is_gt_judge"] else ""
        lines.append(f"{j['judge'] + mark:<28} {j['n']:>8,} {j['n_parse_errors']:>7,}  "
                     f"{j['last_created_at'] or '':<26} {','.join(j['prompt_versions'])}")
    emit(args, judges, "\n".join(lines))
    return 0


def run_set_gt(args: argparse.Namespace) -> int:
    set_gt_judge(args.workspace, args.dataset, args.task, args.judge)
    emit(args, {"dataset": args.dataset, "task": args.task, "gt_judge": args.judge},
         f"GT judge of {args.dataset}/{args.task}: {args.judge}")
    return 0


def run_prune(args: argparse.Namespace) -> int:
    judges = [args.judge] if args.judge else [j["judge"] for j in list_judges(args.workspace, args.dataset, args.task)]
    reports = [prune_stale(args.workspace, args.dataset, args.task, judge) for judge in judges]
    lines = [f"{r['judge']}: retired {r['retired']:,} stale judgments, kept {r['kept']:,}"
             + (f" (moved to {r['retired_to']})" if r["retired_to"] else "") for r in reports]
    emit(args, reports, "\n".join(lines) or f"no judgments for {args.dataset}/{args.task}")
    return 0
