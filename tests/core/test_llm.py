"""core.llm against the local OpenAI-compatible server: structured calls, retries, cache, cost
(through :class:`core.llm.SyncLLM`, the synchronous face of the one client :class:`core.llm.AsyncLLM`)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.base.errors import WorkbenchError
from core.base.files import read_jsonl_log
from core.llm import (
    AsyncLLM,
    Endpoint,
    LLMCallError,
    ResponseCache,
    SyncLLM,
    UsageTotals,
    cost_usd,
    price_for,
    workspace_cache,
)
from tests.helpers.llm_server import rate_limited, server_error, slow

SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "t",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
            "required": ["color"],
            "additionalProperties": False,
        },
    },
}


def _messages(key: str) -> list[dict]:
    return [{"role": "user", "content": f"Pick a color.\nReview ID: {key}"}]


def _sync_llm(server, model: str, **options) -> SyncLLM:
    return SyncLLM(AsyncLLM(model, endpoint=Endpoint("default", server.base_url), **options))


def test_structured_call_returns_schema_answer_tokens_and_cost(llm_server):
    llm = _sync_llm(llm_server, "gpt-4o-mini", max_retries=0)
    done = llm.complete(_messages("r1"), response_format=SCHEMA)
    assert done.content == '{"color": "red"}'  # first enum value from the default responder
    # the server counts words: prompt "Pick a color.\nReview ID: r1" = 6 words, answer = 2
    assert (done.prompt_tokens, done.completion_tokens) == (6, 2)
    assert done.cost_usd == pytest.approx((6 * 0.15 + 2 * 0.60) / 1e6)
    assert llm_server.requests_by_key == {"r1": 1}
    assert llm.totals.calls == 1 and llm.totals.prompt_tokens == 6


def test_cache_answers_the_same_request_without_a_second_call(llm_server, workspace):
    cache = workspace_cache(workspace)
    llm = _sync_llm(llm_server, "gpt-4o-mini", max_retries=0, cache=cache, seed=1)
    first = llm.complete(_messages("r1"), response_format=SCHEMA)
    # a new process: a fresh cache object reads the same file
    llm2 = _sync_llm(llm_server, "gpt-4o-mini", cache=workspace_cache(workspace), seed=1)
    again = llm2.complete(_messages("r1"), response_format=SCHEMA)
    assert again.cached and again.content == first.content
    assert again.usage()["cost_usd"] == 0.0
    assert llm_server.requests_by_key == {"r1": 1}
    assert (workspace.root / "cache" / "llm.jsonl").exists()
    # another seed is another request
    llm3 = _sync_llm(llm_server, "gpt-4o-mini", cache=workspace_cache(workspace), seed=2)
    llm3.complete(_messages("r1"), response_format=SCHEMA)
    assert llm_server.requests_by_key == {"r1": 2}
    assert llm2.totals.cached_calls == 1 and llm2.totals.calls == 0


def test_429_with_retry_after_then_success(llm_server):
    llm_server.add_faults("r1", rate_limited(20))
    llm = _sync_llm(llm_server, "m", max_retries=2)
    assert llm.complete(_messages("r1"), response_format=SCHEMA).content == '{"color": "red"}'
    assert [e["status"] for e in llm_server.log] == [429, 200]


def test_500_is_retried_then_raised(llm_server):
    llm_server.add_faults("r1", server_error(), server_error())
    llm = _sync_llm(llm_server, "m", max_retries=1)
    with pytest.raises(LLMCallError, match="InternalServerError 500"):
        llm.complete(_messages("r1"), response_format=SCHEMA)
    assert llm_server.requests_by_key["r1"] == 2  # first attempt + one retry


def test_timeout_is_raised_after_retries(llm_server):
    llm_server.add_faults("r1", slow(3), slow(3))
    llm = _sync_llm(llm_server, "m", timeout=0.3, max_retries=1)
    start = time.monotonic()
    with pytest.raises(LLMCallError, match="0.3 s deadline|Timeout"):
        llm.complete(_messages("r1"), response_format=SCHEMA)
    assert time.monotonic() - start < 2.5


def test_the_client_needs_a_key_for_a_remote_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(WorkbenchError, match="OPENAI_API_KEY"):
        AsyncLLM("m")
    llm = AsyncLLM("m", endpoint=Endpoint("default", "http://127.0.0.1:9/v1"), timeout=1.5, max_retries=4)
    assert llm.max_retries == 4 and llm.timeout == 1.5 and llm.client.max_retries == 0  # our retries only


def test_the_sync_face_serves_threads_at_once_and_closes(llm_server):
    llm = _sync_llm(llm_server, "m", max_retries=0, concurrency=4)
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda i: llm.complete(_messages(f"t{i}"), response_format=SCHEMA).content, range(12)))
    assert answers == ['{"color": "red"}'] * 12 and llm.totals.calls == 12
    assert any(t.name == "llm-loop" for t in threading.enumerate())
    llm.close()
    assert llm.complete(_messages("t0"), response_format=SCHEMA).content == '{"color": "red"}'  # starts again
    llm.close()


def test_prices_and_batch_discount():
    assert price_for("gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert price_for("gpt-4o-2024-08-06") == (2.50, 10.00)
    assert price_for("llama3") is None and cost_usd("llama3", 10, 10) is None
    # 1000 in, 500 out on gpt-4o: (1000*2.5 + 500*10)/1e6 = 0.0075; batch: half
    assert cost_usd("gpt-4o", 1000, 500) == pytest.approx(0.0075)
    assert cost_usd("gpt-4o", 1000, 500, batch=True) == pytest.approx(0.00375)


def test_cache_file_survives_a_torn_line(tmp_path):
    path = tmp_path / "llm.jsonl"
    cache = ResponseCache(path)
    cache.put("k1", {"content": "a"})
    with open(path, "a") as fh:
        fh.write('{"key": "k2", "cont')  # killed writer
    fresh = ResponseCache(path)
    assert fresh.get("k1")["content"] == "a" and fresh.get("k2") is None
    fresh.put("k3", {"content": "c"})
    assert ResponseCache(path).get("k3")["content"] == "c"


def test_usage_totals_count_unpriced_models():
    from core.llm import Completion

    totals = UsageTotals()
    totals.add(Completion("x", "local", 3, 1, None))
    totals.add(Completion("x", "gpt-4o", 3, 1, 0.5))
    totals.add(Completion("x", "gpt-4o", 3, 1, 0.5, cached=True))
    assert totals.as_dict() == {
        "calls": 2, "cached_calls": 1, "prompt_tokens": 6, "completion_tokens": 2,
        "cost_usd": 0.5, "unpriced_calls": 1,
    }


def test_threads_storing_answers_share_fsyncs_and_every_answer_is_on_disk(tmp_path, monkeypatch):
    import threading

    import core.base.files
    from core.llm import cache as llm_module

    writes: list[int] = []
    real = core.base.files.append_jsonl

    def counting(path, rows):
        rows = list(rows)
        writes.append(len(rows))
        time.sleep(0.01)  # a slow disk: rows that arrive meanwhile go together in the next write
        return real(path, rows)

    monkeypatch.setattr(llm_module, "append_jsonl", counting)
    cache = ResponseCache(tmp_path / "llm.jsonl")
    barrier = threading.Barrier(32)

    def store(i: int) -> None:
        barrier.wait()
        cache.put(f"k{i}", {"content": str(i)})
        assert ResponseCache(tmp_path / "llm.jsonl").get(f"k{i}")["content"] == str(i)  # durable when put returns

    threads = [threading.Thread(target=store, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(writes) == 32 and len(writes) < 32  # grouped
    assert {r["key"] for r in read_jsonl_log(tmp_path / "llm.jsonl")} == {f"k{i}" for i in range(32)}


def test_a_failed_group_write_raises_in_its_callers_only(tmp_path, monkeypatch):
    from core.llm import cache as llm_module

    calls = iter([OSError("disk full"), None])

    def flaky(path, rows):
        error = next(calls)
        if error is not None:
            raise error
        return core_files_append(path, rows)

    from core.base.files import append_jsonl as core_files_append

    monkeypatch.setattr(llm_module, "append_jsonl", flaky)
    cache = ResponseCache(tmp_path / "llm.jsonl")
    with pytest.raises(OSError, match="disk full"):
        cache.put("a", {"content": "1"})
    assert cache.get("a") is None  # never visible when it did not reach the disk
    cache.put("b", {"content": "2"})
    assert ResponseCache(tmp_path / "llm.jsonl").get("b")["content"] == "2"


def test_no_lock_is_held_across_a_disk_sync(tmp_path, monkeypatch):
    """While one answer's append (write + fsync) is under way, other threads still read the cache
    and queue their own answers: the cache's lock guards its index only."""
    import threading

    from core.llm import cache as llm_module

    entered, release = threading.Event(), threading.Event()
    real = llm_module.append_jsonl

    def stuck(path, rows):
        entered.set()
        assert release.wait(10)  # the disk sync takes as long as the test wants
        return real(path, rows)

    monkeypatch.setattr(llm_module, "append_jsonl", stuck)
    cache = ResponseCache(tmp_path / "llm.jsonl")
    writer = threading.Thread(target=cache.put, args=("a", {"content": "1"}))
    writer.start()
    assert entered.wait(10)
    started = time.monotonic()
    assert cache.get("b") is None and len(cache) == 0  # answered at once, not after the sync
    queued = threading.Thread(target=cache.put, args=("c", {"content": "3"}))
    queued.start()  # queues its row for the next write without waiting for the lock
    assert time.monotonic() - started < 1.0
    release.set()
    writer.join(10)
    queued.join(10)
    assert {r["key"] for r in read_jsonl_log(tmp_path / "llm.jsonl")} == {"a", "c"}
