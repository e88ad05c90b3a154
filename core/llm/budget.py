"""What an LLM job may spend: a cap in US dollars checked before each call is sent.

Shared by method runs (:mod:`core.runs.spend`) and LLM judging (:mod:`core.judgments.judges.runner`).
Before an item (a sample, a review) starts, its calls' cost is bounded from above (prompt tokens
estimated with a margin, :data:`COMPLETION_MARGIN` times the expected answer); the item starts only
when what was spent, what the items in flight may still cost and this bound stay within the cap.
Otherwise the job stops there as a cancelled job, which a resume continues (with a new cap). The
cap is ``--max-cost USD``, else the workspace default (``max_cost_usd`` in ``workspace.json``, else
``$WORKBENCH_MAX_COST``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from core.base.errors import WorkbenchError
from core.base.files import read_json
from core.base.settings import env
from core.llm.calls import estimate_tokens
from core.llm.pricing import cost_usd
from core.workspace import Workspace

PROMPT_MARGIN = 1.5  # an estimate of 4 characters per token, with room for tokenizers that split finer
COMPLETION_MARGIN = 2.0  # answers longer than the expected size


def check_cap(value: Any, where: str = "--max-cost") -> float | None:
    """A spending cap in USD: a finite number ≥ 0, or None."""
    if value is None:
        return None
    try:
        cap = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be a number of US dollars, got {value!r}") from None
    if not math.isfinite(cap) or cap < 0:
        raise ValueError(f"{where} must be a finite amount ≥ 0 US dollars, got {value!r}")
    return cap


def default_cap(ws: Workspace) -> float | None:
    """The workspace's default cap: ``max_cost_usd`` in ``workspace.json``, else ``$WORKBENCH_MAX_COST``."""
    meta = ws.root / "workspace.json"
    value = None
    if meta.exists():
        try:
            data = read_json(meta)
        except (ValueError, OSError, WorkbenchError):
            data = {}
        value = data.get("max_cost_usd") if isinstance(data, dict) else None
        if value is not None:
            return check_cap(value, f"{meta}: max_cost_usd")
    value = env("WORKBENCH_MAX_COST")
    return check_cap(value, "$WORKBENCH_MAX_COST") if value else None


def check_price(value: Any) -> tuple[float, float] | None:
    """A price ``(input, output)`` in USD per million tokens from ``"IN,OUT"`` or a pair, or None."""
    if value is None or value == "":
        return None
    parts = value.split(",") if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else [value]
    try:
        price = tuple(float(p) for p in parts)
    except (TypeError, ValueError):
        raise ValueError(f"a price is 'INPUT,OUTPUT' in USD per million tokens, got {value!r}") from None
    if len(price) != 2 or not all(math.isfinite(p) and p >= 0 for p in price):
        raise ValueError(f"a price is two finite amounts ≥ 0 (input, output per million tokens), got {value!r}")
    return price[0], price[1]


def request_bound(model: str, messages: list[dict[str, Any]], completion_tokens: int,
                  price: tuple[float, float] | None = None) -> float:
    """An upper bound on what one request may cost (0 for an unpriced model)."""
    prompt = math.ceil(estimate_tokens(messages) * PROMPT_MARGIN)
    completion = math.ceil(completion_tokens * COMPLETION_MARGIN)
    return cost_usd(model, prompt, completion, price=price) or 0.0


class Budget:
    """The cap of one execution: ``admit`` before a sample starts, ``settle`` when it ends.

    Args:
        cap: USD, None for no cap.
        spent: what the run spent before (an earlier start's samples and compile calls).
        bound: an upper bound on the cost of a sample not run yet.
    """

    def __init__(self, cap: float | None, spent: float, bound: Callable[[Any], float]) -> None:
        self.cap, self.spent, self.bound = cap, spent, bound
        self.reserved: dict[str, float] = {}
        self.exhausted = False

    def admit(self, key: str, item: Any) -> bool:
        if self.cap is None:
            return True
        need = self.bound(item)
        if self.spent + sum(self.reserved.values()) + need > self.cap + 1e-12:
            self.exhausted = True
            return False
        self.reserved[key] = need
        return True

    def settle(self, key: str, cost: float) -> None:
        self.reserved.pop(key, None)
        self.spent += cost

    def as_dict(self) -> dict[str, Any]:
        return {"max_cost_usd": self.cap, "stopped_at_cap": self.exhausted}
