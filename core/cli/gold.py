"""``python -m core gold …``: gold answer evaluation (SPEC §8).

    python -m core gold eval (--eval-files F... | --eval-dir D | --set S) [--answers A | --model M | --use-expected]
                             [--accuracy jaccard|tfidf|embedding|llm-judge] [--accuracy-model M] [--config C]
                             [--output R | --name N]
    python -m core gold answer --set S --model M [--name N]      (a model's answers saved as an answers file)
    python -m core gold list                                     (sets, answers and reports of the workspace)
    python -m core gold show REPORT
    python -m core gold compare REPORT_A REPORT_B
    python -m core gold label REPORT --project P                 (answers to a labeling project)

Without ``--output`` a report is saved in the workspace (``gold/reports/``, and in the history).
A REPORT is a workspace report name or a path to a report file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.base.progress import cli_progress
from core.cli import emit
from core.cli.refs import exists
from core.gold import store
from core.gold.accuracy import ACCURACY_METHODS
from core.gold.answers import write_answers_file
from core.gold.compare import compare_reports, compare_summary
from core.gold.evaluation import EvalRequest, get_answers, run_evaluation
from core.gold.items import load_gold_files, resolve_eval_files
from core.gold.report import now_timestamp, read_report, write_report
from core.gold.scoring import CONFIG_NAME, load_config
from core.gold.send import send_to_labeling
from core.workspace import Workspace, check_name, is_valid_name


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``gold`` and its subcommands."""
    parser = subparsers.add_parser("gold", help="gold answer evaluation: score answers against a gold QA set")
    sub = parser.add_subparsers(dest="gold_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("eval", help="score answers against a gold set and write the report (SPEC §8)")
    where = p.add_argument_group("gold set (one of)")
    where.add_argument("--eval-files", nargs="+", metavar="F", default=[], help="eval JSONL files, in this order")
    where.add_argument("--eval-dir", metavar="D", help="a folder: its *_eval.jsonl files (and gold.json)")
    where.add_argument("--set", metavar="S", help="a set of the workspace (gold/sets/S)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--answers", metavar="A", help="answers JSONL {sample_id, predicted} (or a workspace answers name)")
    src.add_argument("--model", metavar="M", help="ask model M through the LLM endpoint (cached)")
    src.add_argument("--use-expected", action="store_true", help="score the expected outputs (grader check; default)")
    p.add_argument("--accuracy", choices=ACCURACY_METHODS.names(), help="accuracy method (default: the set's, else tfidf)")
    p.add_argument("--accuracy-model", metavar="M", help="embedding model (local:NAME for sentence-transformers) or judge model")
    p.add_argument("--config", metavar="C", help="gold.json with citation patterns, length bands, weights, thresholds")
    p.add_argument("--model-name", metavar="LABEL", help="the report's metadata.model (default from the answer source)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--output", metavar="R", help="write the report here (else: the workspace's gold/reports/)")
    out.add_argument("--name", metavar="N", help="report name in the workspace (default {set}-{source}-{time})")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("answer", help="ask a model every question of a workspace set; save its answers")
    p.add_argument("--set", required=True, metavar="S")
    p.add_argument("--model", required=True, metavar="M")
    p.add_argument("--name", metavar="N", help="answers name (default: the model)")
    p.set_defaults(func=cmd_answer)

    p = sub.add_parser("list", help="gold sets, answers and reports of the workspace")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="summary of a report")
    p.add_argument("report", metavar="REPORT")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("compare", help="two reports side by side, regressions first")
    p.add_argument("report_a", metavar="REPORT_A")
    p.add_argument("report_b", metavar="REPORT_B")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("label", help="send a report's answers to a labeling project for human rating")
    p.add_argument("report", metavar="REPORT")
    p.add_argument("--project", required=True, metavar="P")
    p.set_defaults(func=cmd_label)


def _set_source(args: argparse.Namespace) -> tuple[list[Path], Path | None, str]:
    """(eval files, config path, set name) of the eval arguments."""
    ws: Workspace = args.workspace
    given = sum(bool(x) for x in (args.eval_files, args.eval_dir, args.set))
    if given != 1:
        raise ValueError("give exactly one of --eval-files, --eval-dir, --set")
    if args.set:
        folder = store.set_dir(ws, args.set)
        return store.set_files(ws, args.set), folder / CONFIG_NAME, args.set
    if args.eval_dir:
        files = resolve_eval_files(folder=args.eval_dir)
        return files, Path(args.eval_dir) / CONFIG_NAME, store.slug(Path(args.eval_dir).resolve().name)
    files = resolve_eval_files(args.eval_files)
    return files, None, store.slug(files[0].resolve().parent.name)


def _answers_path(ws: Workspace, set_name: str, value: str) -> Path:
    path = Path(value)
    if exists(path) or path.suffix:
        return path
    return store.answers_path(ws, set_name, value)


