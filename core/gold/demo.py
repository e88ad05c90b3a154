"""Write the demo gold set, the offline model's answers and three reports into a workspace.

``gold/sets/demo_glossary/`` gets the items (three ``*_eval.jsonl`` files), ``gold.json`` (SPEC
defaults, written out so they can be edited) and ``reference.jsonl`` (the glossary the offline
answerer reads). Answers come from the offline retrieval model with one and with two passages;
reports (a grader check with the expected answers, then each offline model) carry fixed
timestamps a week apart, so the same code writes the same bytes.
"""

from __future__ import annotations

from typing import Any

from core.base.files import read_jsonl_log, remove_tree, write_json_atomic, write_jsonl_atomic
from core.base.progress import Progress, no_progress
from core.gold import store
from core.gold.answers import expected_answers, write_answers_file
from core.gold.demo_set import ITEMS, PASSAGES, SYSTEM
from core.gold.items import load_gold_files
from core.gold.offline import Passage, offline_answers, offline_model_name
from core.gold.report import evaluate
from core.gold.scoring import CONFIG_NAME, GoldConfig, config_as_dict
from core.workspace import Workspace

DEMO_SET = "demo_glossary"
DEMO_TIMESTAMPS = ("2026-01-05T09:00:00Z", "2026-01-12T09:00:00Z", "2026-01-19T09:00:00Z")
OFFLINE_LABEL = " (offline model: TF-IDF retrieval over the set's glossary)"


def demo_item_rows() -> dict[str, list[dict[str, Any]]]:
    """The demo items grouped by file stem, in the SPEC §8 item format."""
    files: dict[str, list[dict[str, Any]]] = {}
    for i, (file, task, domain, question, expected, must, cite) in enumerate(ITEMS):
        files.setdefault(file, []).append({
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question},
                         {"role": "assistant", "content": "EXPECTED_ANSWER"}],
            "metadata": {"domain": domain, "task": task, "source_ids": [f"demo_glossary_{i:02d}"], "locale": "nb-NO",
                         "split": "eval"},
            "expected_output": expected,
            "eval_criteria": {"must_include": must, "citation_required": cite, "max_tokens": 300},
        })
    return files


def write_demo_gold(ws: Workspace, *, progress: Progress = no_progress) -> dict[str, Any]:
    """Write the demo set, its offline answers and reports (replacing an earlier demo set)."""
    folder = store.set_dir(ws, DEMO_SET)
    remove_tree(folder)  # a link there is removed, never followed
    remove_tree(store.answers_dir(ws, DEMO_SET))
    for stem, rows in demo_item_rows().items():
        write_jsonl_atomic(folder / f"{stem}_eval.jsonl", rows)
    write_json_atomic(folder / CONFIG_NAME, config_as_dict(GoldConfig()))
    write_jsonl_atomic(folder / "reference.jsonl", [{"term": t, "text": x} for t, x in PASSAGES])
    files = store.set_files(ws, DEMO_SET)
    items = load_gold_files(files)
    passages = [Passage(t, x) for t, x in PASSAGES]
    config = store.set_config(ws, DEMO_SET)
    runs = [("expected", "expected_output (grader check)", expected_answers(items))]
    for top_k in (1, 2):
        name = offline_model_name(top_k)
        answers = offline_answers(items, passages, top_k=top_k)
        write_answers_file(store.answers_path(ws, DEMO_SET, name), items, answers)
        runs.append((name, name + OFFLINE_LABEL, answers))
    history_rows = []
    for i, ((source_name, label, answers), stamp) in enumerate(zip(runs, DEMO_TIMESTAMPS, strict=True)):
        progress(i, len(runs), source_name)
        report = evaluate(items, answers, config, model=label, eval_files=files, timestamp=stamp)
        name = store.default_report_name(DEMO_SET, source_name, stamp)
        write_json_atomic(store.report_path(ws, name), report)
        history_rows.append({
            "report": name, "set": DEMO_SET, "model": label, "source": "expected" if i == 0 else "answers",
            "accuracy_method": config.accuracy, "timestamp": stamp, "total_samples": len(items),
            **report["aggregate_metrics"]})
    demo_names = {r["report"] for r in history_rows}
    kept = [r for r in read_jsonl_log(store.history_path(ws)) if r.get("report") not in demo_names]
    write_jsonl_atomic(store.history_path(ws), history_rows + kept)
    progress(len(runs), len(runs), "gold reports written")
    return {"set": DEMO_SET, "items": len(items), "reports": sorted(demo_names)}
