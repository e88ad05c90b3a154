"""``direct`` and ``cot``: all K reviews with their ids and the policy in one prompt, one answer
in the output contract (``cot`` asks for step-by-step reasoning before the answer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.llm import json_schema_format
from core.methods.base import MethodContext, Request, RestaurantInput, Usage, contract_answer, prompt_template
from core.methods.contract import contract_schema, policy_text, render, reviews_block

SYSTEM = ("You are a careful auditor of restaurant reviews. Answer with one JSON object that follows "
          "the given schema exactly; quote snippets verbatim from the reviews.")
DIRECT_PROMPT = "direct.v1"
COT_PROMPT = "cot.v1"
ANSWER_TOKENS = {DIRECT_PROMPT: 400, COT_PROMPT: 900}


def restaurant_messages(
    ctx: MethodContext, restaurant: RestaurantInput, reviews: Sequence[dict[str, Any]], prompt: str
) -> list[dict[str, Any]]:
    """System rules plus the method prompt filled with the policy, the restaurant and its reviews."""
    text = render(
        prompt_template(prompt), task_name=ctx.task.name, task_description=ctx.task.description.strip(),
        policy_text=policy_text(ctx.policy), verdicts=" | ".join(ctx.scale),
        evidence_fields=" | ".join(ctx.evidence_fields), task_id=ctx.task.task_id, policy_id=ctx.policy.policy_id,
        business_id=restaurant.business_id, restaurant_name=restaurant.name, categories=restaurant.categories or "",
        n_reviews=len(reviews), reviews=reviews_block(reviews),
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def contract_format(ctx: MethodContext, *, reasoning_first: bool = False) -> dict[str, Any]:
    name = f"contract_{'cot' if reasoning_first else 'direct'}_{len(ctx.scale)}v"
    return json_schema_format(name, contract_schema(ctx.scale, ctx.evidence_fields, reasoning_first=reasoning_first))


def single_request(ctx: MethodContext, restaurant: RestaurantInput, reviews: Sequence[dict[str, Any]], prompt: str) -> Request:
    return Request(restaurant_messages(ctx, restaurant, reviews, prompt),
                   contract_format(ctx, reasoning_first=prompt == COT_PROMPT), ANSWER_TOKENS[prompt])


async def ask_contract(ctx: MethodContext, request: Request) -> dict[str, Any]:
    usage = Usage()
    result = usage.add(await ctx.llm.complete(request.messages, response_format=request.response_format))
    return contract_answer(ctx, result, usage)


def direct_requests(ctx: MethodContext, restaurant: RestaurantInput) -> list[Request]:
    return [single_request(ctx, restaurant, restaurant.reviews, DIRECT_PROMPT)]


def cot_requests(ctx: MethodContext, restaurant: RestaurantInput) -> list[Request]:
    return [single_request(ctx, restaurant, restaurant.reviews, COT_PROMPT)]


async def direct_answer(ctx: MethodContext, restaurant: RestaurantInput) -> dict[str, Any]:
    return await ask_contract(ctx, direct_requests(ctx, restaurant)[0])


async def cot_answer(ctx: MethodContext, restaurant: RestaurantInput) -> dict[str, Any]:
    return await ask_contract(ctx, cot_requests(ctx, restaurant)[0])
