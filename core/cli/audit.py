"""``python -m core audit``: judge audits (issue 28).

    python -m core audit plan --dataset D --task T --judge J [--formula P] [--k K] [--target 0.05]
                              [--project NAME] [--raters 2] [--seed S] [--dry-run]
    python -m core audit report --project P [--judge J] [--confusion-out FILE] [--json]

``plan`` samples the judge's reviews (knife-edge reviews first, then each stratum of its field
values, as many as a 95 % Wilson interval of width ``--target`` needs per judged value) and
creates the labeling project raters answer on the Labeling page. ``report`` measures every judge
against the raters' consensus; ``--confusion-out`` writes the confusion file ``gt uncertainty
--confusion`` reads (``gt uncertainty --audit P`` reads the audit directly).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from core.base.files import write_json_atomic
from core.cli import emit, json_flag
from core.ground_truth import k_label, normalize_ks


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("audit", help="judge audits: plan a human audit of a judge's answers, report each judge "
                                          "against the human consensus")
    actions = parser.add_subparsers(dest="audit_action", metavar="ACTION", required=True)
    p = actions.add_parser("plan", help="sample reviews (knife-edge first, stratified by the judge's answers) and "
                                        "create the audit's labeling project")
    p.add_argument("--dataset", required=True)
    p.add_argument("--task", default="G1a", help="task id (default G1a)")
    p.add_argument("--judge", required=True, help="the judge whose answers the sample is stratified by")
    p.add_argument("--formula", help="GT definition whose knife-edge reviews go first (default: G1_allergy_V2 for G1a, "
                                     "else the task's first policy, else its default formula)")
    p.add_argument("--k", default="25", help="K of the knife-edge search (default 25; 'all' for every review)")
    p.add_argument("--target", type=float, default=0.05,
                   help="width of each judged value's 95%% Wilson interval (default 0.05)")
    p.add_argument("--project", help="project name (default audit-{judge}-{dataset})")
    p.add_argument("--raters", type=int, default=2, help="raters per review (default 2; ties go to adjudication)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("--dry-run", action="store_true", help="show the plan, create nothing")
    json_flag(p)
    p.set_defaults(func=_plan)
    p = actions.add_parser("report", help="each judge against the human consensus: confusion, precision and recall "
                                          "with Wilson intervals, Cohen's kappa")
    p.add_argument("--project", required=True, help="the audit's labeling project")
    p.add_argument("--judge", action="append", help="only this judge (repeatable; default every judge)")
    p.add_argument("--confusion-out", metavar="FILE", help="write the judge's confusion file (needs one judge: --judge, "
                                                           "or the judge the audit was planned for)")
    json_flag(p)
    p.set_defaults(func=_report)


def _plan(args: argparse.Namespace) -> int:
    # deferred: a command imports only what it needs (start-up time of every other command)
    from core.ground_truth.audit.project import create_audit, plan_audit_ws
    from core.labeling.store import open_store
    from core.workspace import check_name

    ks = normalize_ks(args.k)
    if len(ks) != 1:
        raise ValueError(f"audit plan takes one K, got {args.k!r}")
    if args.raters < 1:
        raise ValueError(f"--raters must be ≥ 1, got {args.raters}")
    ws = args.workspace
    name = args.project or f"audit-{args.judge}-{args.dataset}"
    check_name("project", name)
    plan = plan_audit_ws(ws, args.dataset, args.task, args.judge, definition=args.formula, k=ks[0],
                         target=args.target, seed=args.seed)
    payload: dict[str, Any] = {"project": None if args.dry_run else name, "raters": args.raters, **plan.to_dict()}
    payload.pop("sample")
    payload["reviews"] = plan.size
    payload["knife_edge_reviews"] = sum(1 for s in plan.sample.values() if s["knife_edge"])
    if not args.dry_run:
        create_audit(open_store(ws.root), ws, plan, name, raters=args.raters)
    emit(args, payload, _plan_text(payload, plan.notes))
    return 0


def _plan_text(p: dict[str, Any], notes: tuple[str, ...]) -> str:
    lines = [f"audit of {p['judge']} on {p['dataset']}/{p['task']}: {p['reviews']} of {p['population']} judged reviews "
             f"({p['knife_edge_reviews']} knife-edge under {p['definition']} at K={k_label(p['k'])}), "
             f"target 95% Wilson width {p['target']} → n_eff ≥ {p['needed']} per judged value"]
    for m in p["marginals"]:
        width = "—" if m["width_at_half"] is None else f"{m['width_at_half']:.3f}"
        lines.append(f"  {m['field']}={m['value']}: {m['sample']} of {m['reviews']} (n_eff {m['n_eff']:.1f}, "
                     f"width ≤ {width}{', census' if m['census'] else ''})")
    lines.extend(f"  note: {n}" for n in notes)
    lines.append(f"created labeling project {p['project']} ({p['raters']} raters per review): raters answer on the "
                 "Labeling page" if p["project"] else "dry run: nothing created")
    return "\n".join(lines)


def _report(args: argparse.Namespace) -> int:
    # deferred: a command imports only what it needs (start-up time of every other command)
    from core.ground_truth.audit.report import audit_report, report_confusion
    from core.labeling.store import open_store, store_exists

    ws = args.workspace
    if not store_exists(ws.root):
        raise ValueError(f"no label store in {ws.root}: make an audit with `workbench audit plan`")
    report = audit_report(open_store(ws.root), ws, args.project, judges=args.judge)
    if args.confusion_out:
        judge = args.judge[0] if args.judge and len(args.judge) == 1 else None
        if args.judge and len(args.judge) > 1:
            raise ValueError("--confusion-out writes one judge's confusion: give one --judge")
        confusion = report_confusion(report, judge or report["planned_for"])
        write_json_atomic(Path(args.confusion_out), confusion)
        report["confusion_out"] = {"file": str(args.confusion_out), "judge": judge or report["planned_for"]}
    emit(args, report, _report_text(report))
    return 0


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _report_text(r: dict[str, Any]) -> str:
    c = r["consensus"]
    lines = [f"audit {r['project']}: {r['items']} reviews of {r['dataset']}/{r['task']}; consensus on {c['items']} "
             f"({c['needs_adjudication']} fields await adjudication)"]
    for j in r["judges"]:
        lines.append(f"judge {j['judge']} ({j['reviews']} audited reviews)")
        for f in j["fields"]:
            lines.append(f"  {f['field']}: n={f['n']}, Cohen's kappa {_fmt(f['kappa'])}; rows judged, columns human: "
                         + json.dumps(dict(zip(f["values"], f["matrix"], strict=True))))
            for v in f["per_value"]:
                lines.append(f"    {v['value']}: precision {_fmt(v['precision'])} [{_fmt(v['precision_low'])}, "
                             f"{_fmt(v['precision_high'])}] (judged {v['judged']}), recall {_fmt(v['recall'])} "
                             f"[{_fmt(v['recall_low'])}, {_fmt(v['recall_high'])}] (true {v['true']})")
    if "confusion_out" in r:
        lines.append(f"wrote the confusion of {r['confusion_out']['judge']} to {r['confusion_out']['file']}")
    return "\n".join(lines)
