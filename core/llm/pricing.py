"""Prices and costs of LLM calls: :data:`PRICES` (USD per million tokens, list prices), prices
given in ``$WORKBENCH_PRICES``, the Batch API's discount, the client defaults."""

from __future__ import annotations

import math

from core.base.settings import env

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
BATCH_DISCOUNT = 0.5

# USD per 1M tokens (input, output), list prices of the standard tier; dated snapshots
# ("gpt-4o-mini-2024-07-18") use the price of their base name.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
}


def env_prices() -> dict[str, tuple[float, float]]:
    """Prices of models without a list price: ``$WORKBENCH_PRICES="my-model=0.2/0.8,other=1/4"``
    (USD per million input / output tokens); malformed items are ignored."""
    out: dict[str, tuple[float, float]] = {}
    for item in (env("WORKBENCH_PRICES") or "").split(","):
        name, _, value = item.strip().partition("=")
        parts = value.split("/")
        try:
            price = tuple(float(p) for p in parts)
        except ValueError:
            continue
        if name and len(price) == 2 and all(math.isfinite(p) and p >= 0 for p in price):
            out[name] = (price[0], price[1])
    return out


def price_for(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model`` (list prices, then ``$WORKBENCH_PRICES``),
    or None when unknown.

    >>> price_for("gpt-4o-mini-2024-07-18")
    (0.15, 0.6)
    >>> price_for("my-local-model") is None
    True
    """
    table = {**PRICES, **env_prices()}
    if model in table:
        return table[model]
    bases = [name for name in table if model.startswith(name + "-")]
    return table[max(bases, key=len)] if bases else None


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int, *, batch: bool = False,
             price: tuple[float, float] | None = None) -> float | None:
    """Cost of one call in USD (half price with ``batch``); None when the model has no price
    (``price`` overrides the model's).

    >>> cost_usd("gpt-4o-mini", 1_000_000, 1_000_000)
    0.75
    >>> cost_usd("gpt-4o-mini", 1_000_000, 1_000_000, batch=True)
    0.375
    >>> cost_usd("mine", 1_000_000, 0, price=(2.0, 8.0))
    2.0
    """
    price = price or price_for(model)
    if price is None:
        return None
    total = (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
    return round(total * (BATCH_DISCOUNT if batch else 1.0), 10)
