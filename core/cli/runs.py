"""``python -m core runs``: list, show, cancel and import runs.

    python -m core runs list
    python -m core runs show RUN_ID
    python -m core runs cancel RUN_ID
    python -m core runs rescore RUN_ID [--gt computed|FILE]   (or --all: every run whose GT is stale)
    python -m core runs import FILE [--run-id ID] [--n-boot N]   (xnot detailed_results.json or ADDM results.json)
"""

from __future__ import annotations

import argparse

from core.cli import emit
from core.runs import cancel_run, import_run_file, list_runs, show_run
from core.runs.rescore import rescore_run, rescore_stale, status_line
from core.runs.results import N_BOOT

ACTIONS = ("list", "show", "cancel", "import", "rescore")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list, show, cancel or import method runs",
                       description="Runs in the workspace (runs/{run_id}/).")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("target", nargs="?", help="RUN_ID (show, cancel, rescore) or FILE (import)")
    p.add_argument("--run-id", help="import under this run id")
    p.add_argument("--n-boot", type=int, default=N_BOOT, help="import: bootstrap resamples of the intervals (0: none)")
    p.add_argument("--all", action="store_true", help="rescore: every run whose GT is stale")
    p.add_argument("--gt", help="rescore: 'computed' (GT from the judgments and overrides now) or a GT file; "
                                "default: the run's own kind of GT, read again")
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
    if args.action == "rescore" and args.all:
        return _rescore_all(args)
    if not args.target:
        raise ValueError(f"runs {args.action} needs a {'FILE' if args.action == 'import' else 'RUN_ID'}")
    if args.action == "show":
        shown = show_run(ws, args.target)
        emit(args, shown, _show_text(shown))
    elif args.action == "rescore":
        out = rescore_run(ws, args.target, source=args.gt)
        emit(args, out, _rescored_text(out))
    elif args.action == "cancel":
        out = cancel_run(ws, args.target)
        emit(args, out, out["message"])
    else:
        out = import_run_file(ws, args.target, run_id=args.run_id, n_boot=args.n_boot)
        emit(args, out, f"imported {out['format']} run {out['run_id']} ({out['n']} samples) → {out['path']}")
    return 0


def _show_text(shown: dict) -> str:
    status = shown["status"]
    lines = [f"run {shown['run_id']}: {status.get('status')}", status_line(shown.get("gt"))]
    results = shown.get("results")
    if results:
        scores = results.get("unified_scores") or {}
        auprc = scores.get("auprc")
        lines.append(f"ordinal AUPRC {'N/A' if auprc is None else f'{auprc:.4f}'} · process "
                     f"{scores.get('process_score')} · consistency {scores.get('consistency_score')} · "
                     f"accuracy {results.get('accuracy')} on {results.get('total')} restaurants with GT")
    lines.append(f"folder: {shown['run_dir']}")
    return "\n".join(lines)


def _rescored_text(out: dict) -> str:
    b, a = out["before"], out["after"]

    def fmt(x: object) -> str:
        return "N/A" if not isinstance(x, int | float) else f"{x:.4f}"

    return (f"rescored {out['run_id']} against {out['gt']}\n"
            f"ordinal AUPRC {fmt(b['ordinal_auprc'])} → {fmt(a['ordinal_auprc'])} · accuracy {fmt(b['accuracy'])} → "
            f"{fmt(a['accuracy'])} · GT version {b['gt_version']} → {a['gt_version']}\n"
            f"the earlier scoring is kept in {out['history']}")


def _rescore_all(args: argparse.Namespace) -> int:
    out = rescore_stale(args.workspace)
    lines = [_rescored_text(r) for r in out["rescored"]]
    lines.append(f"{len(out['rescored'])} rescored, {len(out['current'])} already current, {len(out['failed'])} failed")
    lines += [f"error: {f['run_id']}: {f['error']}" for f in out["failed"]]
    emit(args, out, "\n".join(lines))
    return 1 if out["failed"] else 0
