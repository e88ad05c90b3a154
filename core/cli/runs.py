"""``python -m core runs``: list, show, cancel and import runs.

    python -m core runs list
    python -m core runs show RUN_ID
    python -m core runs cancel RUN_ID
    python -m core runs import FILE [--run-id ID]     (xnot detailed_results.json or ADDM results.json)
"""

from __future__ import annotations

import argparse

from core.cli import emit
from core.runs import cancel_run, import_run_file, list_runs, show_run

ACTIONS = ("list", "show", "cancel", "import")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list, show, cancel or import method runs",
                       description="Runs in the workspace (runs/{run_id}/).")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("target", nargs="?", help="RUN_ID (show, cancel) or FILE (import)")
    p.add_argument("--run-id", help="import under this run id")
    p.set_defaults(func=run)


def _money(x: object) -> str:
    return f"${float(x):.4f}" if isinstance(x, int | float) else "-"


def run(args: argparse.Namespace) -> int:
    ws = args.workspace
    if args.action == "list":
        rows = list_runs(ws)
        lines = [f"{'run_id':<52} {'status':<11} {'method':<8} {'model':<18} {'K':>4} {'done':>9} {'err':>4} "
                 f"{'tokens':>9} {'cost':>9} {'secs':>6}"]
        for r in rows:
            done = f"{r['done']}/{r['total']}" if r.get("total") is not None else "-"
            secs = f"{r['elapsed_s']:.1f}" if isinstance(r.get("elapsed_s"), int | float) else "-"
            lines.append(f"{r['run_id']:<52} {r['status'] or '-':<11} {r['method'] or '-':<8} {str(r['model'] or '-')[:18]:<18} "
                         f"{r['k'] if r['k'] is not None else '-':>4} {done:>9} {r['errors'] if r['errors'] is not None else '-':>4} "
                         f"{r['tokens']:>9,} {_money(r['cost_usd']):>9} {secs:>6}")
        emit(args, rows, "\n".join(lines) if rows else f"no runs in {ws.runs_dir}")
        return 0
    if not args.target:
        raise ValueError(f"runs {args.action} needs a {'FILE' if args.action == 'import' else 'RUN_ID'}")
    if args.action == "show":
        emit(args, show_run(ws, args.target))
    elif args.action == "cancel":
        out = cancel_run(ws, args.target)
        emit(args, out, out["message"])
    else:
        out = import_run_file(ws, args.target, run_id=args.run_id)
        emit(args, out, f"imported {out['format']} run {out['run_id']} ({out['n']} samples) → {out['path']}")
    return 0
