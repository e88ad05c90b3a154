"""``python -m core study …``: the perspective study (SPEC §7) from the command line.

``grid`` writes a mirrored prompt grid, ``import`` brings in a scenario seed, a run or a scored run
(scorer name kept), ``collect`` runs the grid against models (resumable), ``audit`` pushes a
blinded, stratified sample of a scored run to a labeling project, ``analyze`` prints scores by
model and perspective, uplifts and (with ``--project``) the model against the humans, ``list``
shows the studies and their runs.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import require_file
from core.base.progress import cli_progress
from core.cli import emit, json_flag
from core.cli.refs import study_run_file


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``study`` and its subcommands."""
    parser = subparsers.add_parser("study", help="perspective study: prompt grid, responses, audit, analysis")
    sub = parser.add_subparsers(dest="study_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("grid", help="write a mirrored landlord/tenant/neutral prompt grid")
    p.add_argument("--study", required=True)
    p.add_argument("--templates", metavar="FILE", help="templates JSONL (default: the shipped rent templates)")
    p.add_argument("--factors", metavar="FILE", help="factor levels JSON (default: the shipped levels)")
    p.add_argument("--template", action="append", metavar="ID", help="keep only this template (repeatable)")
    json_flag(p)
    p.set_defaults(func=cmd_grid)

    p = sub.add_parser("import", help="import a scenario seed, a run.jsonl or a run_scored.jsonl into a study")
    p.add_argument("path")
    p.add_argument("--study", required=True)
    json_flag(p)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("collect", help="run the study's grid against models, writing run.jsonl (resumable)")
    p.add_argument("--study", required=True)
    p.add_argument("--model", action="append", required=True, metavar="M",
                   help="offline:advisor-balanced, offline:advisor-agreeable or an endpoint model id (repeatable)")
    p.add_argument("--run-id", help="run to create or resume (default: a new timestamp)")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int)
    json_flag(p)
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("audit", help="push a blinded, stratified sample of a scored run to a labeling project")
    p.add_argument("scored", metavar="RUN", help="a scored study run STUDY/RUN_ID of the workspace, or a run_scored.jsonl path")
    p.add_argument("--project", required=True)
    p.add_argument("--n", type=int, default=100, help="responses to sample (default 100)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", type=int, default=3, help="raters per item (default 3)")
    json_flag(p)
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("analyze", help="scores by model and perspective, uplifts, model vs human")
    p.add_argument("scored", metavar="RUN", help="a scored study run STUDY/RUN_ID of the workspace, or a run_scored.jsonl path")
    p.add_argument("--project", help="audit project: adds model vs human on the audited items")
    p.add_argument("--bins", type=float, help="stance bin threshold (default 0.33)")
    p.add_argument("--top", type=int, default=10, help="disagreements to list")
    json_flag(p)
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("list", help="studies with their grids and runs")
    json_flag(p)
    p.set_defaults(func=cmd_list)


