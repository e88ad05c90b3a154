"""The spending cap of LLM judging (``judge --max-cost USD``, or the workspace default): the
:class:`core.llm.budget.Budget` of a judging run, one review per call.

Each review's call is bounded from above before it is sent (its prompt, and
:data:`COMPLETION_TOKENS_PER_REVIEW` answer tokens, each with the budget's margins); once the next
review's bound would take the spent and reserved cost past the cap, no further review is sent:
the run stops as a cancelled run that ``--resume`` continues. Only a single-model judge with a known
price can keep a dollar cap (an ensemble: cap each member's run).
"""

from __future__ import annotations

from typing import Any

from core.base.errors import WorkbenchError
from core.llm.budget import Budget, request_bound
from core.llm.calls import is_local_url
from core.llm.pricing import price_for

COMPLETION_TOKENS_PER_REVIEW = 120  # a judgment's JSON answer (fields and a short excerpt)


def judging_budget(judge: Any, cap: float | None) -> Budget | None:
    """The budget of a judging run with ``judge`` under ``cap`` USD (None: no cap, no budget).

    Raises:
        WorkbenchError: the judge cannot keep a dollar cap (no single model, or a model without a
            price on a remote endpoint).
    """
    if cap is None:
        return None
    model = getattr(judge, "model", None)
    if not isinstance(model, str) or not hasattr(judge, "messages"):
        raise WorkbenchError(f"judge {judge.judge_id} cannot keep --max-cost: a dollar cap needs one LLM model "
                             "(judge each model of an ensemble with its own cap)")
    if price_for(model) is None:
        if is_local_url(str(getattr(getattr(getattr(judge, "llm", None), "client", None), "base_url", "") or "")):
            return None  # a model on this machine costs nothing: nothing to cap
        raise WorkbenchError(f"model {model!r} has no known price, so --max-cost cannot be kept: set its price in "
                             "$WORKBENCH_PRICES, or judge without a cap")
    return Budget(cap, 0.0, lambda row: request_bound(model, judge.messages(row), COMPLETION_TOKENS_PER_REVIEW))


def batch_bound(judge: Any, rows: Any) -> float:
    """An upper bound on what a batch of ``rows`` may cost (the on-demand price: no discount assumed)."""
    model = str(getattr(judge, "model", ""))
    return sum(request_bound(model, judge.messages(row), COMPLETION_TOKENS_PER_REVIEW) for row in rows)


def spent(judge: Any) -> float:
    """What the judge's calls have cost so far (cached answers cost nothing)."""
    totals = getattr(judge, "usage_totals", None)
    usage = totals() if callable(totals) else None
    return float((usage or {}).get("cost_usd") or 0.0)
