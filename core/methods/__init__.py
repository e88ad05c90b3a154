"""Methods (SPEC §4.1), one small module each, in one registry; and the model factory.

``METHODS[name]`` is a :class:`~core.methods.base.Method`. ``make_model(model, ...)`` gives the
offline ``heuristic`` model or an :class:`core.llm.AsyncLLM` for any OpenAI-compatible endpoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.base.registry import Registry
from core.llm import OFFLINE_MODEL, AsyncLLM, ResponseCache, get_endpoint
from core.methods import amos, baselines, direct, rag
from core.methods.base import Method, MethodContext, Request, RestaurantInput, prompt_template
from core.methods.offline import OfflineModel

if TYPE_CHECKING:
    from core.workspace import Workspace

METHODS: Registry[Method] = Registry("method")
METHODS.add(Method("direct", "all K reviews and the policy in one prompt; one answer in the contract", True,
                   direct.direct_answer, direct.direct_requests, (direct.DIRECT_PROMPT,)))
METHODS.add(Method("cot", "as direct, reasoning step by step before the answer", True,
                   direct.cot_answer, direct.cot_requests, (direct.COT_PROMPT,)))
METHODS.add(Method("rag", "the top reviews for the task query (BM25), then as direct", True,
                   rag.rag_answer, rag.rag_requests, (direct.DIRECT_PROMPT,)))
METHODS.add(Method("amos", "compile the policy to an extraction spec; keyword filter, one extraction per kept "
                   "review, deterministic scoring with the policy", True, amos.answer, amos.requests,
                   (amos.COMPILE_PROMPT,), amos.prepare, lambda ctx: [amos.compile_request(ctx)]))
METHODS.add(Method("keyword", "baseline without LLM: score = reviews with a task keyword", False, baselines.keyword_answer))
METHODS.add(Method("random", "baseline without LLM: seeded random verdict", False, baselines.random_answer))


def make_model(
    model: str, ws: Workspace | None, *, endpoint: str | None = None, cache: ResponseCache | None = None,
    concurrency: int = 8,
    seed: int | None = None, timeout: float | None = None, max_retries: int | None = None,
    price: tuple[float, float] | None = None,
) -> Any:
    """The offline model for ``heuristic`` (reading the tasks and policies of ``ws``), else an
    :class:`AsyncLLM` on the named endpoint (``price``: USD per million tokens of an unlisted model)."""
    if model == OFFLINE_MODEL:
        return OfflineModel(ws)
    return AsyncLLM(model, endpoint=get_endpoint(endpoint), cache=cache, concurrency=concurrency, seed=seed,
                    timeout=timeout, max_retries=max_retries, price=price)


__all__ = ["METHODS", "Method", "MethodContext", "OfflineModel", "Request", "RestaurantInput", "make_model",
           "prompt_template"]