def cmd_grid(args: argparse.Namespace) -> int:
    # deferred: only the `study` command needs it (CLI start-up)
    from core.study import grid
    from core.study.runs import GRID_FILE, study_dir

    templates = grid.read_templates(args.templates or grid.DEFAULT_TEMPLATES)
    factors = grid.read_factors(args.factors or grid.DEFAULT_FACTORS)
    prompts = grid.build_grid(templates, factors, template_ids=args.template)
    path = study_dir(args.workspace, args.study) / GRID_FILE
    args.workspace.ensure()
    grid.write_grid(path, prompts)
    summary = {**grid.grid_summary(prompts), "path": str(path)}
    by = summary["by_perspective"]
    emit(args, summary, f"{summary['prompts']} prompts ({summary['scenarios']} scenarios; landlord {by['landlord']}, "
         f"tenant {by['tenant']}, neutral {by['neutral']}) -> {path}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    # deferred: only the `study` command needs it (CLI start-up)
    from core.base.files import write_jsonl_atomic
    from core.labeling.sources import detect_format
    from core.study import grid, runs

    path = Path(args.path)
    require_file(path)  # missing, or a folder / device / pipe named as such
    found = next(iter(runs.jsonl_objects(path)), None)
    if found is None:  # an empty import would create an empty study
        raise DataError("no records (every line blank or a # comment): nothing to import", path=path)
    args.workspace.ensure()
    first = found[1]
    if "scorer_model" in first and "score" in first:
        result = runs.import_scored_run(args.workspace, path, study=args.study)
        text = (f"scored run {result['run_id']}: {result['records']} records (scorer {', '.join(result['scorers'])}) "
                f"-> {result['path']}")
    elif detect_format(path) == "run":
        records = runs.read_run(path, scored=False)
        run_ids = sorted({r["run_id"] for r in records})
        if len(run_ids) != 1:
            raise ValueError(f"{path}: a run file holds one run; found run_ids {run_ids}")
        target = runs.run_dir(args.workspace, args.study, run_ids[0]) / runs.RUN_FILE
        write_jsonl_atomic(target, records)
        result = {"run_id": run_ids[0], "records": len(records), "path": str(target)}
        text = f"run {run_ids[0]}: {len(records)} records -> {target}"
    else:
        prompts, responses = grid.grid_from_seed(path)
        gpath = runs.study_dir(args.workspace, args.study) / runs.GRID_FILE
        grid.write_grid(gpath, prompts)
        written: list[str] = []
        for run_id in sorted({r["run_id"] for r in responses}):
            target = runs.run_dir(args.workspace, args.study, run_id) / runs.RUN_FILE
            write_jsonl_atomic(target, [r for r in responses if r["run_id"] == run_id])
            written.append(str(target))
        result = {"grid": str(gpath), "prompts": len(prompts), "responses": len(responses), "runs": written}
        text = f"{len(prompts)} prompts -> {gpath}; {len(responses)} responses -> {', '.join(written) or '-'}"
    emit(args, result, text)
    return 0


def cmd_collect(args: argparse.Namespace) -> int:
    # deferred: only the `study` command needs it (CLI start-up)
    from core.study import grid
    from core.study.collect import collect_responses, plan_collection
    from core.study.responders import make_responder
    from core.study.runs import GRID_FILE, RUN_FILE, run_dir, study_dir

    prompts = grid.read_grid(study_dir(args.workspace, args.study) / GRID_FILE)
    run_id = args.run_id or time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    responders = [make_responder(m, ws=args.workspace, temperature=args.temperature, max_tokens=args.max_tokens)
                  for m in args.model]
    plan = plan_collection(prompts, responders, run_dir(args.workspace, args.study, run_id) / RUN_FILE, run_id=run_id)
    with cli_progress("collect", enabled=not args.no_progress) as progress:
        result = collect_responses(plan, concurrency=args.concurrency, progress=progress)
    emit(args, result, f"run {run_id}: {result['answered']} answered, {result['failed']} failed (recorded; a resume "
         f"retries them), {result['already_done']} already done -> {result['path']}")
    return 1 if result["failed"] else 0


def cmd_audit(args: argparse.Namespace) -> int:
    # deferred: only the `study` command needs it (CLI start-up)
    from core.labeling.store import open_store
    from core.study import audit
    from core.study.runs import read_run

    records = read_run(study_run_file(args.workspace, args.scored, scored=True), scored=True)
    sample = audit.stratified_sample(records, args.n, seed=args.seed)
    args.workspace.ensure()
    project, report = audit.push_audit(open_store(args.workspace.root), args.project, sample,
                                       target_raters=args.target)
    strata: dict[str, int] = {}
    for r in sample:
        key = f"{r['model_id']} / {r['perspective']}"
        strata[key] = strata.get(key, 0) + 1
    payload = {"project": project.name, "sampled": len(sample), **report.as_dict(), "strata": strata}
    emit(args, payload, f"{len(sample)} responses sampled (seed {args.seed}); {report.added} new blinded items in "
         f"project {project.name} ({report.skipped} there already)\n" +
         "\n".join(f"  {k}: {v}" for k, v in strata.items()))
    return 0


def _f(x: Any, d: int = 3, sign: str = "+") -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:{sign}.{d}f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def cmd_analyze(args: argparse.Namespace) -> int:
    # deferred: only the `study` command needs it (CLI start-up)
    from core.labeling.agreement import DEFAULT_BIN_THRESHOLD, json_safe
    from core.study import analysis

    audit_frames, labels = None, analysis.DEFAULT_BIN_LABELS
    if args.project:
        # deferred: only the `study` command needs it (CLI start-up)
        from core.labeling.items import get_project
        from core.labeling.store import open_store
        from core.study.audit import audit_results

        store = open_store(args.workspace.root)
        project = get_project(store, args.project)
        labels, audit_frames = project.scale_labels, audit_results(store, project)
    rep = analysis.analyze(study_run_file(args.workspace, args.scored, scored=True), audit=audit_frames, labels=labels,
                           top=args.top, threshold=DEFAULT_BIN_THRESHOLD if args.bins is None else args.bins,
                           scorers_dir=args.workspace.scorers_dir)
    lines = [f"{rep['n_scored']}/{rep['n_records']} responses scored by {', '.join(rep['scorer_models'])}"
             + (f" (offline models: {', '.join(rep['offline_models'])})" if rep["offline_models"] else "")]
    lines += [f"  scorer {q['scorer']}: " + ("held-out quality unknown (no manifest)" if q["manifest"] is None else
                                           f"held-out n={q['n_test']} MAE {_f(q['mae'], sign='')} Pearson "
                                           f"{_f(q['pearson'])} CCC {_f(q['ccc'])}" + (" (weak)" if q["weak"] else ""))
              for q in rep["scorer_quality"]]
    lines += [f"  {g['model_id']:<34} {g['perspective']:<9} n={g['n']:<4} mean {_f(g['mean'])} "
              + ("[no spread: all equal]" if g["constant"] else f"[{_f(g['ci_low'])}, {_f(g['ci_high'])}]")
              + f"  {labels[0]} {_pct(g['share_tenant'])} · {labels[1]} "
              f"{_pct(g['share_balanced'])} · {labels[2]} {_pct(g['share_landlord'])}" for g in rep["by_group"]]
    lines += [f"  uplift {u['model_id']}: landlord {_f(u['landlord_uplift'])}, tenant {_f(u['tenant_uplift'])} "
              f"vs neutral; landlord − tenant {_f(u['gap'])} [{_f(u['gap_ci_low'])}, {_f(u['gap_ci_high'])}]"
              for u in rep["uplifts"]]
    lines += [f"warning: {w}" for w in rep["warnings"]]
    if "audit" in rep:
        lines.append(f"audited: {rep['audit']['n_audited']} responses with a human consensus")
        lines += [f"  {r['perspective']:<9} {r['rater']:<28} n={r['n']:<4} MAE {_f(r['mae'], sign='')} Pearson {_f(r['pearson'])} "
                  f"Spearman {_f(r['spearman'])} CCC {_f(r['ccc'])}" for r in rep["audit"]["model_vs_human"]]
    emit(args, json_safe(rep), "\n".join(lines))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    # deferred: only the `study` command needs it (CLI start-up)
    from core.study.runs import GRID_FILE, list_studies, study_dir

    rows: list[dict[str, Any]] = []
    for study in list_studies(args.workspace):
        base = study_dir(args.workspace, study)
        runs = sorted(p.name for p in (base / "runs").iterdir()) if (base / "runs").is_dir() else []
        rows.append({"study": study, "grid": (base / GRID_FILE).is_file(), "runs": runs})
    emit(args, rows, "\n".join(f"{r['study']}: grid {'yes' if r['grid'] else 'no'}; runs {', '.join(r['runs']) or '-'}"
                               for r in rows) or "no studies yet: `python -m core study grid --study NAME`")
    return 0
