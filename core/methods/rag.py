"""``rag``: retrieve the top reviews for the task query, then ``direct``.

The query is the task's name and keywords. ``options["rag_top"]`` reviews are kept (default 10),
in their idx order. Retrieval is BM25 (``bm25s``) by default and needs no endpoint; with
``options["embedding_model"]`` (or ``$WORKBENCH_EMBEDDING_MODEL``) and an LLM endpoint, the
query and the reviews are embedded through the openai client (one call per restaurant, cached)
and ranked by cosine similarity. The pre-flight figures then count the calls with the BM25
choice of reviews (an estimate: the embedding choice is only known at run time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.base.settings import env
from core.methods.base import MethodContext, Request, RestaurantInput
from core.methods.direct import DIRECT_PROMPT, ask_contract, single_request

DEFAULT_TOP = 10


def retrieve(ctx: MethodContext, restaurant: RestaurantInput) -> list[dict[str, Any]]:
    """The ``rag_top`` reviews with the highest BM25 score for the task query, in idx order."""
    top = int(ctx.options.get("rag_top") or DEFAULT_TOP)
    reviews = list(restaurant.reviews)
    if len(reviews) <= top:
        return reviews
    corpus = [r.get("text") or "" for r in reviews]
    # deferred: heavy optional import (~450 ms with scipy.sparse), only needed when a rag run retrieves
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
    query = " ".join([ctx.task.name, *ctx.task.keywords])
    hits, _scores = retriever.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                                       k=top, show_progress=False)
    keep = sorted(int(i) for i in hits[0])
    return [reviews[i] for i in keep]


def embedding_model(ctx: MethodContext) -> str | None:
    """The embedding model when embeddings are configured and the model is a real endpoint."""
    if getattr(ctx.llm, "offline", False) or ctx.llm is None:
        return None
    return ctx.options.get("embedding_model") or env("WORKBENCH_EMBEDDING_MODEL")


async def retrieve_embedded(ctx: MethodContext, restaurant: RestaurantInput, model: str) -> list[dict[str, Any]]:
    """The ``rag_top`` reviews closest to the task query by cosine similarity of embeddings."""
    top = int(ctx.options.get("rag_top") or DEFAULT_TOP)
    reviews = list(restaurant.reviews)
    if len(reviews) <= top:
        return reviews
    query = " ".join([ctx.task.name, *ctx.task.keywords])
    vectors = np.asarray(await ctx.llm.embed([query, *(r.get("text") or "" for r in reviews)], model), dtype=float)
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    sims = (vectors[1:] @ vectors[0]) / (norms[1:] * norms[0])
    keep = sorted(int(i) for i in np.argsort(-sims, kind="stable")[:top])
    return [reviews[i] for i in keep]


def rag_requests(ctx: MethodContext, restaurant: RestaurantInput) -> list[Request]:
    return [single_request(ctx, restaurant, retrieve(ctx, restaurant), DIRECT_PROMPT)]


async def rag_answer(ctx: MethodContext, restaurant: RestaurantInput) -> dict[str, Any]:
    model = embedding_model(ctx)
    reviews = await retrieve_embedded(ctx, restaurant, model) if model else retrieve(ctx, restaurant)
    return await ask_contract(ctx, single_request(ctx, restaurant, reviews, DIRECT_PROMPT))
