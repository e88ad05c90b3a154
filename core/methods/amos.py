"""``amos``: compile the policy once, then extract per review and score deterministically.

Phase 1 (:func:`prepare`): the LLM compiles the task and policy into an extraction spec
(keywords, the judgment fields the policy needs, what an incident is). The spec is validated:
keywords must be non-empty strings, fields must be the task's own with values from their enums.
An invalid spec falls back to the task's own keywords and fields and says so (``spec.fallback``,
stated on the run by :func:`core.metrics.badges.fallback_line`: ``run``'s output, the Runs page, Results). The compile
call's usage counts in the run's usage. The answer is cached per (endpoint, model, policy) by the
response cache, so a policy is compiled once.

Phase 2 (:func:`answer`): keep the reviews containing a spec keyword; one extraction call per kept
review (the task's judgment prompt and schema, as the ``openai`` judge asks, so the cache is
shared with judging); every snippet is made verbatim (:func:`~core.methods.contract.verbatim_snippet`);
then the policy scores the restaurant (:func:`~core.methods.contract.contract_from_judgments`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.llm import json_schema_format
from core.methods.base import MethodContext, Request, RestaurantInput, Usage, prompt_template
from core.methods.contract import contract_from_judgments, has_keyword, policy_text, render, verbatim_snippet

COMPILE_PROMPT = "amos_compile.v1"
SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "keywords": {"type": "array", "items": {"type": "string"}},
        "fields": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "values": {"type": "array", "items": {"type": "string"}}},
            "required": ["name", "values"], "additionalProperties": False}},
        "incident_definition": {"type": "string"},
    },
    "required": ["keywords", "fields", "incident_definition"],
    "additionalProperties": False,
}
EXTRACTION_TOKENS = 60


def compile_request(ctx: MethodContext) -> Request:
    fields_text = "\n".join(f"- {f.name}: {', '.join(f.values)} ({f.description})" for f in ctx.task.fields)
    text = render(prompt_template(COMPILE_PROMPT), task_id=ctx.task.task_id, task_name=ctx.task.name,
                  task_description=ctx.task.description.strip(), fields_text=fields_text,
                  policy_id=ctx.policy.policy_id, policy_text=policy_text(ctx.policy))
    return Request([{"role": "user", "content": text}], json_schema_format("amos_spec_v1", SPEC_SCHEMA), 200)


def default_spec(ctx: MethodContext) -> dict[str, Any]:
    return {"keywords": sorted({k.lower() for k in ctx.task.keywords}),
            "fields": [{"name": f.name, "values": list(f.values)} for f in ctx.task.fields],
            "incident_definition": "", "policy_id": ctx.policy.policy_id}


def validate_spec(ctx: MethodContext, answer: Any) -> tuple[dict[str, Any], str | None]:
    """(spec, None) for a valid compiled spec, else (the task's default spec, the reason)."""
    if not isinstance(answer, dict):
        return default_spec(ctx), "the compiled spec is not a JSON object"
    keywords = answer.get("keywords")
    if not isinstance(keywords, list) or not keywords or not all(isinstance(k, str) and k.strip() for k in keywords):
        return default_spec(ctx), "keywords must be a non-empty list of strings"
    known = {f.name: set(f.values) for f in ctx.task.fields}
    fields = answer.get("fields")
    if not isinstance(fields, list):
        return default_spec(ctx), "fields must be a list"
    for f in fields:
        if not isinstance(f, dict) or f.get("name") not in known:
            return default_spec(ctx), f"unknown field {f.get('name') if isinstance(f, dict) else f!r}"
        if not set(f.get("values") or []) <= known[f["name"]]:
            return default_spec(ctx), f"values of {f['name']} outside its enum"
    spec = {"keywords": sorted({k.strip().lower() for k in keywords}), "fields": fields,
            "incident_definition": str(answer.get("incident_definition") or ""), "policy_id": ctx.policy.policy_id}
    return spec, None


async def prepare(ctx: MethodContext) -> dict[str, Any]:
    """Phase 1: compile (or read from the cache) and validate the spec; sets ``ctx.spec``.

    Returns ``{spec, usage, cached}``: ``spec.fallback`` holds why the compiled answer was not used
    (the task's default spec was), and ``usage`` the compile call's tokens, cost and calls (one call,
    cached or not), which the run adds to its own usage.
    """
    request = compile_request(ctx)
    usage = Usage()
    result = usage.add(await ctx.llm.complete(request.messages, response_format=request.response_format))
    spec, problem = validate_spec(ctx, result.parsed if result.parse_error is None else None)
    if problem or result.parse_error:
        spec["fallback"] = result.parse_error or problem
    ctx.spec = spec
    return {"spec": spec, "usage": usage.fields(), "cached": result.cached}


def kept_reviews(ctx: MethodContext, restaurant: RestaurantInput) -> list[dict[str, Any]]:
    keywords = tuple((ctx.spec or default_spec(ctx))["keywords"])
    task_keywords = tuple(sorted({k.lower() for k in ctx.task.keywords}))
    return [r for r in restaurant.reviews if has_keyword(r, keywords, task_keywords=task_keywords)]


def extraction_request(ctx: MethodContext, restaurant: RestaurantInput, review: dict[str, Any]) -> Request:
    row = {**review, "business_id": restaurant.business_id, "name": restaurant.name,
           "categories": restaurant.categories or ""}
    # deferred: the judges package loads judgment logs and datasets (~700 ms), only amos's extraction needs it
    from core.judgments.judges.openai_judge import review_messages

    return Request(review_messages(ctx.task, row), ctx.task.response_format(), EXTRACTION_TOKENS)


def requests(ctx: MethodContext, restaurant: RestaurantInput) -> list[Request]:
    return [extraction_request(ctx, restaurant, r) for r in kept_reviews(ctx, restaurant)]


async def answer(ctx: MethodContext, restaurant: RestaurantInput) -> dict[str, Any]:
    """Phase 2 for one restaurant (see the module docstring)."""
    usage = Usage()
    kept = kept_reviews(ctx, restaurant)
    results = await asyncio.gather(*(
        ctx.llm.complete(req.messages, response_format=req.response_format)
        for req in (extraction_request(ctx, restaurant, r) for r in kept)
    ))
    judgments, extractions = [], []
    for review, result in zip(kept, results, strict=True):
        usage.add(result)
        fields, error = ctx.task.validate_fields(result.parsed) if result.parse_error is None else ({}, result.parse_error)
        extractions.append({"review_id": review["review_id"], "content": result.content, "error": error})
        if error is None:
            excerpt = result.parsed.get("excerpt") if isinstance(result.parsed, dict) else None
            snippet = verbatim_snippet(review.get("text") or "", excerpt if isinstance(excerpt, str) else "")
            judgments.append({"review_id": review["review_id"], "idx": review["idx"], "date": review.get("date"),
                              "snippet": snippet, **fields})
    note = "offline heuristic model" if getattr(ctx.llm, "offline", False) else f"amos with {ctx.llm.model}"
    parsed = contract_from_judgments(judgments, task=ctx.task, policy=ctx.policy,
                                     categories=restaurant.categories, note=note)
    response = json.dumps({"kept_reviews": len(kept), "extractions": extractions}, ensure_ascii=False)
    out = {"verdict": parsed["verdict"], "risk_score": parsed["risk_score"], "parsed": parsed,
           "response": response, **usage.fields(), "extraction_errors": sum(1 for e in extractions if e["error"])}
    return out
