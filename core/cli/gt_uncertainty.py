"""``python -m core gt uncertainty``: the probability of each GT verdict under a judge's confusion.

    python -m core gt uncertainty --dataset D --task T --formula P --k K --judge J (--confusion FILE | --audit P)
                                  [--draws N] [--seed S] [--json]

``--audit P`` takes the judge's confusion from the judge audit P (the weighted rows of its report,
:mod:`core.ground_truth.audit.report`). The confusion file is ``{field: {judged value: {true value: probability}}}`` (values it does not
list are certain; each row must sum to 1 within 1e-9). See :mod:`core.ground_truth.uncertainty`.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.cli import emit
from core.ground_truth import k_label, normalize_ks
from core.ground_truth.uncertainty import EXACT_LIMIT, load_confusion, verdict_probabilities_ws
from core.ground_truth.variants import resolve_definition
from core.judgments import resolve_judge
from core.tasks import get_task


def run(args: argparse.Namespace) -> int:
    """The ``gt uncertainty`` action of :mod:`core.cli.gt`."""
    if bool(args.confusion) == bool(getattr(args, "audit", None)):
        raise ValueError("gt uncertainty needs --confusion FILE ({field: {judged value: {true value: probability}}}) "
                         "or --audit PROJECT (one of them)")
    ws = args.workspace
    chosen = resolve_definition(ws, args.formula)
    task = get_task(args.task, ws)
    judge = resolve_judge(ws, args.dataset, task.task_id, args.judge)
    if args.confusion:
        confusion = load_confusion(args.confusion, fields={f.name: f.values for f in task.fields})
        source = {"file": str(args.confusion), "sha256": confusion.sha256}
    else:
        # deferred: sqlalchemy and the label store (~350 ms), only needed with --audit
        from core.ground_truth.audit.report import audit_confusion
        from core.labeling.store import open_store

        confusion = audit_confusion(open_store(ws.root), ws, args.audit, judge)
        source = {"audit": args.audit, "sha256": confusion.sha256}
    frame = verdict_probabilities_ws(ws, args.dataset, task.task_id, chosen.definition, normalize_ks(args.k), confusion,
                                     judge=judge, draws=args.draws, seed=args.seed, constants=chosen.constants)
    restaurants = frame.drop("judgments_sha256").to_dicts()
    uncertain = [{"k": k, "n": sum(1 for r in restaurants if r["k"] == k and r["p"][r["verdict"]] < 1.0)}
                 for k in dict.fromkeys(r["k"] for r in restaurants)]
    payload: dict[str, Any] = {
        "dataset": args.dataset, "task": task.task_id, "definition": chosen.name, "judge": judge,
        "confusion": source,
        "judgments_sha256": frame["judgments_sha256"][0] if frame.height else None,
        "draws": args.draws, "seed": args.seed, "exact_limit": EXACT_LIMIT,
        "uncertain_by_k": uncertain, "restaurants": restaurants,
    }
    emit(args, payload, _text(payload))
    return 0


def _text(payload: dict[str, Any]) -> str:
    lines = [f"verdict probabilities of {payload['definition']} on {payload['dataset']}/{payload['task']} "
             f"(judge {payload['judge']}, confusion {payload['confusion'].get('file') or 'of audit ' + payload['confusion']['audit']})"]
    for entry in payload["uncertain_by_k"]:
        lines.append(f"K={k_label(entry['k'])}: {entry['n']} of "
                     f"{sum(1 for r in payload['restaurants'] if r['k'] == entry['k'])} verdicts uncertain")
    for r in payload["restaurants"]:
        if r["p"][r["verdict"]] < 1.0:
            shares = ", ".join(f"{v} {p:.3f}" for v, p in r["p"].items() if p > 0)
            how = "exact" if r["method"] == "exact" else f"{r['outcomes']:,} draws"
            lines.append(f"  K={k_label(r['k'])} {r['name']} ({r['business_id']}): {r['verdict']} → {shares} "
                         f"[{r['uncertain_reviews']} uncertain reviews, {how}]")
    return "\n".join(lines)
