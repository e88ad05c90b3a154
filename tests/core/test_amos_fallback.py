"""amos against the local OpenAI-compatible server when its compile answer is invalid: the run falls back
to the task's default spec and says so (``run``'s output, results.json, the Runs page's past runs,
Results), and its usage counts the compile call too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.runs.records import spec_fallback
from core.workspace import Workspace
from tests.helpers.llm_server import RUN_KEY_PATTERN, LLMServer, offline_responder

REASON = "keywords must be a non-empty list of strings"


def _invalid_compile(request: dict[str, Any], key: str | None = None) -> Any:
    """The offline model's answers, except the amos compile call: a spec with no keyword."""
    name = ((request.get("response_format") or {}).get("json_schema") or {}).get("name")
    if name == "amos_spec_v1":
        return {"keywords": [], "fields": [], "incident_definition": "anything"}
    return offline_responder(request, key)


@pytest.fixture()
def root(small_demo, tmp_path):
    target = tmp_path / "ws"
    shutil.copytree(small_demo, target, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    return str(target)


@pytest.fixture()
def bodies() -> list[dict[str, Any]]:
    return []


@pytest.fixture()
def server(monkeypatch, bodies):
    def responder(request: dict[str, Any], key: str | None = None) -> Any:
        bodies.append(request)
        return _invalid_compile(request, key)

    with LLMServer(responder, key_pattern=RUN_KEY_PATTERN) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        yield srv


def _compile_tokens(bodies: list[dict[str, Any]]) -> tuple[int, int]:
    """(prompt, completion) tokens the server billed for the compile request (its own word counts)."""
    body = next(b for b in bodies if "amos_spec_v1" in json.dumps(b.get("response_format")))
    prompt = sum(len(str(m.get("content") or "").split()) for m in body["messages"])
    answer = json.dumps(_invalid_compile(body))
    return prompt, len(answer.split())


def test_an_invalid_compile_answer_is_stated_and_its_call_counted(root, server, bodies, capsys):
    assert main(["--workspace", root, "--no-progress", "run", "--dataset", "demo", "--method", "amos", "--model",
                 "test-model", "--k", "25", "-n", "3", "--run-id", "amos-fb"]) == 0
    out = capsys.readouterr().out
    assert f"warning: amos spec fallback: the compiled spec was invalid ({REASON}); the run used the task's " \
           "default extraction spec" in out
    run_dir = Path(root) / "runs" / "amos-fb"
    spec = json.loads((run_dir / "spec.json").read_text())
    assert spec["spec"]["fallback"] == REASON and spec["usage"]["llm_calls"] == 1
    prompt, completion = _compile_tokens(bodies)
    assert (spec["usage"]["prompt_tokens"], spec["usage"]["completion_tokens"]) == (prompt, completion)
    assert prompt > 100  # the compile prompt holds the task and the policy text

    results = json.loads((run_dir / "results.json").read_text())
    samples = results["results"]
    assert results["prepare"] == {"usage": spec["usage"], "spec_fallback": REASON}
    # usage = every sample's calls + the compile call (it used to be the samples' only: 0 tokens with no
    # review kept, although a compile call reached the server)
    assert results["usage"]["llm_calls"] == sum(s["llm_calls"] for s in samples) + 1 == server.chat_requests
    assert results["usage"]["prompt_tokens"] == sum(s["prompt_tokens"] for s in samples) + prompt
    assert results["usage"]["completion_tokens"] == sum(s["completion_tokens"] for s in samples) + completion
    status = json.loads((run_dir / "status.json").read_text())
    assert status["prompt_tokens"] == results["usage"]["prompt_tokens"]  # the progress line counts it too
    assert f"{status['prompt_tokens'] + status['completion_tokens']:,} tokens" in out
    assert spec_fallback(run_dir) == spec_fallback(run_dir, results) == REASON

    # the Runs page's past runs say it
    from core.ui.runs import runs_table

    table = runs_table(Workspace(Path(root)))
    assert table.filter(table["run_id"] == "amos-fb")["notes"].to_list() == [f"⚠ spec fallback: {REASON}"]


def test_a_resumed_run_keeps_counting_its_earlier_compile_call(root, server, capsys):
    assert main(["--workspace", root, "--no-progress", "run", "--dataset", "demo", "--method", "amos", "--model",
                 "test-model", "--k", "25", "-n", "2", "--run-id", "amos-r"]) == 0
    run_dir = Path(root) / "runs" / "amos-r"
    first = json.loads((run_dir / "spec.json").read_text())["usage"]
    (run_dir / "results.json").unlink()
    (run_dir / "status.json").write_text(json.dumps({"status": "cancelled"}))
    assert main(["--workspace", root, "--no-progress", "run", "--resume", "amos-r"]) == 0
    usage = json.loads((run_dir / "spec.json").read_text())["usage"]
    # the second compile is answered from the response cache: one more call, no more tokens
    assert usage["llm_calls"] == 2 and usage["cached_calls"] == first["cached_calls"] + 1
    assert usage["prompt_tokens"] == first["prompt_tokens"] > 0
    assert "warning: amos spec fallback" in capsys.readouterr().out
