"""``python -m core overrides``: add, list, revert and import human corrections (SPEC §2.5)."""

from __future__ import annotations

import argparse
import getpass

from core.base.errors import WorkbenchError
from core.cli import emit
from core.judgments.overrides import (
    add_override,
    import_addm_overrides,
    list_overrides,
    revert_override,
    task_topics,
)
from core.tasks import get_task


def _author() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "anonymous"


def _field_value(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE, got {text!r}")
    name, value = text.split("=", 1)
    return name.strip(), value.strip()


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("overrides", help="human corrections of judgments (kept apart, applied to GT)")
    cmds = p.add_subparsers(dest="overrides_command", metavar="ACTION", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--dataset", required=True)
        q.add_argument("--task", default="G1a")

    add = cmds.add_parser("add", help="correct fields of one review's judgment")
    common(add)
    add.add_argument("--review-id", help="the review (or use --business-id and --idx)")
    add.add_argument("--business-id")
    add.add_argument("--idx", type=int)
    add.add_argument("--set", dest="corrected", action="append", type=_field_value, required=True,
                     metavar="FIELD=VALUE", help="corrected value (repeatable), e.g. incident_severity=none")
    add.add_argument("--reason", required=True)
    add.add_argument("--author", default=_author())
    add.set_defaults(func=run_add)

    lst = cmds.add_parser("list", help="every override with who, when, why and its status")
    common(lst)
    lst.add_argument("--active", action="store_true", help="only overrides in effect")
    lst.set_defaults(func=run_list)

    rev = cmds.add_parser("revert", help="withdraw an override (a new record; history is kept)")
    rev.add_argument("override_id")
    common(rev)
    rev.add_argument("--reason", required=True)
    rev.add_argument("--author", default=_author())
    rev.set_defaults(func=run_revert)

    imp = cmds.add_parser("import", help="import ADDM judgment_overrides.json (one topic)")
    imp.add_argument("path")
    common(imp)
    imp.add_argument("--topic", help="ADDM topic to import (default: the task's topic, G1_allergy for G1a); "
                                     "a topic of another task is refused")
    imp.set_defaults(func=run_import)


def run_add(args: argparse.Namespace) -> int:
    rec = add_override(args.workspace, args.dataset, args.task, business_id=args.business_id, idx=args.idx,
                       review_id=args.review_id, corrected=dict(args.corrected), reason=args.reason,
                       author=args.author)
    emit(args, rec, f"override {rec['override_id']}: {rec['business_id']} idx {rec['idx']} "
                    f"{rec['original']} -> {rec['corrected']}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    rows = list_overrides(args.workspace, args.dataset, args.task)
    if args.active:
        rows = [r for r in rows if r["status"] == "active"]
    lines = [f"{r['override_id']:<18} {r['status']:<8} {r['business_id']} idx {r['idx']}  "
             f"{r['corrected'] or ('reverts ' + str(r['reverts']))}  by {r['author']} at {r['created_at']}: {r['reason']}"
             for r in rows] or [f"no overrides for {args.dataset}/{args.task}"]
    emit(args, rows, "\n".join(lines))
    return 0


def run_revert(args: argparse.Namespace) -> int:
    rec = revert_override(args.workspace, args.dataset, args.task, args.override_id, reason=args.reason,
                          author=args.author)
    emit(args, rec, f"reverted {args.override_id} (record {rec['override_id']})")
    return 0


def run_import(args: argparse.Namespace) -> int:
    topics = task_topics(get_task(args.task, args.workspace))
    if args.topic is None and len(topics) != 1:
        raise WorkbenchError(f"task {args.task} covers topics {', '.join(topics) or 'none'}: choose one with --topic")
    topic = args.topic or topics[0]
    report = import_addm_overrides(args.workspace, args.dataset, args.path, topic=topic, task=args.task)
    skipped = ", ".join(f"{k} ({v})" for k, v in report["skipped_fields"].items()) or "none"
    emit(args, report, f"imported {report['imported']} of {report['total']} overrides of {report['topic']} "
                       f"({report['already_present']} already present, {report['without_idx']} reviews not in "
                       f"{report['dataset']}); fields outside {report['task']} not applied: {skipped}")
    return 0
