"""``python -m core score`` and ``python -m core show``: score a results.json, print run summaries.

    python -m core score RESULTS.json [--gt FILE] [--dataset D] [--json] [--out F] [--n-boot N] [--seed S]
    python -m core show [RUN_DIR ...]

``score`` also takes an xnot ``detailed_results.json`` (its GT records come with it). It reads GT
from ``--gt`` (xnot or ADDM layout) or each sample's ``gt_verdict``, and review
texts (snippet validity, valid incidents) and categories from the workspace dataset ``--dataset``.
It prints; it writes the scored copy only to ``--out``. ``show`` prints the summary of each run
folder (default: the newest run in the workspace) and a comparison table of every run given
(default: all runs in the workspace).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.base.files import read_json, write_json_atomic
from core.cli import emit
from core.datasets.db import Database
from core.metrics import load_gt, score_results
from core.metrics.badges import headline_report
from core.metrics.bootstrap import paired_differences
from core.metrics.io import dataset_categories, dataset_review_texts
from core.metrics.score import resolve_policy, sample_table
from core.metrics.summary import format_comparison, format_paired, format_summary
from core.metrics.views import buckets
from core.metrics.xnot import is_xnot_detailed, results_from_xnot
from core.release.links import results_link
from core.runs.records import RESULTS_FILE, check_samples, load_results, run_dirs, spec_fallback
from core.runs.rescore import gt_status, status_line
from core.workspace import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score a results.json (SPEC §4.2) against GT: AUPRC, process, consistency")
    p.add_argument("results", help="a results.json or a run folder")
    p.add_argument("--gt", help="GT file (xnot or ADDM layout); default: each sample's gt_verdict")
    p.add_argument("--dataset", help="workspace dataset with the reviews (snippet validity, cuisine)")
    p.add_argument("--policy", help="policy to recompute verdicts with (default: the run's, else G1_allergy_V2)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples (0: no intervals)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="also write the scored results.json here")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the scored run as JSON")
    p.set_defaults(func=run_score)

    s = sub.add_parser("show", help="console summary of runs and a comparison table")
    s.add_argument("runs", nargs="*", metavar="RUN_DIR", help="run folders or results.json files")
    s.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the headline scores as JSON")
    s.set_defaults(func=run_show)


def score_file(path: str | Path, ws: Workspace, *, gt_path: str | None = None, dataset: str | None = None,
               db: Database | None = None, policy_id: str | None = None, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Score one results.json file with GT from a file or its samples and texts from a dataset;
    the policy (``policy_id``, else the run's) is the one in force in ``ws``."""
    raw = read_json(Path(path) / RESULTS_FILE if Path(path).is_dir() else path)
    xnot_gt = None
    if is_xnot_detailed(raw):  # an xnot detailed_results.json: its own GT records come with it
        results, xnot_gt = results_from_xnot(raw, path=str(path))
        check_samples(results["results"], path)  # as load_results checks a results.json
    else:
        results = load_results(path)
    gt = load_gt(gt_path, ws) if gt_path else xnot_gt
    texts = None
    if dataset:
        if db is None:
            raise ValueError("a dataset needs a workspace database")
        ids = [str(s["business_id"]) for s in results["results"]]
        k = results.get("k")
        texts = dataset_review_texts(db, dataset, ids, k if isinstance(k, int) else None)
        cats = dataset_categories(db, dataset)
        if gt is None:
            gt = {str(s["business_id"]): {"verdict": s.get("gt_verdict"), "categories": cats.get(str(s["business_id"]))}
                  for s in results["results"] if s.get("gt_verdict")}
        else:
            for bid, g in gt.items():
                g.setdefault("categories", cats.get(bid))
    policy = resolve_policy(policy_id or results.get("policy_id"), ws)
    return score_results(results, gt=gt, review_texts=texts, policy=policy, n_boot=n_boot, seed=seed)


def run_score(args: argparse.Namespace) -> int:
    db = Database(args.workspace.root) if args.dataset else None
    scored = score_file(args.results, args.workspace, gt_path=args.gt, dataset=args.dataset, db=db, policy_id=args.policy,
                        n_boot=args.n_boot, seed=args.seed)
    if args.out:
        write_json_atomic(Path(args.out), scored)
    link = _link(args.workspace, Path(args.results))
    if link:
        scored = {**scored, "link": link}
    emit(args, scored, format_summary(scored) + (f"\npage: {link}" if link else ""))
    return 0


def _link(ws: Workspace, path: Path) -> str | None:
    """The Results page link of a run of the workspace (a run folder or its results.json), else None."""
    folder = path if path.is_dir() else path.parent
    try:
        inside = folder.resolve().parent == ws.runs_dir.resolve()
    except OSError:
        return None
    return results_link(folder.name) if inside and (folder / RESULTS_FILE).exists() else None


def _scored(path: Path, ws: Workspace) -> dict[str, Any]:
    payload = load_results(path)
    if payload.get("unified_scores") is None:  # an unscored run: GT from each sample's gt_verdict
        return score_results(payload, policy=resolve_policy(payload.get("policy_id"), ws))
    return payload


def run_show(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.runs] or run_dirs(args.workspace.runs_dir)
    if not paths:
        raise FileNotFoundError(f"no runs in {args.workspace.runs_dir} (runs/*/results.json)")
    runs = [_scored(p, args.workspace) for p in paths]
    gts = [gt_status(args.workspace, r, p if p.is_dir() else p.parent) for r, p in zip(runs, paths, strict=True)]
    shown = [i for i in range(len(runs))] if args.runs else [len(runs) - 1]
    text = "\n\n".join(format_summary(runs[i]) + "\n " + status_line(gts[i]) for i in shown)
    pairs = [paired_differences(sample_table(runs[0]), sample_table(r)) for r in runs[1:]]
    if len(runs) > 1:
        labels = [f"{g.get('version') or 'none'}{' (stale)' if g.get('stale') else ''}" for g in gts]
        text += "\n\n" + format_comparison(runs, labels)
        counts = [dict(buckets(runs[0], r).group_by("bucket").len().iter_rows()) for r in runs[1:]]
        text += "\n\n" + format_paired(runs[0], runs[1:], pairs, counts)
        if len({g.get("version") for g in gts}) > 1 or len({r.get("k") for r in runs}) > 1:
            text += ("\n note: these runs were scored against different GTs (versions or K): paired differences and "
                     "newly failing / fixed use only the restaurants whose GT verdict is the same in both; rescore "
                     "them against one GT (`runs rescore RUN --gt FILE`) to compare every restaurant")
    folders = [p if p.is_dir() else p.parent for p in paths]
    first = str(runs[0].get("run_id"))
    payload = [{**{k: r.get(k) for k in ("run_id", "method", "model", "k", "total", "accuracy", "unified_scores",
                                         "intervals")}, "gt": gts[i],
                "link": results_link(str(r.get("run_id")), None if i == 0 else first),
                "headline": headline_report(r, spec_fallback(folders[i], r)),
                **({"paired_against_first": pairs[i - 1]} if i else {})} for i, r in enumerate(runs)]
    links = [f" page of {p['run_id']}: {p['link']}" for p in payload if p["link"]]
    emit(args, payload, text + ("\n\n" + "\n".join(links) if links else ""))
    return 0
