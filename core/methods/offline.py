"""The offline ``heuristic`` model: the AsyncLLM interface, answered by rules, no network.

It reads the prompts the methods write (the restaurant header and review blocks of
:func:`core.methods.contract.reviews_block`, the judgment prompt's quoted review) and answers:

- a restaurant contract prompt (direct, cot, rag): every review judged by the heuristic judge's
  rules (``core.judgments.judges.heuristic.judge_text``), then scored with the policy named in the prompt
  (:func:`core.methods.contract.contract_from_judgments`);
- an amos compile prompt: the task's own keywords and fields;
- a judgment prompt (amos extraction): the heuristic judge's answer for that review.

Deterministic, free, instant. Every answer says it is offline (``offline: true`` in the answer,
"offline heuristic model" in its reasoning), and so does every sample made with it.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

from core.ground_truth.policies.loader import get_policy
from core.judgments.judges.heuristic import judge_text
from core.llm import OFFLINE_MODEL, CallResult, Completion, UsageTotals
from core.methods.contract import contract_from_judgments, parse_restaurant_prompt, verbatim_snippet
from core.tasks import get_task

if TYPE_CHECKING:
    from core.workspace import Workspace

NOTE = "offline heuristic model (deterministic rules, no LLM)"
_QUOTED = re.compile(r'"""\n(.*)\n"""', re.S)


def answer_for(messages: list[dict[str, Any]], response_format: dict[str, Any] | None,
               ws: Workspace | None = None) -> dict[str, Any]:
    """The offline model's answer (a JSON object) to one request of a method; the task and policy
    the prompt names are those in force in ``ws`` (None: the built-in ones)."""
    name = ((response_format or {}).get("json_schema") or {}).get("name", "")
    prompt = str(messages[-1].get("content") or "")
    if name.startswith("contract"):
        answer = _contract(prompt, ws)
    elif name.startswith("amos_spec"):
        answer = _spec(prompt, ws)
    else:
        answer = _judgment(prompt, name, ws)
    answer["offline"] = True
    return answer


class OfflineModel:
    """Stands in for :class:`core.llm.AsyncLLM` (same ``complete``/``check``/``is_cached``)."""

    offline = True
    model = OFFLINE_MODEL
    base_url = "offline"
    concurrency = 1

    def __init__(self, ws: Workspace | None) -> None:
        self.ws = ws
        self.totals = UsageTotals()

    def is_cached(self, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None) -> bool:
        return False

    async def check(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    async def complete(self, messages: list[dict[str, Any]], *, response_format: dict[str, Any] | None = None) -> CallResult:
        started = time.perf_counter()
        answer = answer_for(messages, response_format, self.ws)
        content = json.dumps(answer, ensure_ascii=False)
        self.totals.add(Completion(content, OFFLINE_MODEL, 0, 0, 0.0))
        return CallResult(content, answer, None, OFFLINE_MODEL, 0, 0, 0.0,
                          (time.perf_counter() - started) * 1000, offline=True)



def _contract(prompt: str, ws: Workspace | None) -> dict[str, Any]:
    head, reviews = parse_restaurant_prompt(prompt)
    task, policy = get_task(head["Task ID"], ws), get_policy(head["Policy ID"], ws)
    judgments = []
    for r in reviews:
        fields, excerpt, _ = judge_text(r["text"]) if task.task_id == "G1a" else ({}, "", None)
        judgments.append({**r, **fields, "snippet": verbatim_snippet(r["text"], excerpt)})
    return contract_from_judgments(judgments, task=task, policy=policy,
                                   categories=head.get("Categories"), note=NOTE)


def _spec(prompt: str, ws: Workspace | None) -> dict[str, Any]:
    head, _ = parse_restaurant_prompt(prompt)
    task = get_task(head["Task ID"], ws)
    return {"keywords": list(task.keywords),
            "fields": [{"name": f.name, "values": list(f.values)} for f in task.fields],
            "incident_definition": f"{NOTE}: the task's own keywords and fields"}


def _judgment(prompt: str, schema_name: str, ws: Workspace | None) -> dict[str, Any]:
    match = _QUOTED.search(prompt)
    text = match.group(1) if match else prompt
    task = get_task(schema_name.split("_judgment_")[0], ws) if "_judgment_" in schema_name else None
    if task is not None and task.task_id != "G1a":
        return {**{f.name: f.values[0] for f in task.fields}, "excerpt": ""}
    fields, excerpt, _ = judge_text(text)
    return {**fields, "excerpt": excerpt}
