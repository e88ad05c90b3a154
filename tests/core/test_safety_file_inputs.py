"""Issue 26, Medium 7, 8 and 9 and the Low items on results, gold and study files: a crafted file is
a one-line error naming file and field, never a hang, a traceback, a silently wrong count or a
report of nothing."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from core.base.errors import DataError
from core.cli import main
from core.cli.score import score_file
from core.gold.scoring import config_from_dict, parse_citation_patterns
from core.methods.contract import validate_contract
from core.runs.imports import import_run_file
from core.study.grid import build_grid, read_factors, read_templates
from core.workspace import Workspace

SCALE = ("Low Risk", "High Risk", "Critical Risk")


def _run(samples: list[Any], **top: Any) -> dict[str, Any]:
    return {"run_id": "r", "task_id": "G1a", "policy_id": "G1_allergy_V2", "method": "m", "model": "x", "k": 25,
            **top, "results": samples}


def _sample(bid: str, score: Any = 1.0, **extra: Any) -> dict[str, Any]:
    return {"business_id": bid, "verdict": "Low Risk", "risk_score": score, "gt_verdict": "High Risk", **extra}


def _write(tmp_path: Path, payload: Any, name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(payload), encoding="utf-8")  # json writes NaN / Infinity bare, as the probe did
    return path


BAD_SAMPLES = [
    ([_sample("a"), _sample("b", math.nan)], "results[1].risk_score"),
    ([_sample("a"), _sample("b", math.inf)], "results[1].risk_score"),
    ([_sample("a"), _sample("b", -math.inf)], "results[1].risk_score"),
    ([_sample("a"), _sample("b", "high")], "results[1].risk_score"),
    ([_sample("a"), _sample("a")], "results[1].business_id"),  # Medium 9: a duplicate counted twice in n
    ([_sample("a"), _sample(7)], "results[1].business_id"),  # `score` took what `runs import` refused
    ([_sample("a", prompt_tokens="x")], "results[0].prompt_tokens"),
    ([_sample("a", completion_tokens=math.inf)], "results[0].completion_tokens"),
    ([_sample("a", verdict=3)], "results[0].verdict"),
    (["not an object"], "results[0]"),
]


@pytest.mark.parametrize(("samples", "field"), BAD_SAMPLES)
def test_medium8_9_score_and_runs_import_refuse_the_same_samples_naming_the_field(tmp_path, samples, field):
    ws = Workspace(tmp_path / "ws").ensure()
    path = _write(tmp_path, _run(samples))
    for action in (lambda: score_file(path, ws, n_boot=0), lambda: import_run_file(ws, path)):
        with pytest.raises(DataError) as info:
            action()
        assert info.value.path == str(path) and info.value.field == field, str(info.value)
    assert not (ws.root / "runs").exists() or not any((ws.root / "runs").iterdir())  # nothing half-written


@pytest.mark.parametrize(("top", "field"), [({"k": 10**30}, "k"), ({"k": -5}, "k"), ({"k": 2.5}, "k")])
def test_low_runs_import_bounds_k(tmp_path, top, field):
    ws = Workspace(tmp_path / "ws").ensure()
    with pytest.raises(DataError, match=f"field '{field}'"):
        import_run_file(ws, _write(tmp_path, _run([_sample("a")], **top)))


def test_low_runs_import_refuses_an_empty_results_list(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    with pytest.raises(DataError, match="no samples"):
        import_run_file(ws, _write(tmp_path, _run([])))


def test_low_the_xnot_form_never_drops_a_non_object_entry(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    payload = {"restaurants": {"A": {"verdict": {"predicted": "Low Risk", "ground_truth": "Low Risk"}}, "B": "oops"}}
    with pytest.raises(DataError, match=r"field 'restaurants\.B'"):
        import_run_file(ws, _write(tmp_path, payload, "detailed_results.json"))


@pytest.mark.parametrize("tokens", ["many", math.inf])
def test_medium8_xnot_token_counts_are_checked(tmp_path, tokens):
    ws = Workspace(tmp_path / "ws").ensure()
    payload = [{"restaurant": "A", "verdict": {"predicted": "Low Risk", "ground_truth": "Low Risk"},
                "prompt_tokens": tokens}]
    with pytest.raises(DataError, match=r"prompt_tokens"):
        import_run_file(ws, _write(tmp_path, payload, "detailed_results.json"))


@pytest.mark.parametrize("score", [math.nan, math.inf])
def test_low_a_nan_score_from_a_model_is_an_out_of_contract_answer(score):
    _, problem = validate_contract({"verdict": "Low Risk", "risk_score": score, "evidences": []}, SCALE)
    assert problem is not None and "not a finite number" in problem


# -- gold.json -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "field"), [
    ({"weights": {"accuracy": math.nan, "citation": 0.3, "length": 0.2, "keywords": 0.1}}, "weights.accuracy"),
    ({"thresholds": {"pass": math.nan}}, "thresholds.pass"),
    ({"pass_rate_goal": math.nan}, "pass_rate_goal"),
    ({"length": {"optimal_max": math.inf}}, "length.optimal_max"),
])
def test_low_nan_or_infinite_gold_settings_name_the_field(tmp_path, raw, field):
    with pytest.raises(DataError, match=f"field '{field}'.*finite"):
        config_from_dict(raw, path=tmp_path / "gold.json")


@pytest.mark.parametrize("regex", [r"^(a+)+$", r"(x*)*y", r"(\w+\s?)+$", r"(?:ab{1,9})+c", "a" * 600])
def test_medium7_a_catastrophic_citation_regex_is_refused_when_the_set_is_read(tmp_path, regex):
    start = time.perf_counter()
    with pytest.raises(DataError, match=r"citation_patterns\[0\]\.regex"):
        parse_citation_patterns([{"name": "evil", "regex": regex}], path=tmp_path / "gold.json")
    assert time.perf_counter() - start < 1


def test_medium7_the_builtin_citation_patterns_pass_the_check():
    from core.gold.scoring import CITATION_PATTERNS, backtracking_risk

    assert [backtracking_risk(p) for p in CITATION_PATTERNS.values()] == [None] * len(CITATION_PATTERNS)


def test_low_an_empty_eval_file_saves_no_report(tmp_path, capsys):
    ws = Workspace(tmp_path / "ws").ensure()
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "a_eval.jsonl").write_text("\n# nothing here\n", encoding="utf-8")
    assert main(["--workspace", str(ws.root), "--no-progress", "gold", "eval", "--eval-dir", str(folder)]) == 1
    assert "no gold items" in capsys.readouterr().err
    assert not (ws.root / "gold").exists()


def test_low_gold_show_of_a_very_long_name_is_a_plain_message(tmp_path, capsys):
    ws = Workspace(tmp_path / "ws").ensure()
    assert main(["--workspace", str(ws.root), "gold", "show", "a" * 300]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no report 'aaaa") and "too long" not in err and len(err) < 300


# -- study templates and factors -------------------------------------------------------------------

TEMPLATE = {"template_id": "t", "landlord": "I am a landlord. Rent {base_rent}, raise {amount}. {relationship}.",
            "tenant": "I am a tenant. Rent {base_rent}, raise {amount}. {relationship}.",
            "neutral": "Rent {base_rent}, raise {amount}. {relationship}."}


@pytest.mark.parametrize(("text", "message"), [
    ("x {amount:>300000000}", "not a placeholder"),
    ("x {0}", "unknown placeholder {0}"),
    ("x {nope}", "unknown placeholder {nope}"),
    ("x {relationship.__class__}", "not a placeholder"),
    ("x { bare", "not a placeholder"),
    ("x } bare", "not a placeholder"),
])
def test_medium7_8_a_template_is_filled_by_plain_substitution_and_checked(tmp_path, text, message):
    bad = {k: (v + " " + text if k in ("landlord", "tenant", "neutral") else v) for k, v in TEMPLATE.items()}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=message) as info:
        read_templates(path)
    assert info.value.line == 1 and info.value.field == "landlord"


def test_medium7_a_huge_factor_grid_is_refused_before_it_is_built(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(TEMPLATE) + "\n", encoding="utf-8")
    factors = {"base_rent": list(range(1, 101)), "amount": list(range(1, 101)), "relationship_quality": ["good"],
               "relationship_phrases": {"good": "fine"}}
    start = time.perf_counter()
    with pytest.raises(ValueError, match="at most 100,000"):
        build_grid(read_templates(path) * 4, factors)
    assert time.perf_counter() - start < 1
    fpath = tmp_path / "f.json"
    fpath.write_text(json.dumps(dict(factors, base_rent=list(range(1, 401)))), encoding="utf-8")
    with pytest.raises(DataError, match="field 'base_rent'"):
        read_factors(fpath)


def test_low_an_amount_of_ten_to_the_400_never_reaches_a_prompt(tmp_path):
    path = tmp_path / "f.json"
    path.write_text('{"base_rent": [600], "amount": [1' + "0" * 400 + '], "relationship_quality": ["good"], '
                    '"relationship_phrases": {"good": "fine"}}', encoding="utf-8")
    with pytest.raises(DataError, match="field 'amount'"):
        read_factors(path)


def test_medium7_a_good_template_still_fills_every_placeholder(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(TEMPLATE) + "\n", encoding="utf-8")
    factors = {"base_rent": [600], "amount": [50], "relationship_quality": ["good"],
               "relationship_phrases": {"good": "All good"}}
    texts = [p["messages"][1]["content"] for p in build_grid(read_templates(path), factors)]
    assert texts[0] == "I am a landlord. Rent 600, raise 50. All good."


# -- messages --------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["datasets", "import", "/dev/zero", "--name", "z"], ["runs", "import", "/dev/zero"],
                                  ["study", "import", "/dev/zero", "--study", "s"]])
def test_low_a_device_is_named_as_such_never_no_such_file(tmp_path, capsys, args):
    ws = Workspace(tmp_path / "ws").ensure()
    assert main(["--workspace", str(ws.root), "--no-progress", *args]) == 1
    err = capsys.readouterr().err
    assert "/dev/zero: a device, not a file to read" in err and "no such file" not in err, err


def test_low_a_json_error_never_says_at_at(tmp_path):
    from core.base.files import parse_json_text
    from core.llm import parse_json_content

    with pytest.raises(DataError) as info:
        parse_json_text('{"a": "b', path=tmp_path / "x.json")
    _, problem = parse_json_content('{"verdict": "Low')
    assert " at at " not in str(info.value) and problem is not None and " at at " not in problem, (info.value, problem)


@pytest.mark.parametrize(("reason", "advice"), [
    ("database or disk is full", "the disk is full"),
    ("attempt to write a readonly database", "read-only"),
    ("file is not a database", "restore it from a backup"),
])
def test_medium10_the_label_store_says_what_is_wrong(tmp_path, monkeypatch, reason, advice):
    import sqlite3

    from sqlalchemy.exc import OperationalError

    from core.base.errors import WorkbenchError
    from core.labeling.store import engine

    def failing(self):
        raise OperationalError("PRAGMA", {}, sqlite3.OperationalError(reason))

    monkeypatch.setattr(engine.LabelStore, "ensure_schema", failing)
    with pytest.raises(WorkbenchError) as info:
        engine.open_store(url=f"sqlite:///{tmp_path / 'labels.sqlite'}")
    assert advice in str(info.value)
    if advice != "restore it from a backup":  # an intact store is never sent to its backups
        assert "backup" not in str(info.value)


def test_low_brackets_in_the_workspace_path_break_no_dataset_read(tmp_path, capsys):
    from tests.helpers.safety import write_flat

    ws = Workspace(tmp_path / "team [draft]" / "ws[1]").ensure()
    src = write_flat(tmp_path / "src", 3, 4)

    def cli(*args: str) -> int:
        return main(["--workspace", str(ws.root), "--no-progress", *args])

    assert cli("datasets", "import", str(src / "review.json"), "--business", str(src / "business.json"),
               "--name", "d") == 0
    assert cli("datasets", "show", "d") == 0
    assert cli("index", "--dataset", "d") == 0
    assert cli("judge", "--dataset", "d", "--task", "G1a", "--judge", "heuristic") == 0
    assert cli("gt", "--dataset", "d", "--task", "G1a", "--k", "4") == 0, capsys.readouterr().err
    assert "no judgments" not in capsys.readouterr().err
    assert cli("run", "--dataset", "d", "--task", "G1a", "--method", "keyword", "--k", "4") == 0, capsys.readouterr().err
    assert len(list((ws.root / "runs").glob("*/results.json"))) == 1


def test_low_a_copied_workspace_checks_its_own_sources_not_the_originals(tmp_path, capsys):
    import shutil

    from core.datasets.lock import read_lock, verify_dataset
    from tests.helpers.safety import write_flat

    ws = Workspace(tmp_path / "a").ensure()
    src = write_flat(ws.root / "sources" / "d", 2, 3)  # sources kept inside the workspace, as the demo's are
    assert main(["--workspace", str(ws.root), "--no-progress", "datasets", "import", str(src / "review.json"),
                 "--business", str(src / "business.json"), "--name", "d"]) == 0
    assert [s["path"] for s in read_lock(ws, "d")["sources"]] == ["sources/d/review.json", "sources/d/business.json"]
    copy = Workspace(tmp_path / "b")
    shutil.copytree(ws.root, copy.root)
    (src / "review.json").write_text("changed\n", encoding="utf-8")  # the original's source changes ...
    assert [s["status"] for s in verify_dataset(copy, "d")["sources"]] == ["ok", "ok"]  # ... not the copy's


def test_low_a_full_disk_during_import_is_one_line_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    import polars as pl

    from tests.helpers.safety import snapshot, write_flat

    ws = Workspace(tmp_path / "ws").ensure()
    src = write_flat(tmp_path / "src", 2, 3)
    before = snapshot(ws.root)

    def full(*_a: Any, **_k: Any) -> None:  # what polars raises when the disk fills under sink_parquet
        raise pl.exceptions.ComputeError("parquet: failed to write: No space left on device (os error 28)")

    monkeypatch.setattr("core.datasets.importer.write_streamed", full)
    assert main(["--workspace", str(ws.root), "--no-progress", "datasets", "import", str(src / "review.json"),
                 "--business", str(src / "business.json"), "--name", "d"]) == 1
    err = capsys.readouterr().err
    assert err == "error: No space left on device (while writing or reading a table)\n", err
    assert snapshot(ws.root) == before


def test_low_an_empty_study_import_creates_no_study(tmp_path, capsys):
    ws = Workspace(tmp_path / "ws").ensure()
    path = tmp_path / "seed.jsonl"
    path.write_text("\n# nothing\n", encoding="utf-8")
    assert main(["--workspace", str(ws.root), "study", "import", str(path), "--study", "s"]) == 1
    assert "no records" in capsys.readouterr().err
    assert not (ws.root / "studies").exists()


@pytest.mark.parametrize("policy_id", ["../../x/evil", "G1_allergy_V9", "G1_allergy_V2\n"])
def test_low_score_and_runs_import_never_swap_an_unknown_policy_for_the_default(tmp_path, policy_id):
    """An unknown or traversal ``policy_id`` in a results file was scored with G1_allergy_V2, silently."""
    from core.base.errors import UnknownNameError

    ws = Workspace(tmp_path / "ws").ensure()
    path = _write(tmp_path, _run([_sample("a"), _sample("b")], policy_id=policy_id))
    for action in (lambda: score_file(path, ws, n_boot=0), lambda: import_run_file(ws, path)):
        with pytest.raises(UnknownNameError, match="unknown policy"):
            action()
