"""AsyncLLM makes its openai client on the first call that reaches the endpoint (issue 27: a run's
pre-flight and a run answered from the cache never import openai, ~1 s), with the same cache keys."""

from __future__ import annotations

import random
import subprocess
import sys

import openai
import pytest

from core.llm import AsyncLLM, Endpoint
from core.llm.calls import client_base_url

URLS = [
    "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/", "HTTP://LocalHost:8000/V1", "https://api.openai.com/v1",
    "https://example.com:443/v1", "http://example.com:80/v1", "http://host:9/", "http://host:9", "http://host/v1?x=1",
    "http://host/v1/?x=1&y=2", "http://[::1]:8000/v1", "https://münchen.example/v1", "http://host/a b/c%20d",
    "http://user:pw@host:1/v1", "http://host/v1#frag", "https://HOST.example.COM/Path/To/",
]


def _openai_url(base_url: str | None) -> str:
    return str(openai.AsyncOpenAI(base_url=base_url, api_key="k").base_url)


def _random_url(rng: random.Random) -> str:
    host = rng.choice(["localhost", "127.0.0.1", "Example.COM", "[::1]", "api.example.org", "xn--mnchen-3ya.de"])
    port = rng.choice(["", ":80", ":443", ":8000", ":65535"])
    path = "/".join(rng.choice(["v1", "V2", "a%20b", "x y", "", "ü", "~u", "openai"]) for _ in range(rng.randint(0, 3)))
    query = rng.choice(["", "?a=1", "?a=b&c=%2F", "?"])
    return f"{rng.choice(['http', 'https', 'HTTP'])}://{host}{port}/{path}{query}"


@pytest.mark.parametrize("url", URLS)
def test_the_base_url_is_the_one_the_openai_client_reports(url):
    assert client_base_url(url) == _openai_url(url)


def test_the_base_url_matches_openai_on_random_urls():
    rng = random.Random(27)
    for _ in range(200):
        url = _random_url(rng)
        assert client_base_url(url) == _openai_url(url), url


@pytest.mark.parametrize("env_url", [None, "http://127.0.0.1:9999/v1"])
def test_without_a_base_url_the_environment_then_api_openai_com(monkeypatch, env_url):
    if env_url is None:
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    else:
        monkeypatch.setenv("OPENAI_BASE_URL", env_url)
    assert client_base_url(None) == _openai_url(None)


def test_keys_are_the_same_before_and_after_the_client_is_made():
    llm = AsyncLLM("m", endpoint=Endpoint("default", "HTTP://LocalHost:8000/v1"), api_key="k")
    messages = [{"role": "user", "content": "hi"}]
    before = llm.key(messages)
    assert llm._client is None  # noqa: SLF001 - nothing made for a key
    assert llm.client.max_retries == 0  # made on use
    assert llm.key(messages) == before and llm.base_url == "http://localhost:8000/v1/"


def test_a_call_answered_by_the_cache_does_not_import_openai(tmp_path):
    code = """
import sys
from core.llm import AsyncLLM, Endpoint, ResponseCache
cache = ResponseCache(sys.argv[1])
llm = AsyncLLM("m", endpoint=Endpoint("default", "http://127.0.0.1:1/v1"), cache=cache, api_key="k")
messages = [{"role": "user", "content": "hi"}]
cache.put(llm.key(messages), {"model": "m", "content": "hello", "prompt_tokens": 3, "completion_tokens": 1})
result = llm.run_sync(llm.complete(messages))
print(result.content, result.cached, llm.is_cached(messages), "openai" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cache.jsonl")], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["hello", "True", "True", "False"]
