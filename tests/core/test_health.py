"""Issue 10, "Errors are swallowed": only a torn last line of an append-only log is dropped (and
counted); a broken line elsewhere is an error naming file and line; broken workspace files are
listed (core.ui.health) instead of skipped; ``--debug`` shows the traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.base.errors import DataError
from core.base.files import append_jsonl, read_jsonl_log
from core.cli import main
from core.ground_truth.gt_listing import list_gt_files, scan_gt_files
from core.ui import health
from core.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]


def test_a_torn_last_line_is_dropped_and_counted(tmp_path):
    log = tmp_path / "log.jsonl"
    append_jsonl(log, [{"i": 0}, {"i": 1}])
    with open(log, "ab") as fh:
        fh.write('{"i": 2, "text": "caf\u00e9'.encode()[:-1])  # killed mid-way through a UTF-8 character
    rows = read_jsonl_log(log)
    assert rows == [{"i": 0}, {"i": 1}] and rows.torn == 1
    assert read_jsonl_log(tmp_path / "missing.jsonl").torn == 0


def test_the_next_append_cuts_the_torn_fragment_off(tmp_path):
    log = tmp_path / "log.jsonl"
    append_jsonl(log, [{"i": 0}])
    with open(log, "ab") as fh:
        fh.write(b'{"i": 1, "te')
    append_jsonl(log, [{"i": 2}])
    assert log.read_bytes() == b'{"i": 0}\n{"i": 2}\n'  # no broken line left in the middle
    rows = read_jsonl_log(log)
    assert rows == [{"i": 0}, {"i": 2}] and rows.torn == 0


def test_a_whole_last_record_without_newline_is_kept(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"i": 0}\n{"i": 1}')  # edited by hand: complete, just no final newline
    assert read_jsonl_log(log) == [{"i": 0}, {"i": 1}] and read_jsonl_log(log).torn == 0
    append_jsonl(log, [{"i": 2}])
    assert read_jsonl_log(log) == [{"i": 0}, {"i": 1}, {"i": 2}]


def test_a_torn_fragment_longer_than_a_block_is_cut_off(tmp_path):
    log = tmp_path / "log.jsonl"
    append_jsonl(log, [{"i": 0}])
    with open(log, "ab") as fh:
        fh.write(b'{"text": "' + b"x" * 200_000)
    append_jsonl(log, [{"i": 1}])
    assert log.read_bytes() == b'{"i": 0}\n{"i": 1}\n'


@pytest.mark.parametrize(("content", "message"), [
    (b'{"i": 0}\n{"i": 1, "te\n{"i": 2}\n', r"log\.jsonl:2: not valid JSON"),
    (b'{"i": 0}\n[1, 2]\n{"i": 2}\n', r"log\.jsonl:2: expected a JSON object, got list"),
    (b'{"i": 0}\n{"t": "\xff"}\n{"i": 2}\n', r"log\.jsonl:2: not UTF-8 text"),
    (b'{"i": 0}\n\n{"i": 1, "te\n', r"log\.jsonl:3: not valid JSON"),  # broken, but ends with its newline
])
def test_a_broken_line_that_is_not_a_torn_tail_is_an_error(tmp_path, content, message):
    log = tmp_path / "log.jsonl"
    log.write_bytes(content)
    with pytest.raises(DataError, match=message):
        read_jsonl_log(log)


@pytest.fixture()
def ws(tmp_path):
    return Workspace(tmp_path / "ws").ensure("t")


def test_broken_workspace_files_are_listed_with_the_reason(ws):
    (ws.gt_dir / "d" / "G1a").mkdir(parents=True)
    (ws.gt_dir / "d" / "G1a" / "bad.json").write_text("{not json")
    (ws.gt_dir / "d" / "G1a" / "odd.json").write_text(json.dumps({"restaurants": []}))
    (ws.runs_dir / "r1").mkdir(parents=True)
    (ws.runs_dir / "r1" / "results.json").write_text('{"run_id": "r1", ')
    judgments = ws.judgments_dir("d", "G1a")
    judgments.mkdir(parents=True)
    (judgments / "judge.jsonl").write_text('{"idx": 0}\n{"idx": 1, "fiel\n{"idx": 2}\n')
    (judgments / "other.jsonl").write_text('{"idx": 0}\n{"idx": 1, "fiel')
    (judgments / "_settings.json").write_text('{"gt_judge": ')  # the GT judge choice every read consults
    (ws.root / "jobs").mkdir()
    (ws.root / "jobs" / "j1.json").write_text("[]")
    (ws.root / "cache").mkdir()
    (ws.root / "cache" / "llm.jsonl").write_text('{"key": "k"}\n{"key": \n{"key": "k2"}\n')
    (ws.root / "gold").mkdir()
    (ws.root / "gold" / "history.jsonl").write_text('3\n{"report": "r"}\n')

    table = {row["file"]: row for row in health.problems_table(ws, health.workspace_problems(ws))}
    assert table["gt/d/G1a/bad.json"]["problem"].startswith("line 1: not valid JSON")
    assert "not a GT file" in table["gt/d/G1a/odd.json"]["problem"]
    assert table["runs/r1/results.json"]["problem"].startswith("line 1: not valid JSON")
    assert table["judgments/d/G1a/judge.jsonl"]["problem"].startswith("line 2: not valid JSON")
    assert table["jobs/j1.json"]["problem"] == "expected a JSON object, got list"
    assert table["judgments/d/G1a/_settings.json"]["problem"].startswith("line 1: not valid JSON")
    assert table["cache/llm.jsonl"]["problem"].startswith("line 2: not valid JSON")
    assert table["gold/history.jsonl"]["problem"] == "line 1: expected a JSON object, got int"
    torn = table["judgments/d/G1a/other.jsonl"]
    assert torn["kind"] == "note" and "1 line dropped" in torn["problem"]
    assert [r["kind"] for r in table.values()] == ["error"] * 8 + ["note"]  # errors first
    assert str(ws.root) not in " ".join(r["problem"] for r in table.values())  # paths relative to the workspace


def test_gt_listing_keeps_the_readable_files_and_reports_the_rest(ws):
    from core.ground_truth.gt_files import write_gt_file

    folder = ws.gt_dir / "d" / "G1a"
    write_gt_file(folder / "good.json", {"formula_version": "v1", "task_id": "G1a", "k": 25, "restaurants": {}})
    (folder / "bad.json").write_text("{not json")
    (ws.gt_dir / "variants").mkdir()
    (ws.gt_dir / "variants" / "mine.json").write_text(json.dumps({"name": "mine", "definition": "v1", "changes": {}}))
    files, broken = scan_gt_files(ws)
    assert [f["name"] for f in files] == ["d/G1a/good.json"] == [f["name"] for f in list_gt_files(ws)]
    assert [p.name for p, _ in broken] == ["bad.json"]  # a saved variant is not a broken GT file


def test_a_broken_variant_is_listed(ws):
    (ws.gt_dir / "variants").mkdir(parents=True)
    (ws.gt_dir / "variants" / "oops.json").write_text(json.dumps({"name": "oops", "definition": "v1",
                                                                  "changes": {"NOPE": 1}}))
    [problem] = health.workspace_problems(ws)
    assert problem.path.name == "oops.json" and "unknown constant" in problem.reason


def test_a_clean_workspace_has_no_problems_and_stamps_follow_the_files(ws):
    assert health.workspace_problems(ws) == []
    log = ws.judgments_dir("d", "G1a") / "j.jsonl"
    append_jsonl(log, [{"idx": 0}])
    before = health.stamps(ws)
    append_jsonl(log, [{"idx": 1}])
    assert health.stamps(ws) != before and health.workspace_problems(ws) == []


def test_debug_shows_the_traceback(tmp_path, capsys):
    missing = str(tmp_path / "nope.jsonl")
    assert main(["--workspace", str(tmp_path / "ws"), "datasets", "import", missing, "--name", "x"]) == 1
    assert capsys.readouterr().err.startswith("error: ")  # one line without --debug
    done = subprocess.run([sys.executable, "-m", "core", "--workspace", str(tmp_path / "ws"), "--debug",
                           "datasets", "import", missing, "--name", "x"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert "Traceback (most recent call last)" in done.stderr and "nope.jsonl" in done.stderr


def test_json_error_wording_has_no_doubled_word(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"i": 0}\n{"t": "abc\n{"i": 2}\n')
    with pytest.raises(DataError, match=r"log\.jsonl:2: not valid JSON \(Unterminated string starting at column 7\)"):
        read_jsonl_log(log)


def test_concurrent_appenders_lose_no_record(tmp_path):
    """Processes appending to one log at once (each append a multi-page write) keep every record."""
    import multiprocessing as mp

    log = tmp_path / "shared.jsonl"
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(log, w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    rows = read_jsonl_log(log)
    assert rows.torn == 0 and len(rows) == 3 * 20 * 5
    assert {(r["w"], r["i"]) for r in rows} == {(w, i) for w in range(3) for i in range(100)}


def _append_many(log, w):
    for batch in range(20):
        append_jsonl(log, [{"w": w, "i": batch * 5 + j, "pad": "x" * 3000} for j in range(5)])
