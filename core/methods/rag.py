"""``rag``: retrieve the top reviews for the task query (BM25 through ``bm25s``), then ``direct``.

The query is the task's name and keywords. ``options["rag_top"]`` reviews are kept (default 10),
in their idx order. BM25 is the default and needs no endpoint; embeddings are not used yet.
"""

from __future__ import annotations

from typing import Any

import bm25s

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
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
    query = " ".join([ctx.task.name, *ctx.task.keywords])
    hits, _scores = retriever.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                                       k=top, show_progress=False)
    keep = sorted(int(i) for i in hits[0])
    return [reviews[i] for i in keep]


def rag_requests(ctx: MethodContext, restaurant: RestaurantInput) -> list[Request]:
    return [single_request(ctx, restaurant, retrieve(ctx, restaurant), DIRECT_PROMPT)]


async def rag_answer(ctx: MethodContext, restaurant: RestaurantInput) -> dict[str, Any]:
    return await ask_contract(ctx, rag_requests(ctx, restaurant)[0])
