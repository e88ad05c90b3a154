"""``python -m core claim``: check a claim against the workspace, or make one.

    python -m core claim check CLAIM          (a token, a /results?claim=… link, or Markdown holding one)
    python -m core claim make --run RUN [--baseline RUN] [--metric M]
    python -m core claim make --dataset D --task T --definition DEF --k K

``check`` exits 0 when the claim holds, 3 when its figure changed, 4 when its inputs changed.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.cli import emit, json_flag
from core.workspace import Workspace

EXIT = {"holds": 0, "changed": 3, "inputs changed": 4}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("claim", help="check a claim (holds, changed, inputs changed) or make one",
                       description="Claims that check themselves: a statement with its inputs pinned.")
    p.add_argument("action", choices=["check", "make"])
    p.add_argument("claim", nargs="?", help="check: the claim (token, link or Markdown)")
    p.add_argument("--run", help="make: the run of a score claim, or the run compared with --baseline")
    p.add_argument("--baseline", help="make: the baseline run of a paired claim")
    p.add_argument("--metric", default="ordinal_auprc",
                   choices=["ordinal_auprc", "process_score", "consistency_score", "accuracy"])
    p.add_argument("--dataset", help="make: a GT claim's dataset")
    p.add_argument("--task", help="make: a GT claim's task")
    p.add_argument("--definition", help="make: a GT claim's formula or policy")
    p.add_argument("--k", help="make: a GT claim's K (or 'all')")
    json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.release import claims  # deferred: scoring and GT imports
    from core.release.claim_check import check_claim, check_text
    from core.release.links import base_url

    ws = args.workspace.require()
    if args.action == "check":
        if not args.claim:
            raise ValueError("claim check needs the claim (a token, a link with claim=…, or the Markdown)")
        result = check_claim(ws, claims.decode(args.claim))
        emit(args, result, check_text(result))
        return EXIT[result["status"]]
    claim = _make(args, ws)
    out = {"claim": claim, "token": claims.encode(claim), "statement": claims.statement(claim),
           "markdown": claims.markdown(claim, base_url()), "link": claims.link(claim, base_url())}
    emit(args, out, f"{out['markdown']}\n\ntoken: {out['token']}")
    return 0


def _make(args: argparse.Namespace, ws: Workspace) -> dict[str, Any]:
    # deferred: the command's modules load only when it runs (the CLI stays quick to start)
    from core.ground_truth.ks import normalize_ks
    from core.release.claim_check import gt_claim, paired_claim, score_claim
    from core.runs.records import load_results

    if args.run:
        run = load_results(ws.run_dir(args.run))
        if args.baseline:
            return paired_claim(ws, load_results(ws.run_dir(args.baseline)), run, args.metric)
        return score_claim(ws, run, args.metric)
    if not (args.dataset and args.task and args.definition and args.k):
        raise ValueError("claim make needs --run [--baseline], or --dataset, --task, --definition and --k")
    return gt_claim(ws, args.dataset, args.task, args.definition, normalize_ks([args.k])[0])
