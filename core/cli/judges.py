"""``python -m core judges compare``: two judgment sets of one task, field by field and verdict by verdict."""

from __future__ import annotations

import argparse
from typing import Any

from core.cli import emit
from core.ground_truth.views.judge_compare import compare_judges


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judges", help="compare judges")
    cmds = p.add_subparsers(dest="judges_command", metavar="ACTION", required=True)
    cmp = cmds.add_parser("compare", help="field agreement, Cohen's kappa, and the GT verdicts two judges give")
    cmp.add_argument("--dataset", required=True)
    cmp.add_argument("--task", default="G1a")
    cmp.add_argument("--a", required=True, metavar="JUDGE_A", help="a judge id, e.g. heuristic-v1")
    cmp.add_argument("--b", required=True, metavar="JUDGE_B", help="another judge id, e.g. gpt-5-nano")
    cmp.add_argument("--formula", action="append", metavar="F",
                     help="formula or policy (repeatable; default: every one of the task)")
    cmp.add_argument("--k", nargs="+", default=["25", "50", "100", "200"], metavar="K", help="K values or 'all'")
    cmp.set_defaults(func=run_compare)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _text(r: dict[str, Any]) -> str:
    lines = [f"{r['a']} ({r['n_a']} judgments) vs {r['b']} ({r['n_b']}) on {r['dataset']}/{r['task']}: "
             f"{r['n_both']} reviews judged by both, {len(r['only_a'])} only by {r['a']}, "
             f"{len(r['only_b'])} only by {r['b']}", "", "field                  agreement  kappa"]
    for name, f in r["fields"].items():
        kappa = "n/a" if f["kappa"] is None else f"{f['kappa']:.3f}"
        lines.append(f"{name:<22} {_pct(f['agreement']):>9}  {kappa}")
    lines += ["", "definition      K     verdict agreement  mean |score diff|  restaurants that differ"]
    for v in r["verdicts"]:
        k = "all" if v["k"] is None else v["k"]
        diff = "n/a" if v["mean_abs_score_diff"] is None else f"{v['mean_abs_score_diff']:.2f}"
        names = ", ".join(f"{d['name']} ({d['verdict_a']} → {d['verdict_b']})" for d in v["differing"][:5])
        more = f" and {len(v['differing']) - 5} more" if len(v["differing"]) > 5 else ""
        lines.append(f"{v['definition']:<15} {k!s:<5} {_pct(v['verdict_agreement']):>17}  {diff:>17}  "
                     f"{names or '-'}{more}")
    return "\n".join(lines)


def run_compare(args: argparse.Namespace) -> int:
    ks = [None if k == "all" else int(k) for k in args.k]
    report = compare_judges(args.workspace, args.dataset, args.task, args.a, args.b,
                            definitions=args.formula, ks=ks)
    emit(args, report, _text(report))
    return 0
