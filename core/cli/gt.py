"""``python -m core gt``: compute GT per K and write it (xnot/ADDM layouts), import, list, trace.

    python -m core gt --dataset D --task G1a --formula v1 --k 50 [--format xnot|addm] [--out F] [--judge J]
    python -m core gt --dataset D --task G1a --formula v1 --k 25,50,100,200     (distribution by K)
    python -m core gt import FILE [--dataset D]
    python -m core gt list
    python -m core gt trace --dataset D --task G1a --formula v1 --k 50 --restaurant "Vetri Cucina"
    python -m core gt diff OLD [NEW]       (OLD: a run id or a GT file; NEW: a GT file, default the GT
                                            computed now from OLD's inputs: what changed, why, and
                                            what it does to every run scored against OLD)
    python -m core gt uncertainty --dataset D --task G1a --formula G1_allergy_V2 --k 25 --confusion C.json [--draws N] [--seed S]

``--formula`` takes a formula (v1, v2), a policy id (G1_allergy_V0..V3) or a what-if variant saved on
the Trace page (its file carries the variant name and a hash of its constants); ``--k all`` uses every
review. Each K is written to its own file: ``gt/{dataset}/{task}/`` by default, or ``--out`` (a
file for one K, a folder for several).
"""

from __future__ import annotations

import argparse

from core.cli import emit, gt_uncertainty, json_flag
from core.datasets.names import find_restaurant
from core.ground_truth import (
    distribution_by_k,
    import_gt_file,
    k_label,
    list_gt_files,
    load_restaurants,
    normalize_ks,
    trace_gt_ws,
)
from core.ground_truth.coverage import short_counts, short_message
from core.ground_truth.export import export_gt, verdict_scale
from core.ground_truth.lineage import lineages_by_k
from core.ground_truth.variants import resolve_definition
from core.judgments import resolve_judge, stale_judgments

ACTIONS = ("compute", "import", "list", "trace", "diff", "uncertainty")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gt", help="ground truth: compute per K and write (default), import, list, trace, uncertainty",
        description="Compute GT (default action), import a GT file made elsewhere, list GT files, trace one restaurant, "
                    "or give each verdict's probability under a judge's confusion (uncertainty).",
    )
    p.add_argument("action", nargs="?", choices=ACTIONS, default="compute", help="default: compute")
    p.add_argument("file", nargs="?", help="GT file to import (gt import FILE); gt diff: a run id or a GT file")
    p.add_argument("other", nargs="?", help="gt diff: the newer GT file (default: computed now)")
    p.add_argument("--dataset", help="dataset name")
    p.add_argument("--task", default="G1a", help="task id (default G1a)")
    p.add_argument("--formula", default="v1",
                   help="formula (v1, v2), policy id (G1_allergy_V2) or a saved what-if variant; default v1")
    p.add_argument("--k", default="all", help="K, a comma list (25,50,100,200) or 'all' (default)")
    p.add_argument("--format", choices=("xnot", "addm"), help="file layout (default: xnot for formulas, addm for policies)")
    p.add_argument("--out", help="output file (one K) or folder (several K); default gt/{dataset}/{task}/")
    p.add_argument("--judge", help="judge whose judgments to use (default: the dataset/task's GT judge)")
    p.add_argument("--restaurant", help="business_id or name, any case (gt trace)")
    p.add_argument("--confusion", help="gt uncertainty: JSON {field: {judged value: {true value: probability}}}")
    p.add_argument("--audit", metavar="PROJECT", help="gt uncertainty: the judge's confusion measured by this judge audit")
    p.add_argument("--draws", type=int, default=20_000, help="gt uncertainty: Monte Carlo draws (default 20000)")
    p.add_argument("--seed", type=int, default=0, help="gt uncertainty: seed of the draws (default 0)")
    json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "import":
        return _import(args)
    if args.action == "diff":
        return _diff(args)
    if args.file:
        raise ValueError(f"unexpected argument {args.file!r}: only `gt import FILE` takes a file")
    if args.action == "list":
        return _list(args)
    if not args.dataset:
        raise ValueError(f"gt {args.action} needs --dataset")
    if args.action == "uncertainty":
        return gt_uncertainty.run(args)
    return _trace(args) if args.action == "trace" else _compute(args)


