"""``python -m core scorer …``: train a learned scorer on consensus labels, apply it to a run,
evaluate it (SPEC §7).

``train`` fits on a labeling project's consensus (held-out split grouped by prompt, seeded) and
prints the held-out metrics next to the human ceiling on the same items; ``apply`` writes
``run_scored.jsonl``; ``evaluate`` scores a project's consensus items the model was not trained on.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from core.base.progress import cli_progress
from core.cli import emit, json_flag
from core.cli.refs import scorer_dir, study_run, study_run_file


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``scorer`` and its subcommands."""
    parser = subparsers.add_parser("scorer", help="learned scorer: train on consensus labels, apply to runs, evaluate")
    sub = parser.add_subparsers(dest="scorer_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("train", help="train a scorer on a labeling project's consensus")
    p.add_argument("--project", required=True, help="labeling project with consensus labels")
    p.add_argument("--kind", default="tfidf-ridge", help="tfidf-ridge (default) or tfidf-wordchar-ridgecv")
    p.add_argument("--out", required=True, metavar="NAME_OR_DIR",
                   help="the scorer's name (written to scorers/NAME of the workspace) or a folder path")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--test-size", type=float, default=0.25, help="share of prompts held out (default 0.25)")
    p.add_argument("--cv", type=int, default=5, help="grouped cross-validation folds (default 5)")
    p.add_argument("--include-model-raters", action="store_true", help="LLM raters (llm:…) count in the consensus")
    json_flag(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("apply", help="score a run.jsonl and write run_scored.jsonl")
    p.add_argument("model_dir", metavar="SCORER", help="a scorer of the workspace by name, or a model folder path")
    p.add_argument("run", metavar="RUN", help="a study run STUDY/RUN_ID of the workspace, or a run.jsonl path")
    p.add_argument("--out", metavar="run_scored.jsonl",
                   help="where to write (default: run_scored.jsonl beside the study run; required for a path)")
    json_flag(p)
    p.set_defaults(func=cmd_apply)

    p = sub.add_parser("evaluate", help="a scorer against a project's consensus (items it was not trained on)")
    p.add_argument("model_dir", metavar="SCORER", help="a scorer of the workspace by name, or a model folder path")
    p.add_argument("--project", required=True)
    json_flag(p)
    p.set_defaults(func=cmd_evaluate)


def _f(x: Any) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.3f}"


def _figures(s: dict[str, Any]) -> str:
    c = s["human_ceiling"]
    return (f"  scorer        n={s['n_test']:<4} MAE {_f(s['mae'])}  RMSE {_f(s['rmse'])}  Pearson {_f(s['pearson'])}  "
            f"Spearman {_f(s['spearman'])}  CCC {_f(s['ccc'])}\n"
            f"  human ceiling n={c['n_pairs']:<4} MAE {_f(c['mae'])}  RMSE {_f(c['rmse'])}  Pearson {_f(c['pearson'])}  "
            f"Spearman {_f(c['spearman'])}  CCC {_f(c['ccc'])}  (one rater vs the mean of the others, "
            f"{c['n_items']} items)")


def cmd_train(args: argparse.Namespace) -> int:
    # deferred: only the `scorer` command needs it (CLI start-up)
    from core.labeling.items import get_project
    from core.labeling.store import open_store
    from core.study.scorer import data, model

    args.workspace.ensure()
    store = open_store(args.workspace.root)
    project = get_project(store, args.project)
    examples = data.consensus_examples(store, project, include_models=args.include_model_raters)
    trained = model.train(examples, data.project_ratings(store, project), kind=args.kind, seed=args.seed,
                          test_size=args.test_size, cv=args.cv, project=project.name)
    out = model.save(trained, scorer_dir(args.workspace, args.out))
    summary = {**model.summary_line(trained.manifest), "model_dir": str(out),
               "training_data_sha256": trained.manifest["training_data_sha256"], "cv": trained.manifest["cv"]}
    cv = trained.manifest["cv"]
    text = (f"trained {args.kind} on {project.name}: {summary['n_train']} train / {summary['n_test']} held-out items "
            f"(split by prompt, seed {args.seed}) -> {out}\n{_figures(summary)}\n"
            f"  cross-validation ({cv.get('folds', 0)} grouped folds on the training part): "
            f"MAE {_f(cv.get('mae_mean'))}  Pearson {_f(cv.get('pearson_mean'))}")
    emit(args, model.json_safe(summary), text)
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    # deferred: only the `scorer` command needs it (CLI start-up)
    from core.study import scoring
    from core.study.scorer import model

    scorer = model.load(scorer_dir(args.workspace, args.model_dir))
    run = study_run_file(args.workspace, args.run, scored=False)
    if args.out is None and study_run(args.run) is None:
        raise ValueError("--out is required when RUN is a file path (a study run STUDY/RUN_ID writes beside itself)")
    out = Path(args.out) if args.out else run.with_name("run_scored.jsonl")
    with cli_progress("score", enabled=not args.no_progress) as progress:
        result = scoring.apply_to_run(scorer, run, out, progress=progress)
    emit(args, result, f"{result['scored']:,} responses scored by {result['scorer_model']} "
         f"({result['failed_responses']} failed responses left unscored) -> {result['path']}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    # deferred: only the `scorer` command needs it (CLI start-up)
    from core.labeling.items import get_project
    from core.labeling.store import open_store
    from core.study.scorer import apply, model

    scorer = model.load(scorer_dir(args.workspace, args.model_dir))
    store = open_store(args.workspace.root)
    result = apply.evaluate(scorer, store, get_project(store, args.project))
    text = (f"{result['scorer_model']} on {result['project']}: {result['n_test']} consensus items it was not trained "
            f"on ({result['n_skipped_training_items']} training items left out)\n{_figures(result)}")
    emit(args, model.json_safe(result), text)
    return 0
