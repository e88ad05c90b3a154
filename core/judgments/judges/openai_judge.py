"""The ``openai`` judge: one structured call per review to any OpenAI-compatible model.

The prompt is the task's judgment prompt (``task.render_prompt``) with the review's text, plus a
``Review ID:`` line; the answer is constrained with ``response_format`` = the task's JSON schema
(strict). The answer is checked with ``task.validate_fields``: invalid JSON, a missing field or a
value outside the enum gives a record with ``parse_error`` set and the raw answer kept (never
replaced by an enum value). A call that still fails after :class:`core.llm.AsyncLLM`'s retries
(429, 5xx, timeout, connection; the one retry policy of runs and judges) gives a *failure* (see
:mod:`core.judgments.judges.base`): not stored, retried by a later ``--resume``. Answers are cached
in the workspace (:class:`core.llm.ResponseCache`); an answer that is not strict JSON is not cached.

The judging runner awaits :meth:`OpenAIJudge.ajudge` in its event loop (the runs' async path);
:meth:`OpenAIJudge.judge` is the synchronous face of the same calls (an ensemble's vote, a test).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from core.base.settings import openai_settings, redact
from core.judgments.judges.base import JudgeKind, make_failure, make_record, register_judge_kind
from core.llm import (
    AsyncLLM,
    CallResult,
    Completion,
    Endpoint,
    LLMCallError,
    ResponseCache,
    parse_json_content,
)

SYSTEM_PROMPT = (
    "You are a careful annotator of restaurant reviews. Answer with one JSON object that follows "
    "the given schema exactly; quote excerpts verbatim from the review."
)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def judge_id_for(model: str, seed: int | None = None) -> str:
    """The judge id of a model (and sampling seed): the real model id, never shortened or
    sanitised (:func:`core.judgments.judge_file` maps it to a file name).

    >>> judge_id_for("gpt-4o-mini")
    'gpt-4o-mini'
    >>> judge_id_for("meta-llama/Llama-3.1-8B", seed=2)
    'meta-llama/Llama-3.1-8B.s2'
    """
    if not isinstance(model, str) or not model.strip():
        raise ValueError("a model id is required")
    return f"{model}.s{seed}" if seed is not None else model


def review_messages(task: Any, row: dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages for one review (system rules, task prompt with the text, review id)."""
    prompt = task.render_prompt(
        row.get("text") or "", restaurant_name=row.get("name") or "", categories=row.get("categories") or ""
    )
    review_id = row.get("review_id") or f"{row['business_id']}#{row['idx']}"
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"{prompt.rstrip()}\n\nReview ID: {review_id}"},
    ]


class OpenAIJudge:
    """A judge backed by one model on an OpenAI-compatible endpoint.

    Args:
        task: the ``core.tasks.Task``.
        model: model id (default ``$WORKBENCH_JUDGE_MODEL``).
        cache: response cache (None: no caching).
        temperature, seed: sampling options; a seed also changes the judge id (``model.s<seed>``).
        judge_id: explicit judge id (default from model and seed).
        base_url, timeout, max_retries: the endpoint (default ``$OPENAI_BASE_URL``, its key in
            ``$OPENAI_API_KEY``) and the :class:`core.llm.AsyncLLM` options (default from the environment).
        client: an ``openai.AsyncOpenAI`` to use instead of building one.
        concurrency: requests in flight at most (the runner sets its own, :meth:`set_concurrency`).
    """

    concurrent = True

    def __init__(
        self,
        task: Any,
        *,
        model: str | None = None,
        client: Any = None,
        cache: ResponseCache | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        judge_id: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        concurrency: int = 16,
    ) -> None:
        model = model or openai_settings()["model"]
        if not model:
            raise ValueError("no model: pass --model or set WORKBENCH_JUDGE_MODEL")
        self.task = task
        self.llm = AsyncLLM(model, endpoint=Endpoint("default", base_url) if base_url else None, cache=cache,
                            concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                            temperature=temperature, seed=seed, client=client)
        self.judge_id = judge_id or judge_id_for(model, seed)
        self.prompt_version = task.prompt_version
        self.response_format = task.response_format()

    @property
    def model(self) -> str:
        return self.llm.model

    def messages(self, row: dict[str, Any]) -> list[dict[str, str]]:
        return review_messages(self.task, row)

    def set_concurrency(self, concurrency: int) -> None:
        """At most ``concurrency`` requests in flight (the runner's ``--concurrency``)."""
        self.llm.set_concurrency(concurrency)

    async def aclose(self) -> None:
        """End the event loop's use of the endpoint (see :meth:`core.llm.AsyncLLM.release`)."""
        await self.llm.release()

    async def ajudge(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """One call for one review: its record, or a failure record once the retries are spent."""
        try:
            result = await self.llm.complete(self.messages(row), response_format=self.response_format,
                                             strict_json=True)
        except LLMCallError as exc:  # retries spent: this review fails, the run goes on
            return [make_failure(row, redact(str(exc)))]
        return [self.record_from_completion(row, completion_of(result))]

    def judge(self, review_rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """One call per row (concurrently, in an event loop of its own); a failed call becomes a
        failure record (the others go on)."""
        async def all_rows() -> list[list[dict[str, Any]]]:
            return await asyncio.gather(*(self.ajudge(row) for row in review_rows))

        return [record for records in self.llm.run_sync(all_rows()) for record in records]

    def record_from_completion(
        self, row: dict[str, Any], completion: Completion, *, batch_id: str | None = None
    ) -> dict[str, Any]:
        """The judgment record of one answer (on-demand or from a batch output file)."""
        answer, error = parse_json_content(completion.content)
        if error is not None:
            fields: dict[str, Any] = dict.fromkeys(self.task.field_names)
            excerpt = None
        else:
            fields, error = self.task.validate_fields(answer)
            excerpt = answer.get("excerpt") if isinstance(answer, dict) else None
            if excerpt is not None and not isinstance(excerpt, str):
                excerpt = None
        return make_record(
            row, task=self.task.task_id, judge=self.judge_id, prompt_version=self.prompt_version,
            fields=fields, excerpt=excerpt, raw=completion.content, parse_error=error,
            usage=completion.usage(), batch_id=batch_id,
        )

    def usage_totals(self) -> dict[str, Any]:
        """Calls, tokens and cost so far (cached answers cost nothing)."""
        return self.llm.totals.as_dict()


def completion_of(result: CallResult) -> Completion:
    """The :class:`core.llm.Completion` (text, tokens, cost, cached) of an :class:`AsyncLLM` answer."""
    return Completion(result.content, result.model, result.prompt_tokens, result.completion_tokens,
                      result.cost_usd, cached=result.cached)


register_judge_kind(JudgeKind("openai", "any model on an OpenAI-compatible endpoint, JSON-schema answers", OpenAIJudge))