def _compute(args: argparse.Namespace) -> int:
    chosen = resolve_definition(args.workspace, args.formula)
    ks = normalize_ks(args.k)
    judge = resolve_judge(args.workspace, args.dataset, args.task, args.judge)
    lineages = lineages_by_k(args.workspace, args.dataset, args.task, chosen, ks, judge=judge)
    result = export_gt(args.workspace, args.dataset, args.task, chosen.definition, ks,
                       layout=args.format, judge=judge, out=args.out, constants=chosen.constants,
                       name=chosen.name, provenance=chosen.provenance(), lineages=lineages)
    frame = result.frame
    dist = distribution_by_k(frame, verdict_scale(chosen.definition, args.workspace))
    names = [c for c in dist.columns if c not in ("k", "total")]
    widths = [max(7, len(n)) for n in names]
    lines = [f"GT {result.definition} of {args.dataset}/{args.task} (judgments sha256 {frame['judgments_sha256'][0][:12]}…)",
             f"{'K':>6} " + " ".join(f"{n:>{w}}" for n, w in zip(names, widths, strict=True))]
    lines += [f"{k_label(r['k']):>6} " + " ".join(f"{r[n]:>{w}}" for n, w in zip(names, widths, strict=True))
              for r in dist.iter_rows(named=True)]
    if "reference_year" in frame.columns:
        lines.append(f"recency reference year: {frame['reference_year'][0]} (newest review of the dataset)")
    lines += [f"wrote {w['path']}" for w in result.files]
    short = short_counts(frame)
    warning = short_message(short, total=frame["business_id"].n_unique())
    if warning:
        lines.append(f"warning: {warning}")
    stale = stale_judgments(args.workspace, args.dataset, args.task, judge)
    if stale:
        lines.append(f"{stale:,} judgments left out as stale: their review's text changed since it was judged "
                     "(judge --resume judges them again; judgments prune retires them)")
    emit(args, {"definition": result.definition, "layout": result.layout, "files": result.files,
                "distribution": dist.to_dicts(), "judgments_sha256": frame["judgments_sha256"][0],
                "restaurants_short_of_k": [{"k": k, "n": n} for k, n in short.items()], "warning": warning,
                "stale_judgments": stale, "lineage": {k_label(k): v for k, v in lineages.items()}},
         "\n".join(lines))
    return 0


def _import(args: argparse.Namespace) -> int:
    if not args.file:
        raise ValueError("gt import needs a FILE")
    entry = import_gt_file(args.workspace, args.file, dataset=args.dataset)
    dist = entry["verdict_distribution"] or {}
    emit(args, entry, f"imported {entry['layout']} GT {entry['definition']} (K={k_label(entry['k'])}, "
                      f"{entry['n_restaurants']} restaurants, {dist}) as gt/{entry['name']}")
    return 0


def _list(args: argparse.Namespace) -> int:
    files = list_gt_files(args.workspace)
    lines = [f"{'file':<56} {'layout':<6} {'definition':<16} {'K':>5} {'n':>6}  imported" if files else "no GT files"]
    for f in files:
        lines.append(f"{f['name']:<56} {f['layout']:<6} {str(f['definition']):<16} {k_label(f['k']):>5} "
                     f"{f['n_restaurants']:>6}  {'yes' if f['imported'] else ''}")
    emit(args, files, "\n".join(lines))
    return 0


def _trace(args: argparse.Namespace) -> int:
    if not args.restaurant:
        raise ValueError("gt trace needs --restaurant (business_id or exact name)")
    ks = normalize_ks(args.k)
    if len(ks) != 1:
        raise ValueError("gt trace takes one K")
    k = ks[0]
    rest = load_restaurants(args.workspace, args.dataset)
    business_id = find_restaurant(rest, args.restaurant, dataset=args.dataset)
    root = trace_gt_ws(args.workspace, args.dataset, args.task, business_id, args.formula, k, judge=args.judge)
    lines = []
    for depth, node in root.walk():
        raw = "" if node.raw == node.value else f" (raw {node.raw})"
        lines.append(f"{'  ' * depth}{node.name} = {node.value}{raw}    [{node.line}]" + (f"  {node.note}" if node.note else ""))
        for r in node.reviews:
            lines.append(f"{'  ' * depth}    · idx {r.idx} {r.date or ''}: {r.explanation}")
    emit(args, root.to_dict(), "\n".join(lines))
    return 0


def _diff(args: argparse.Namespace) -> int:
    # deferred: only `gt diff` needs the runs (CLI start-up)
    from core.runs.impact import diff_versions

    if not args.file:
        raise ValueError("gt diff needs OLD: a run id or a GT file (and optionally NEW, a GT file)")
    out = diff_versions(args.workspace, args.file, args.other)
    lines = [f"old: {out['old']['description']}", f"new: {out['new']['description']}",
             f"{len(out['changed'])} of {out['n_restaurants']} restaurants change verdict"]
    for row in out["changed"]:
        lines.append(f"  {row['name']} ({row['business_id']}): {row['before']} → {row['after']}")
        lines += [f"      because {cause}" for cause in row["causes"]]
    if out["runs"]:
        lines.append("runs scored against the old GT (ordinal AUPRC before → after, difference with 95 % interval, rank):")
    for r in out["runs"]:
        d = r["differences"].get("ordinal_auprc") or {}
        interval = "" if d.get("low") is None else f" [{d['low']:+.3f}, {d['high']:+.3f}]"
        diff = "n/a" if d.get("difference") is None else f"{d['difference']:+.3f}{interval}"
        lines.append(f"  {r['run_id']}: {_num(r['before'])} → {_num(r['after'])} ({diff}) · rank {r['rank_before']} → "
                     f"{r['rank_after']}")
    emit(args, out, "\n".join(lines))
    return 0


def _num(x: object) -> str:
    return "N/A" if not isinstance(x, int | float) else f"{x:.3f}"
