"""``python -m core release``: a static release of the workspace, and its verification.

    python -m core release --out DIR [--datasets D ...] [--runs R ...] [--title T] [--k 25,50] [--baseline RUN]
    python -m core release verify DIR
"""

from __future__ import annotations

import argparse
import sys

from core.cli import emit, json_flag
from core.ground_truth.ks import normalize_ks


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("release", help="write a static release anyone can open and check (or verify one)",
                       description="Write a self-contained release folder (index.html, data, datasheet, claims, "
                                   "manifest), or verify one: `release verify DIR`.")
    p.add_argument("action", nargs="?", choices=["verify"], help="verify DIR: check the files and recompute every number")
    p.add_argument("target", nargs="?", metavar="DIR", help="the release folder to verify")
    p.add_argument("--out", metavar="DIR", help="the folder to write (must not exist, or be empty)")
    p.add_argument("--datasets", nargs="+", metavar="D", help="datasets to release (default: all)")
    p.add_argument("--runs", nargs="+", metavar="RUN", help="runs to release (default: every scored run of the datasets)")
    p.add_argument("--title", help="the release's title")
    p.add_argument("--k", help="K values of the GT shown (default 25,50,100,200 and the runs' K)")
    p.add_argument("--baseline", metavar="RUN", help="the run others are compared with (default: per K, direct, cot, "
                                                      "rag, keyword, random, then amos)")
    json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "verify":
        return _verify(args)
    if not args.out:
        raise ValueError("release needs --out DIR (or: release verify DIR)")
    from core.release.build import build_release  # deferred: the release pulls in altair and polars

    def report(msg: str) -> None:
        if not (args.json or args.no_progress):
            print(msg, file=sys.stderr)

    ks = normalize_ks([k for k in args.k.split(",") if k.strip()]) if args.k else None
    out = build_release(args.workspace, args.out, datasets=args.datasets, runs=args.runs, title=args.title, ks=ks,
                        baseline=args.baseline, report=report)
    text = (f"release written to {out['out']}: {out['files']} files, {out['bytes'] / 2**20:.1f} MiB, {out['runs']} runs, "
            f"{out['gts']} ground truths, {out['claims']} claims, {out['seconds']:.1f} s\n"
            f"open {out['out']}/index.html (no server needed); check it with `release verify {out['out']}`")
    text += "".join(f"\nwarning: {w}" for w in out["warnings"])
    emit(args, out, text)
    return 0


def _verify(args: argparse.Namespace) -> int:
    if not args.target:
        raise ValueError("release verify needs the release folder: release verify DIR")
    # deferred: verifying loads the whole release machinery, only for `release verify`
    from core.release.verify import verify_release

    out = verify_release(args.target)
    c = out["checked"]
    if out["ok"]:
        text = (f"ok: {c.get('files')} files match the manifest; every number of {c.get('runs')} runs, {c.get('gts')} "
                f"ground truths and {c.get('tables')} tables recomputed from data/; {c.get('claims')} claims hold "
                f"({out['seconds']:.1f} s)")
    else:
        text = "\n".join(f"FAIL {p}" for p in out["problems"]) + f"\n{len(out['problems'])} problems ({out['seconds']:.1f} s)"
    emit(args, out, text)
    return 0 if out["ok"] else 1
