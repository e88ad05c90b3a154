"""Small failures that must stay fixed: one-line errors instead of tracebacks, validated rater codes, no
overfilled targets, no immediate re-serving, parse errors not cached, lock checks on every dataset
read, reads that never create a workspace, import-reviews errors, redacted keys."""

from __future__ import annotations

import errno
import http.server
import json
import threading
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from core.base.errors import LockError, WorkbenchError
from core.cli import main
from core.datasets import browse
from core.datasets.db import Database
from core.datasets.importer import import_dataset
from core.ground_truth.ks import normalize_ks
from core.labeling import assignment, export, identity, items
from core.labeling.agreement import agreement_report
from core.labeling.store import LabelStore, integrity_problems, open_store
from core.llm import AsyncLLM, ResponseCache, SyncLLM, endpoint_options
from core.workspace import Workspace
from tests.helpers.clock import Clock
from tests.helpers.safety import snapshot, write_flat


def _err(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[-1].startswith("error: ") and "Traceback" not in "\n".join(err), err
    return err[-1]


def _ws(tmp_path) -> Workspace:
    return Workspace(tmp_path / "ws").ensure()


def _flat_with_line(tmp_path, line: bytes) -> Path:
    src = write_flat(tmp_path / "src", 1, 2)
    with open(src / "review.json", "ab") as fh:
        fh.write(line + b"\n")
    return src


def _import_cli(ws, src, name="d") -> int:
    return main(["--workspace", str(ws.root), "--no-progress", "datasets", "import", str(src / "review.json"),
                 "--business", str(src / "business.json"), "--name", name])


# -- tracebacks become one line ------------------------------------------------------------------

def test_low_deeply_nested_json_is_a_one_line_error_naming_file_and_line(tmp_path, capsys):
    ws = _ws(tmp_path)
    src = _flat_with_line(tmp_path, b"[" * 200_000 + b"]" * 200_000)
    before = snapshot(ws.root)
    assert _import_cli(ws, src) == 1
    assert _err(capsys) == f"error: {src / 'review.json'}:3: JSON nested too deeply"
    assert snapshot(ws.root) == before
    items_file = tmp_path / "items.jsonl"
    items_file.write_bytes(b'{"a": ' * 100_000 + b"1" + b"}" * 100_000 + b"\n")
    assert main(["--workspace", str(ws.root), "labels", "init", "p"]) == 0
    assert main(["--workspace", str(ws.root), "--no-progress", "labels", "import-items", str(items_file)]) == 1
    assert _err(capsys) == f"error: {items_file}:1: JSON nested too deeply"


def test_low_a_lone_surrogate_is_a_one_line_error(tmp_path, capsys):
    ws = _ws(tmp_path)
    rec = {"review_id": "x", "business_id": "b00000", "user_id": "u", "stars": 4.0, "text": "bad \\ud800 text",
           "date": "2020-01-01 10:00:00"}
    src = _flat_with_line(tmp_path, json.dumps(rec).replace("\\\\ud800", "\\ud800").encode())
    before = snapshot(ws.root)
    assert _import_cli(ws, src) == 1
    err = _err(capsys)
    assert err.startswith(f"error: {src / 'review.json'}:3: a lone UTF-16 surrogate"), err
    assert snapshot(ws.root) == before


def test_low_a_read_only_workspace_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    ws = _ws(tmp_path)
    src = write_flat(tmp_path / "src", 1, 2)
    before = snapshot(ws.root)

    def denied(*args, **kwargs):  # what mkdir raises in a read-only folder (tests run as root)
        raise PermissionError(errno.EACCES, "Permission denied", str(ws.root / ".staging"))

    monkeypatch.setattr("core.base.files.os.mkdir", denied)
    assert _import_cli(ws, src) == 1
    assert _err(capsys) == f"error: Permission denied: {ws.root / '.staging'}"
    assert snapshot(ws.root) == before


def test_low_a_full_disk_is_a_one_line_error_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    ws = _ws(tmp_path)
    src = write_flat(tmp_path / "src", 2, 3)
    before = snapshot(ws.root)

    def full(self, file, *args, **kwargs):
        Path(file).write_bytes(b"PAR1 half")  # a partly written table, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device", str(file))

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    assert _import_cli(ws, src) == 1
    assert _err(capsys).startswith("error: No space left on device: ")
    assert snapshot(ws.root) == before


def test_low_a_corrupted_label_store_is_a_one_line_error(tmp_path, capsys):
    ws = _ws(tmp_path)
    (ws.root / "labels.sqlite").write_bytes(b"not a database " * 500)
    assert main(["--workspace", str(ws.root), "labels", "status"]) == 1
    assert "cannot be opened: file is not a database" in _err(capsys)


@pytest.mark.parametrize("k", ["99999999999999999999999", "1e400", "inf", "9" * 5000])
def test_low_a_huge_k_is_a_clean_error(k, tmp_path, capsys):
    with pytest.raises(ValueError, match="invalid K"):
        normalize_ks(k)
    with pytest.raises(ValueError, match="invalid K"):
        normalize_ks([float("inf")])
    ws = _ws(tmp_path)
    assert main(["--workspace", str(ws.root), "gt", "--dataset", "d", "--k", k]) == 1
    assert "invalid K" in _err(capsys)


class _Html(http.server.BaseHTTPRequestHandler):
    body = b"<html><body>Please log in</body></html>"
    status = 200
    ctype = "text/html"

    def do_POST(self):  # noqa: N802 - the http.server API
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(self.status)
        self.send_header("content-type", self.ctype)
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def _serve(handler) -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def _judging_ws(tmp_path) -> Workspace:
    from tests.helpers.judging_dataset import build_judging_dataset

    ws = _ws(tmp_path)
    build_judging_dataset(ws, "d", restaurants=1)
    return ws


def test_low_an_endpoint_answering_html_with_200_is_a_recorded_failure(tmp_path, capsys):
    ws = _judging_ws(tmp_path)
    server, url = _serve(_Html)
    try:
        code = main(["--workspace", str(ws.root), "--no-progress", "judge", "--dataset", "d", "--judge", "openai",
                     "--model", "m", "--base-url", url, "--max-retries", "0"])
    finally:
        server.shutdown()
    out, err = capsys.readouterr()
    assert code == 3 and "Traceback" not in err, err
    assert "not a chat completion" in out and "check the endpoint's base URL" in out  # AsyncLLM's words, as in runs


def test_low_a_key_echoed_by_the_endpoint_is_redacted(tmp_path, capsys, monkeypatch):
    key = "sk-secret-key-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    class Echo(_Html):
        status, ctype = 401, "application/json"
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode()

    ws = _judging_ws(tmp_path)
    server, url = _serve(Echo)
    try:
        main(["--workspace", str(ws.root), "--no-progress", "--json", "judge", "--dataset", "d", "--judge",
              "openai", "--model", "m", "--base-url", url, "--max-retries", "0"])
    finally:
        server.shutdown()
    out, err = capsys.readouterr()
    assert "Incorrect API key provided: ***" in out and key not in out + err
    from core.cli import error_line

    assert error_line(WorkbenchError(f"bad key {key}")) == "bad key ***"


# -- names and rater codes -----------------------------------------------------------------------

@pytest.mark.parametrize("code", ["", "x" * 5000, "a\x00b", "<b>x</b>", "ana\n", " "])
def test_low_rater_codes_are_validated_through_the_api_and_labels_role(code, tmp_path, capsys):
    store = open_store(tmp_path)
    project = items.create_project(store, "p")
    items.add_items(store, project, [{"dataset": "p", "identifier": "i"}])
    with pytest.raises(ValueError, match="invalid rater code"):
        identity.set_role(store, code, "admin")
    with pytest.raises(ValueError, match="invalid rater code"):
        assignment.next_item(store, project, code)
    with pytest.raises(ValueError, match="invalid rater code"):
        assignment.submit(store, project, code, 1, 0.5)
    if "\x00" not in code:  # argv cannot carry NUL
        assert main(["--workspace", str(tmp_path), "labels", "role", code, "admin"]) == 1
        assert "invalid rater code" in _err(capsys)
    assert identity.list_raters(store).height == 0


# -- assignment ----------------------------------------------------------------------------------

def _store(tmp_path, n: int, **settings):
    clock = Clock()
    store = LabelStore(f"sqlite:///{tmp_path / 'labels.sqlite'}", clock=clock)
    store.ensure_schema()
    project = items.create_project(store, "p", **{"reservation_seconds": 60, **settings})
    items.add_items(store, project, [{"dataset": "p", "identifier": f"i{k}", "created_at": datetime(2026, 1, 1)
                                      + timedelta(minutes=k)} for k in range(1, n + 1)])
    return store, project, clock


def test_low_a_submission_after_its_reservation_expired_does_not_overfill_the_target(tmp_path):
    store, project, clock = _store(tmp_path, 1, target_raters=1)
    late = assignment.next_item(store, project, "ana")
    clock.now += timedelta(seconds=120)  # ana's reservation expires; bob gets and rates the item
    bob = assignment.next_item(store, project, "bob")
    assert bob.item_id == late.item_id
    assignment.submit(store, project, "bob", bob.item_id, 0.5, token=bob.token)
    with pytest.raises(WorkbenchError, match="reservation expired"):
        assignment.submit(store, project, "ana", late.item_id, -0.5, token=late.token)
    with store.read() as conn:
        n_raters = conn.exec_driver_sql("SELECT n_raters FROM items").scalar()
    assert n_raters == 1 and integrity_problems(store) == []
    # while the slot is still free, a late submission is kept
    store2, project2, clock2 = _store(tmp_path / "two", 1, target_raters=2)
    view = assignment.next_item(store2, project2, "ana")
    clock2.now += timedelta(seconds=120)
    assignment.submit(store2, project2, "ana", view.item_id, 0.5, token=view.token)


def test_low_a_repeat_audit_never_re_serves_the_item_just_rated(tmp_path):
    store, project, clock = _store(tmp_path, 3, target_raters=1)
    first = assignment.next_item(store, project, "ana")
    for _ in range(2):  # ana skips two items in the first pass, then rates everything
        first = assignment.skip_and_next(store, project, "ana", first.item_id)
    view = first
    served = []
    for _ in range(8):
        if view is None:  # issue 26: repeats end (each item once more) instead of looping
            break
        clock.now += timedelta(seconds=5)
        served.append(view.item_id)
        _, view = assignment.submit_and_next(store, project, "ana", view.item_id, 0.5, token=view.token)
    assert all(a != b for a, b in zip(served, served[1:], strict=False)), served
    assert sorted(served[3:]) == [1, 2, 3] and len(served) == 6


# -- LLM cache -----------------------------------------------------------------------------------

def test_low_an_invalid_json_answer_is_not_cached(tmp_path, llm_server):
    import openai

    from tests.helpers.llm_server import raw_content

    llm_server.add_faults(None, raw_content('{"a": '))
    cache = ResponseCache(tmp_path / "llm.jsonl")
    llm = SyncLLM(AsyncLLM("m", **endpoint_options(openai.OpenAI(base_url=llm_server.base_url, api_key="x",
                                                                  max_retries=0)), cache=cache))
    fmt = {"type": "json_object"}
    msgs = [{"role": "user", "content": "Review ID: k1"}]
    assert llm.complete(msgs, response_format=fmt).content == '{"a": '
    assert len(cache) == 0 and not (tmp_path / "llm.jsonl").exists()
    assert llm.complete(msgs, response_format=fmt).cached is False  # asked again
    assert len(cache) == 1


# -- lock checks and reads -----------------------------------------------------------------------

def test_low_labels_import_items_from_dataset_and_data_page_reads_check_the_lock(tmp_path, capsys):
    ws = _ws(tmp_path)
    src = write_flat(tmp_path / "src", 2, 3)
    import_dataset(ws, "d", src / "review.json", business_path=src / "business.json")
    table = ws.dataset_dir("d") / "reviews.parquet"
    with open(table, "ab") as fh:
        fh.write(b"x")  # the table no longer matches its lock
    assert main(["--workspace", str(ws.root), "labels", "init", "p"]) == 0
    assert main(["--workspace", str(ws.root), "--no-progress", "labels", "import-items", "--from-dataset", "d"]) == 1
    assert "changed since import" in _err(capsys)
    db = Database(ws.root)
    for call in (lambda: browse.list_restaurants(db, "d", browse.RestaurantFilter()),
                 lambda: browse.categories(db, "d"), lambda: browse.restaurant(db, "d", "b00000"),
                 lambda: browse.restaurant_reviews(db, "d", "b00000", browse.ReviewFilter())):
        with pytest.raises(LockError, match="changed since import"):
            call()


def test_low_a_read_on_a_mistyped_workspace_does_not_create_it(tmp_path, capsys):
    typo = tmp_path / "wrokspace"
    for args in (["labels", "status"], ["labels", "agreement"], ["labels", "export"], ["datasets", "list"]):
        code = main(["--workspace", str(typo), *args])
        assert code in (0, 1)
        assert not typo.exists(), args
    capsys.readouterr()
    assert main(["--workspace", str(typo), "labels", "status"]) == 1
    assert "no workspace at" in _err(capsys)


# -- import-reviews ------------------------------------------------------------------------------

def _reviews_file(tmp_path, lines: list[bytes], name: str = "reviews.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _line(**changes) -> bytes:
    rec = {"dataset": "p", "identifier": "i1", "reviewer_code": "ana", "score": 1,
           "review_created_at": "2024-01-01 00:00:00", **changes}
    return json.dumps(rec).encode()


def test_low_import_reviews_names_file_and_line_accepts_a_bom_and_types_the_identifier(tmp_path, capsys):
    ws = _ws(tmp_path)
    assert main(["--workspace", str(ws.root), "labels", "init", "p"]) == 0
    args = ["--workspace", str(ws.root), "--no-progress", "labels", "import-reviews", "--create-items"]
    bad_byte = _reviews_file(tmp_path, [_line(), b'{"dataset": "p\xff"}'])
    assert main([*args, str(bad_byte)]) == 1
    assert _err(capsys).startswith(f"error: {bad_byte}:2: not valid UTF-8 (byte 0xff")
    with_bom = _reviews_file(tmp_path, [b"\xef\xbb\xbf" + _line()], "bom.jsonl")
    assert main([*args, str(with_bom)]) == 0
    capsys.readouterr()
    for identifier in ([1], {"a": 1}, True, 1.5):
        path = _reviews_file(tmp_path, [_line(identifier=identifier)])
        assert main([*args, str(path)]) == 1
        assert f"{path}:1: field 'identifier': expected a string" in _err(capsys)
    store = open_store(ws.root)
    assert export.import_reviews(store, items.get_project(store, "p"), with_bom).skipped == 1


def test_low_boot_has_an_upper_bound(tmp_path, capsys):
    ws = _ws(tmp_path)
    assert main(["--workspace", str(ws.root), "labels", "init", "p"]) == 0
    assert main(["--workspace", str(ws.root), "labels", "agreement", "--boot", str(10**9)]) == 1
    assert "bootstrap resamples must be an integer from 1 to 100,000" in _err(capsys)
    with pytest.raises(ValueError, match="bootstrap"):
        agreement_report(pl.DataFrame(), n_boot=0)