def cmd_eval(args: argparse.Namespace) -> int:
    ws: Workspace = args.workspace
    files, config_path, set_name = _set_source(args)
    config = load_config(args.config or config_path)
    source = "answers" if args.answers else "model" if args.model else "expected"
    request = EvalRequest(files, config, source=source, model=args.model, model_label=args.model_name,
                          answers_path=_answers_path(ws, set_name, args.answers) if args.answers else None,
                          accuracy=args.accuracy, accuracy_model=args.accuracy_model, timestamp=now_timestamp())
    method = request.accuracy or config.accuracy
    with cli_progress("gold eval", enabled=not args.no_progress) as progress:
        report = run_evaluation(ws, request, progress=progress)
    if args.output:
        path = write_report(args.output, report)
    else:
        name = check_name("report", args.name) if args.name else store.default_report_name(
            set_name, request.label() if source != "expected" else "expected", report["metadata"]["timestamp"])
        path = store.save_report(ws, report, set_name=set_name, name=name, source=source, accuracy=method)
    agg = report["aggregate_metrics"]
    emit(args, {"report": str(path), "accuracy_method": method, **report["metadata"], "aggregate_metrics": agg},
         f"{report['metadata']['total_samples']} samples, accuracy by {method}: overall {agg['overall_score']:.4f}, "
         f"accuracy {agg['accuracy']:.4f}, citation {agg['citation_coverage']:.4f}, "
         f"avg length {agg['avg_length_tokens']:.1f} tokens, pass rate {agg['pass_rate']:.4f} "
         f"(goal {config.pass_rate_goal:.0%}: {'met' if agg['pass_rate'] >= config.pass_rate_goal else 'not met'})\n"
         f"wrote {path}")
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    ws: Workspace = args.workspace
    items = load_gold_files(store.set_files(ws, args.set))
    name = args.name or store.slug(args.model)
    path = store.answers_path(ws, args.set, name)
    with cli_progress("gold answer", enabled=not args.no_progress) as progress:
        answers = get_answers(ws, items, EvalRequest([], source="model", model=args.model), progress=progress)
    write_answers_file(path, items, answers)
    failed = sum(1 for a in answers.values() if a.error)
    emit(args, {"answers": str(path), "samples": len(items), "failed": failed},
         f"{len(items)} answers of {args.model} ({failed} failed) written to {path}")
    return 0


def _load(ws: Workspace, value: str) -> tuple[str, dict[str, Any]]:
    path = Path(value)
    if not exists(path):
        path = store.report_path(ws, value) if is_valid_name(value) else path
    if not exists(path):
        shown = value if len(value) <= 60 else value[:60] + "…"
        raise FileNotFoundError(f"no report {shown!r} (a file, or one of: "
                                f"{', '.join(store.list_reports(ws)) or 'none'})")
    return path.stem, read_report(path)


def cmd_list(args: argparse.Namespace) -> int:
    ws: Workspace = args.workspace
    sets = [{"set": s, "files": [p.name for p in store.set_files(ws, s)], "answers": store.list_answers(ws, s)}
            for s in store.list_sets(ws)]
    hist = store.history(ws)
    lines = [f"set {s['set']}: files {', '.join(s['files'])}; answers {', '.join(s['answers']) or '-'}" for s in sets]
    lines += [f"report {h['report']}: {h['model']} · {h['accuracy_method']} · overall {h['overall_score']:.3f} · "
              f"pass rate {h['pass_rate']:.3f} · {h['timestamp']}" for h in hist]
    emit(args, {"sets": sets, "reports": hist}, "\n".join(lines) or "no gold sets or reports in this workspace")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    name, report = _load(args.workspace, args.report)
    agg, meta = report["aggregate_metrics"], report["metadata"]
    lines = [f"{name}: {meta['model']} on {', '.join(meta['eval_files'])} ({meta['total_samples']} samples, {meta['timestamp']})",
             "  ".join(f"{k} {v:.4f}" for k, v in agg.items())]
    for key in ("by_task", "by_domain"):
        for group, m in report[key].items():
            lines.append(f"  {key[3:]} {group}: {m['count']} samples, overall {m['overall_score']:.3f}, "
                         f"pass rate {m['pass_rate']:.3f}")
    for s in report["failed_samples"][:10]:
        lines.append(f"  fail {s['sample_id']}: overall {s['scores']['overall']:.3f}")
    emit(args, {"report": name, "metadata": meta, "aggregate_metrics": agg, "by_task": report["by_task"],
                "by_domain": report["by_domain"]}, "\n".join(lines))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    name_a, a = _load(args.workspace, args.report_a)
    name_b, b = _load(args.workspace, args.report_b)
    frame = compare_reports(a, b)
    summary = compare_summary(frame)
    lines = [f"{name_a} → {name_b}: " + ", ".join(f"{k} {v}" for k, v in summary.items() if v)]
    for r in frame.filter(frame["change"].is_in(["regression", "worse score"])).head(20).iter_rows(named=True):
        lines.append(f"  {r['change']:<12} {r['sample_id']}: {r['status_a']} {r['overall_a']:.3f} → "
                     f"{r['status_b']} {r['overall_b']:.3f}")
    emit(args, {"summary": summary, "samples": frame.to_dicts()}, "\n".join(lines))
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    name, report = _load(args.workspace, args.report)
    set_name = store.slug(Path(report["metadata"]["eval_files"][0]).stem if report["metadata"]["eval_files"] else name)
    for row in store.history(args.workspace):
        if row["report"] == name:
            set_name = row["set"]
    result = send_to_labeling(args.workspace, report, report_name=name, set_name=set_name, project=args.project)
    emit(args, result, f"{result['added']} answers added to labeling project {args.project} "
                       f"({result['skipped']} were there already)")
    return 0
