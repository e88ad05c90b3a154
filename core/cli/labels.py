"""``python -m core labels …``: the label store from the command line (SPEC §6).

``init`` creates the store and a project, ``import-items`` adds items (item JSONL, results.json,
run.jsonl, or ``--from-dataset`` reviews), ``import-reviews`` adds ratings (SPEC §6.5 layout),
``export`` writes reviews and consensus, ``status`` shows coverage and raters' progress,
``agreement`` and ``consensus`` print the statistics (``--json`` for machine-readable output),
``role`` gives a rater a role, ``project`` shows or changes a project's settings (the fields
raters see, the title included; scale labels; guidelines; extra raters where they disagree),
``link`` creates a rater's personal sign-in link for the team mode.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from core.base.errors import DataError, WorkbenchError
from core.base.files import require_file
from core.base.progress import cli_progress
from core.cli import emit, json_flag
from core.labeling import consensus as cons
from core.labeling import items as labeling_items
from core.labeling.export import _parse_review_lines as parse_review_lines
from core.labeling.export import export_project, import_reviews
from core.labeling.identity import set_role
from core.labeling.links import create_link, revoke_links
from core.labeling.reports import project_summary, ratings_frame
from core.labeling.store import ROLES, SPREAD_MEASURES, LabelStore, open_store
from core.workspace import check_name, is_valid_name


def _project_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--project", metavar="NAME", help="labeling project (default: the only one)")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``labels`` and its subcommands."""
    parser = subparsers.add_parser("labels", help="human labeling: projects, items, ratings, agreement, export")
    sub = parser.add_subparsers(dest="labels_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("init", help="create the label store and a project (idempotent)")
    p.add_argument("project", help="project name (letters, digits, '_', '-', '.')")
    p.add_argument("--guidelines", metavar="FILE", help="the rating guidelines: a markdown file, or the name of one the workbench ships (aita)")
    p.add_argument("--labels", nargs=3, metavar=("NEG", "ZERO", "POS"), help="what -1, 0 and +1 mean")
    p.add_argument("--target", type=int, help="raters per item (default 3)")
    p.add_argument("--visible-fields", metavar="A,B", help="exactly the fields raters see (default prompt_title; "
                   "also item columns and metadata keys)")
    p.add_argument("--reservation-seconds", type=int, help="how long a handed-out item stays reserved (default 300)")
    p.add_argument("--admin", metavar="CODE", help="make this rater code an admin")
    _settings_args(p)
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("project", help="show or change a project's settings: fields raters see (the title "
                       "included), scale labels, guidelines, target raters, extra raters where they disagree")
    p.add_argument("project")
    p.add_argument("--guidelines", metavar="FILE", help="the rating guidelines: a markdown file, or the name of one the workbench ships (aita)")
    p.add_argument("--labels", nargs=3, metavar=("NEG", "ZERO", "POS"), help="what -1, 0 and +1 mean")
    p.add_argument("--target", type=int, help="raters per item")
    p.add_argument("--visible-fields", metavar="A,B", help="exactly these fields (prompt_title, item columns, "
                   "metadata keys); '' shows none")
    _settings_args(p)
    json_flag(p)
    p.set_defaults(func=cmd_project)

    p = sub.add_parser("link", help="create a rater's personal sign-in link for the team mode (or --revoke them)")
    p.add_argument("code")
    p.add_argument("--revoke", action="store_true", help="revoke every link of the code instead")
    p.add_argument("--by", default="cli", help="who creates it (recorded)")
    p.set_defaults(func=cmd_link)

    p = sub.add_parser("import-items", help="add items from a file or a dataset's reviews")
    _project_arg(p)
    p.add_argument("path", nargs="?", help="item JSONL (SPEC §6.1), results.json or run.jsonl")
    p.add_argument("--format", default="auto", choices=["auto", "items", "results", "run"])
    p.add_argument("--dataset", help="dataset name of the items (default: the project name)")
    p.add_argument("--from-dataset", metavar="NAME", help="use this workspace dataset's reviews as items")
    p.add_argument("--limit", type=int, help="with --from-dataset: a seeded sample of this many reviews")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--contains", help="with --from-dataset: only reviews containing this text")
    p.set_defaults(func=cmd_import_items)

    p = sub.add_parser("import-reviews", help="add ratings from a reviews JSONL (SPEC §6.5 layout); without a "
                       "project, creates one named by the file's dataset (or --project)")
    _project_arg(p)
    p.add_argument("path")
    p.add_argument("--create-items", action="store_true", help="create items missing from the store")
    p.set_defaults(func=cmd_import_reviews)

    p = sub.add_parser("export", help="write {dataset}_reviews.jsonl and {project}_consensus.jsonl")
    _project_arg(p)
    p.add_argument("--out", metavar="DIR", help="folder (default: <workspace>/labels/<project>)")
    p.add_argument("--include-models", action="store_true", help="model raters count in the consensus")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("status", help="items, coverage and raters' progress")
    _project_arg(p)
    json_flag(p)
    p.set_defaults(func=cmd_status)

    for name, func, text in (("agreement", cmd_agreement, "inter-rater agreement (SPEC §6.4)"),
                             ("consensus", cmd_consensus, "consensus per item (SPEC §6.3)")):
        p = sub.add_parser(name, help=text)
        _project_arg(p)
        json_flag(p)
        p.add_argument("--include-models", action="store_true", help="include model raters (llm:…)")
        if name == "agreement":
            p.add_argument("--bins", type=float, default=None, help="bin threshold (default 0.33)")
            p.add_argument("--boot", type=int, default=None, help="bootstrap resamples (default 1000)")
            p.add_argument("--seed", type=int, default=0)
        p.set_defaults(func=func)

    p = sub.add_parser("role", help="give a rater a role: rater, adjudicator or admin")
    p.add_argument("code")
    p.add_argument("role", choices=ROLES)
    p.set_defaults(func=cmd_role)


def _settings_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--show", metavar="A,B", help="also show these fields to raters (e.g. prompt_title)")
    p.add_argument("--hide", metavar="A,B", help="hide these fields from raters (e.g. prompt_title)")
    p.add_argument("--target-spread", metavar="X", help="route one more rater to an item whose raters disagree "
                   "beyond X (0 < X ≤ 2); 'none' turns it off")
    p.add_argument("--spread-measure", choices=SPREAD_MEASURES, help="range (max − min, default) or ci_width "
                   "(width of the 95%% interval of the item's mean)")
    p.add_argument("--max-raters", type=int, help="cap of raters per item with extra ones (default target + 2)")


def _fields(text: str | None) -> list[str]:
    return [f.strip() for f in (text or "").split(",") if f.strip()]


def _settings(args: argparse.Namespace, current: tuple[str, ...]) -> dict[str, Any]:
    """The project settings the arguments change (``current``: the visible fields now)."""
    settings: dict[str, Any] = {}
    if args.guidelines:
        settings["guidelines"] = _guidelines(args.guidelines)
    if args.labels:
        settings["scale_labels"] = tuple(args.labels)
    if args.target is not None:
        settings["target_raters"] = args.target
    fields = list(current) if args.visible_fields is None else _fields(args.visible_fields)
    fields = [f for f in [*fields, *_fields(args.show)] if f not in _fields(args.hide)]
    if args.visible_fields is not None or args.show or args.hide:
        settings["visible_fields"] = list(dict.fromkeys(fields))
    if args.target_spread is not None:
        settings["target_spread"] = None if args.target_spread.lower() == "none" else float(args.target_spread)
    for name in ("spread_measure", "max_raters"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    if getattr(args, "reservation_seconds", None) is not None:
        settings["reservation_seconds"] = args.reservation_seconds
    return settings


def _project_payload(project: labeling_items.Project) -> dict[str, Any]:
    return {"project": project.name, "target_raters": project.target_raters,
            "scale_labels": list(project.scale_labels), "visible_fields": list(project.visible_fields),
            "title_shown": "prompt_title" in project.visible_fields, "guidelines": project.guidelines,
            "target_spread": project.target_spread, "spread_measure": project.spread_measure,
            "max_raters": project.raters_cap, "reservation_seconds": project.reservation_seconds}


def _store(args: argparse.Namespace, *, create: bool = False, reading: bool = False) -> LabelStore:
    """The workspace's label store; only commands that write (``create``) create the workspace, and
    commands that only read (``reading``) open a store this user cannot write read-only."""
    if create:
        args.workspace.ensure()
    else:
        args.workspace.require()
    return open_store(args.workspace.root, reading=reading)


def _project(store: LabelStore, name: str | None) -> labeling_items.Project:
    if name:
        return labeling_items.get_project(store, name)
    projects = labeling_items.list_projects(store)
    if len(projects) == 1:
        return projects[0]
    names = ", ".join(p.name for p in projects) or "none yet; run `python -m core labels init NAME`"
    raise WorkbenchError(f"choose a project with --project ({names})")


def cmd_init(args: argparse.Namespace) -> int:
    store = _store(args, create=True)
    existing = {p.name: p for p in labeling_items.list_projects(store)}
    current = existing[args.project].visible_fields if args.project in existing else \
        labeling_items.DEFAULT_VISIBLE_FIELDS
    settings = _settings(args, current)
    existed = args.project in existing
    project = labeling_items.create_project(store, args.project, exist_ok=True, **({} if existed else settings))
    if existed and settings:
        project = labeling_items.update_project(store, args.project, **settings)
    if args.admin:
        set_role(store, args.admin, "admin")
    payload = {**_project_payload(project), "created": not existed, "store": repr(store)}
    emit(args, payload, f"{'updated' if existed else 'created'} project {project.name} in {store!r}")
    return 0


def cmd_project(args: argparse.Namespace) -> int:
    store = _store(args)
    project = labeling_items.get_project(store, args.project)
    settings = _settings(args, project.visible_fields)
    if settings:
        project = labeling_items.update_project(store, project.name, **settings)
    p = _project_payload(project)
    routing = (f"an extra rater when the {p['spread_measure']} exceeds {p['target_spread']}, up to {p['max_raters']}"
               if p["target_spread"] is not None else "no extra raters")
    text = (f"{project.name}: {p['target_raters']} raters per item ({routing})\n"
            f"  raters see: {', '.join(p['visible_fields']) or 'the prompt and the response only'}"
            f"{'' if p['title_shown'] else ' (title hidden)'}\n"
            f"  scale: -1 {p['scale_labels'][0]} · 0 {p['scale_labels'][1]} · +1 {p['scale_labels'][2]}\n"
            f"  guidelines: {len(p['guidelines']):,} characters")
    emit(args, p, ("updated " if settings else "") + text)
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    store = _store(args)
    if args.revoke:
        n = revoke_links(store, args.code)
        emit(args, {"code": args.code, "revoked": n}, f"revoked {n} link(s) of {args.code}")
        return 0
    token = create_link(store, args.code, by=args.by)
    path = f"/labeling?key={token}"
    emit(args, {"code": args.code, "path": path},
         f"{args.code}'s sign-in link (shown once; send it to them only): <app URL>{path}")
    return 0


def cmd_import_items(args: argparse.Namespace) -> int:
    store = _store(args, create=True)
    project = _project(store, args.project)
    if bool(args.path) == bool(args.from_dataset):
        raise ValueError("give either a file path or --from-dataset NAME")
    with cli_progress("import items", enabled=not args.no_progress) as progress:
        if args.from_dataset:
            report = labeling_items.import_dataset_reviews(
                store, project, args.workspace, args.from_dataset, limit=args.limit, seed=args.seed,
                contains=args.contains, progress=progress)
        else:
            report = labeling_items.import_items_file(store, project, args.path, dataset=args.dataset,
                                                      fmt=args.format, progress=progress)
    emit(args, report.as_dict(), f"{project.name}: added {report.added:,} items, skipped {report.skipped:,} existing")
    return 0


def _file_dataset(path: str) -> str:
    """The one ``dataset`` named by the lines of a reviews JSONL (a project name for it)."""
    names: set[str] = set()
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise DataError(f"not JSON: {exc}", path=path, line=number) from None
            if isinstance(row, dict) and isinstance(row.get("dataset"), str):
                names.add(row["dataset"])
    if len(names) != 1:
        found = ", ".join(sorted(names)) or "none"
        raise WorkbenchError(f"{path}: no single 'dataset' to name a project after (found: {found}); pass --project")
    return check_name("project", names.pop())


def _project_for_reviews(store: LabelStore, args: argparse.Namespace) -> tuple[labeling_items.Project, bool]:
    """The project to import ratings into; in a workspace without any, one named by --project or the file's dataset.

    The file is checked line by line first, so a bad file creates no project.
    """
    if labeling_items.list_projects(store):  # an unknown --project among existing ones is an error
        return _project(store, args.project), False
    name = check_name("project", args.project) if args.project else _file_dataset(args.path)
    list(parse_review_lines(Path(args.path), name))
    return labeling_items.create_project(store, name, exist_ok=True), True


def cmd_import_reviews(args: argparse.Namespace) -> int:
    require_file(args.path)  # missing, or a folder / device / pipe named as such
    store = _store(args, create=True)
    project, created = _project_for_reviews(store, args)
    if created:  # a new project has no items yet: the file's lines carry them
        print(f"created labeling project {project.name} (items from the file)", file=sys.stderr)
    with cli_progress("import reviews", enabled=not args.no_progress) as progress:
        report = import_reviews(store, project, args.path, create_items=args.create_items or created,
                                progress=progress)
    d = report.details
    emit(args, report.as_dict(), f"{project.name}: added {report.added:,} ratings, skipped {report.skipped:,} "
         f"already stored; {d['items_created']:,} items created; raters: {', '.join(d['raters'])}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    store = _store(args, reading=True)
    project = _project(store, args.project)
    if not args.out and store.read_only:  # the default folder is inside the workspace
        raise WorkbenchError(f"the label store cannot be written ({store.read_only}), nor the workspace's labels "
                             "folder: export with --out DIR, a folder you can write")
    out = Path(args.out) if args.out else args.workspace.labels_export_dir(project.name)
    result = export_project(store, project, out, include_models=args.include_models)
    lines = [f"{n} -> {path}" for n, path in result["reviews"].items()]
    lines.append(f"{result['n_consensus']:,} consensus lines -> {result['consensus']}")
    emit(args, result, f"{result['n_reviews']:,} reviews exported\n" + "\n".join(lines))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    store = _store(args, reading=True)
    projects = [_project(store, args.project)] if args.project else labeling_items.list_projects(store)
    payload = [project_summary(store, p) for p in projects]
    lines = []
    for s in payload:
        cov = "  ".join(f"{k} raters: {v:,}" for k, v in s["coverage"].items())
        lines.append(f"{s['project']}: {s['items']:,} items, {s['complete_items']:,} complete "
                     f"(target {s['target_raters']}), {s['ratings']:,} ratings by {s['raters']} raters"
                     f"{_routed(s['extra_raters_routed'])}\n  {cov}")
        lines += [f"  {r['rater']:<28} {r['role']:<12}{r['n_ratings']:>7,} ratings {r['n_items']:>7,} items "
                  f"{r['n_repeats']:>5,} repeats" for r in s["rater_progress"]]
    emit(args, payload, "\n".join(lines) or "no labeling projects yet")
    return 0


def _routed(n: int) -> str:
    return f"; {n:,} extra rater{'' if n == 1 else 's'} routed to items whose raters disagree" if n else ""


def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def cmd_agreement(args: argparse.Namespace) -> int:
    store = _store(args, reading=True)
    project = _project(store, args.project)
    frame = ratings_frame(store, project, include_models=args.include_models)
    # scipy is slow to import: only the commands that compute statistics load it
    from core.labeling.agreement import DEFAULT_BIN_THRESHOLD, DEFAULT_N_BOOT, agreement_report, json_safe

    rep = agreement_report(frame, threshold=DEFAULT_BIN_THRESHOLD if args.bins is None else args.bins,
                           n_boot=DEFAULT_N_BOOT if args.boot is None else args.boot, seed=args.seed)
    a, icc, b = rep["alpha"], rep["icc"], rep["binned"]
    lines = [
        f"{project.name}: {rep['n_ratings']:,} ratings, {rep['n_items']:,} items ({rep['n_items_multi']:,} with ≥ 2 "
        f"raters), {rep['n_raters']} raters",
        f"Krippendorff's alpha (interval) {_fmt(a['value'])}  95% CI [{_fmt(a['ci'][0])}, {_fmt(a['ci'][1])}]  {a['band']}",
        f"ICC(1,1) {_fmt(icc['icc1'])}  [{_fmt(icc['icc1_lo'])}, {_fmt(icc['icc1_hi'])}]  {icc['band_icc1']}",
        f"ICC(1,k) {_fmt(icc['icck'])}  [{_fmt(icc['icck_lo'])}, {_fmt(icc['icck_hi'])}]  {icc['band_icck']}  "
        f"(k0 = {_fmt(icc['k0'], 2)})",
        f"Fleiss' kappa (bins ±{b['threshold']}) {_fmt(b['kappa'])}  [{_fmt(b['kappa_lo'])}, {_fmt(b['kappa_hi'])}]  "
        f"{b['band']}; observed agreement {_fmt(b['observed_agreement'])}",
    ]
    lines += [f"  {p['rater_a']} ~ {p['rater_b']}: n={p['n']}, pearson {_fmt(p['pearson'])}, "
              f"spearman {_fmt(p['spearman'])}" for p in rep["pairwise"]]
    lines += [f"  bias {r['rater']}: {_fmt(r['mean_signed_deviation'])} [{_fmt(r['ci_lo'])}, {_fmt(r['ci_hi'])}] "
              f"(n={r['n']})" for r in rep["rater_bias"]]
    lines += [f"  retest {r['rater']}: {r['n_pairs']} pairs, mean |diff| {_fmt(r['mean_abs_diff'])}, "
              f"same bin {_fmt(r['same_bin'])}" for r in rep["test_retest"]]
    emit(args, json_safe(rep), "\n".join(lines))
    return 0


def cmd_consensus(args: argparse.Namespace) -> int:
    store = _store(args, reading=True)
    project = _project(store, args.project)
    # deferred: only the `labels` command needs it (CLI start-up)
    from core.labeling.agreement import json_safe

    frame = cons.compute_consensus(store, project, include_models=args.include_models)
    summary = cons.consensus_summary(frame)
    rows = frame.with_columns(frame["adjudicated_at"].cast(str)).to_dicts()
    text = (f"{project.name}: {summary['items']:,} items with ≥ 2 raters: {summary['calculated']:,} calculated, "
            f"{summary['adjudicated']:,} adjudicated, {summary[cons.NEEDS_DISCUSSION]:,} need discussion")
    emit(args, json_safe({"summary": summary, "items": rows}), text)
    return 0


def cmd_role(args: argparse.Namespace) -> int:
    store = _store(args, create=True)
    set_role(store, args.code, args.role)
    emit(args, {"code": args.code, "role": args.role}, f"{args.code} is now {args.role}")
    return 0


SHIPPED_GUIDELINES = Path(__file__).resolve().parents[1] / "labeling" / "data"


def _guidelines(ref: str) -> str:
    """Guidelines text: a shipped set by name (``aita`` → ``core/labeling/data/aita_guidelines.md``),
    else a markdown file path (resolved against the current folder)."""
    shipped = SHIPPED_GUIDELINES / f"{ref}_guidelines.md"
    if is_valid_name(ref) and shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    return Path(ref).read_text(encoding="utf-8")
