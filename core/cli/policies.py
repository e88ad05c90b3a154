"""``python -m core policies``: import ADDM policies, list and show policies (package and workspace)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli import emit


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("policies", help="import ADDM policies; list and show policies")
    cmds = p.add_subparsers(dest="policies_command", metavar="ACTION", required=True)

    imp = cmds.add_parser("import", help="import ADDM policy YAMLs as workspace policies, with a task per topic")
    imp.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="ADDM policy files or folders of them")
    imp.add_argument("--terms", required=True, metavar="TERMS_DIR", help="ADDM term libraries (_shared.yaml, <topic>.yaml)")
    imp.add_argument("--as-addm-code", action="store_true",
                     help="read the files as ADDM's code computes them, not as their text says (SPEC's default): "
                          "requires ignored, YAML boolean filters never match, firsthand-only scoring whenever "
                          "judgments have account_type, no recency weights")
    imp.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the report as JSON")
    imp.set_defaults(func=run_import)

    lst = cmds.add_parser("list", help="every policy (package and workspace) with its task and verdict scale")
    lst.add_argument("--task", help="only the policies of this task")
    lst.set_defaults(func=run_list)

    show = cmds.add_parser("show", help="one policy: scale, rules with per-K thresholds, points")
    show.add_argument("policy_id")
    show.set_defaults(func=run_show)


def run_import(args: argparse.Namespace) -> int:
    # deferred: only the `policies` command needs it (CLI start-up)
    from core.ground_truth.policies.addm_import import import_policies

    report = import_policies(args.workspace, args.paths, args.terms, addm_code=args.as_addm_code)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    lines = [f"imported {len(report.imported)} polic{'y' if len(report.imported) == 1 else 'ies'}"
             + (f" ({', '.join(report.imported)}); tasks: {', '.join(report.tasks)}" if report.imported else "")]
    lines += [f"note: {p} is in force in this workspace instead of the built-in policy of that id"
              for p in report.replaces_builtin]
    lines += [f"note: {p} equals the built-in policy of that id: nothing written" for p in report.unchanged]
    if report.code_differs:
        lines.append(f"note: {len(report.code_differs)} of these policies are read as their text says where ADDM's code "
                     f"departs from it ({_departures(report.code_differs)}): their verdicts can differ from ADDM's code; "
                     "--as-addm-code reads them as the code does (docs/policies.md)")
    lines += [f"error: {e['error']}" for e in report.errors]
    emit(args, report.to_dict(), "\n".join(lines))
    return 1 if report.errors and not (report.imported or report.unchanged) else 0


def _departures(by_policy: dict[str, list[str]]) -> str:
    kinds: dict[str, int] = {}
    for departures in by_policy.values():
        for d in departures:
            kinds[d] = kinds.get(d, 0) + 1
    return ", ".join(f"{d} in {n}" for d, n in kinds.items())


def run_list(args: argparse.Namespace) -> int:
    # deferred: only the `policies` command needs it (CLI start-up)
    from core.ground_truth.policies.loader import list_policies

    rows: list[dict[str, Any]] = [{"policy_id": p.policy_id, "task": p.task, "kind": "scoring" if p.has_scoring else "rules",
             "verdicts": list(p.verdicts), "origin": p.origin or ("package" if p.source.startswith(_pkg()) else "workspace"),
             "replaces_builtin": p.replaces_builtin, "title": p.title, "dead_rules": list(p.dead_rules)}
            for p in list_policies(args.workspace, args.task)]
    flags = [dead_flag(len(r["dead_rules"])) if r["dead_rules"] else "" for r in rows]
    width = max((len(f) for f in flags), default=0)
    text = "\n".join(f"{r['policy_id']:<24} {r['task']:<14} {r['kind']:<8} " + (f"{flag:<{width}} " if width else "")
                     + " < ".join(r["verdicts"])
                     + ("   (this workspace's, in force instead of the built-in)" if r["replaces_builtin"] else "")
                     for r, flag in zip(rows, flags, strict=True))
    if any(r["dead_rules"] for r in rows):
        text += "\n\n⚠ dead rules: parts of an imported policy that can never apply (`policies show ID` lists them)"
    emit(args, rows, text or "no policies")
    return 0


def dead_flag(n: int) -> str:
    """The flag a policy with dead rules carries in lists: "⚠ 2 dead rules".

    >>> dead_flag(1), dead_flag(3)
    ('⚠ 1 dead rule', '⚠ 3 dead rules')
    """
    return f"⚠ {n} dead rule{'' if n == 1 else 's'}"


def _pkg() -> str:
    # deferred: only the `policies` command needs it (CLI start-up)
    from core.ground_truth.policies.loader import POLICY_DIR

    return str(POLICY_DIR)


def run_show(args: argparse.Namespace) -> int:
    # deferred: only the `policies` command needs it (CLI start-up)
    from core.ground_truth.policies.loader import get_policy
    from core.ground_truth.policies.text import describe_policy

    policy = get_policy(args.policy_id, ws=args.workspace)
    doc = {**describe_policy(policy), "dead_rules": list(policy.dead_rules)}
    lines = list(doc["lines"])
    if policy.dead_rules:
        lines[1:1] = [f"{dead_flag(len(policy.dead_rules))}: these parts can never apply (warned at import)",
                      *(f"  - {w}" for w in policy.dead_rules)]
    emit(args, doc, "\n".join(lines))
    return 0
