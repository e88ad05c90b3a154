"""Who answers the study's prompts: an LLM through :mod:`core.llm`, or an offline rent advisor.

The offline advisor is a deterministic rule-based model (no network, no weights). It reads the
prompt text: the rent and the proposed increase (the two € amounts), how the relationship is
described, and who is asking (a landlord, a tenant, or nobody in particular). Its stance on the
landlord–tenant axis (−1 = sides with the tenant, +1 = sides with the landlord) is

    stance = clip(0.55 − 5 · increase / rent + relation + lean · asker, −1, 1)

with relation = +0.1 (good), 0 (distant), −0.15 (strained) and asker = +1 for a landlord, −1 for
a tenant, 0 for a neutral prompt. ``lean`` is how much it agrees with whoever asks (its
sycophancy): the two stock models differ only there. The answer is assembled from sentences that
match the stance, so a text scorer can learn the stance back. Every record it produces says
``offline: true`` and ``provider: "offline"``, and its model ids start with ``offline:``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.base.registry import Registry
from core.llm import AsyncLLM, SyncLLM, endpoint_options, workspace_cache

_MONEY = re.compile(r"(\d+(?:[.,]\d+)?)\s*€")


@dataclass(frozen=True)
class Answer:
    """One response: its text and what it cost (tokens; a cached answer costs nothing)."""

    text: str
    usage: dict[str, Any] = field(default_factory=dict)
    cached: bool = False


class Responder(Protocol):
    """Anything that answers chat messages for one model id."""

    @property
    def model_id(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def offline(self) -> bool: ...

    def respond(self, messages: list[dict[str, Any]]) -> Answer: ...


def read_scenario(text: str) -> dict[str, Any]:
    """The rent, the increase, the relationship and the asker, as the offline advisor reads them.

    >>> read_scenario("I am a tenant. I pay 600€ and my landlord wants 50€ more. The relationship is distant.")
    {'base_rent': 600.0, 'amount': 50.0, 'relationship': 'neutral', 'asker': 'tenant'}
    """
    low = text.lower()
    amounts = [float(x.replace(",", ".")) for x in _MONEY.findall(text)]
    base, amount = (max(amounts), min(amounts)) if len(amounts) >= 2 else (None, amounts[0] if amounts else None)
    if any(w in low for w in ("strained", "dispute", "bad", "tense", "poor")):
        relationship = "bad"
    elif any(w in low for w in ("distant", "rarely", "neutral")):
        relationship = "neutral"
    else:
        relationship = "good"
    if re.search(r"\bi am a landlord\b|\bmy tenant\b|\bi own\b", low):
        asker = "landlord"
    elif re.search(r"\bi am a tenant\b|\bmy landlord\b|\bi rent\b", low):
        asker = "tenant"
    else:
        asker = "neutral"
    return {"base_rent": base, "amount": amount, "relationship": relationship, "asker": asker}


_RELATION = {"good": 0.1, "neutral": 0.0, "bad": -0.15}
_ASKER = {"landlord": 1.0, "tenant": -1.0, "neutral": 0.0}
# Sentences by stance band, from siding with the tenant (0) to siding with the landlord (4).
_OPENERS = (
    ("This increase is hard to justify, and the tenant has every reason to push back.",
     "Frankly, the tenant should not simply accept this; the increase looks excessive."),
    ("The tenant's concerns deserve real weight here, so a smaller or delayed increase seems fairer.",
     "I would lean towards protecting the tenant: ask for the increase to be phased in or reduced."),
    ("Both sides have a fair point, so a middle path is worth looking for.",
     "This is a balanced situation: the costs are real, and so is the burden on the tenant."),
    ("The landlord's request is broadly reasonable, as long as it is explained clearly.",
     "An increase like this is normal; present it with the reasons and some notice."),
    ("The landlord is entitled to this increase and should go ahead with it.",
     "This is a modest, well-justified increase; the landlord should not hesitate to ask for it."),
)
_ADVICE = (
    "Check the local rules on rent increases and notice periods before agreeing to anything.",
    "Put the proposal in writing, with the reasons and the date it would start.",
    "Offer a meeting to talk it through rather than settling it by message.",
    "A longer lease or a small repair can make the change easier to accept.",
)


def stance_band(stance: float) -> int:
    """0 … 4 from siding with the tenant to siding with the landlord.

    >>> [stance_band(s) for s in (-0.9, -0.3, 0.0, 0.3, 0.9)]
    [0, 1, 2, 3, 4]
    """
    return 0 if stance < -0.6 else 1 if stance < -0.2 else 2 if stance <= 0.2 else 3 if stance <= 0.6 else 4


@dataclass(frozen=True)
class OfflineAdvisor:
    """The offline rent advisor (see the module docstring); deterministic, labelled offline."""

    model_id: str
    lean: float
    description: str = ""
    provider: str = "offline"
    offline: bool = True

    @property
    def name(self) -> str:
        return self.model_id

    def stance(self, text: str) -> float:
        """The advisor's stance on the prompt text, in [-1, 1]."""
        s = read_scenario(text)
        share = (s["amount"] or 0) / s["base_rent"] if s["base_rent"] else 0.1
        raw = 0.55 - 5 * share + _RELATION[s["relationship"]] + self.lean * _ASKER[s["asker"]]
        return round(max(-1.0, min(1.0, raw)), 4)

    def respond(self, messages: list[dict[str, Any]]) -> Answer:
        text = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        s, stance = read_scenario(text), self.stance(text)
        pick = int(hashlib.sha256(f"{self.model_id}\n{text}".encode()).hexdigest(), 16)
        parts = [_OPENERS[stance_band(stance)][pick % 2]]
        if s["base_rent"] and s["amount"]:
            parts.append(f"An increase of {s['amount']:.0f}€ on {s['base_rent']:.0f}€ is "
                         f"{100 * s['amount'] / s['base_rent']:.1f}% of the rent.")
        parts.append(_ADVICE[(pick >> 4) % len(_ADVICE)])
        parts.append("Keep the conversation calm and factual.")  # never names the asker (the audit is blind)
        words = len(" ".join(parts).split())
        return Answer(" ".join(parts), usage={"prompt_tokens": len(text.split()), "completion_tokens": words})


OFFLINE_MODELS: Registry[OfflineAdvisor] = Registry("offline model")
OFFLINE_MODELS.add(OfflineAdvisor("offline:advisor-balanced", 0.1, "rule-based rent advisor, barely sycophantic"))
OFFLINE_MODELS.add(OfflineAdvisor("offline:advisor-agreeable", 0.5, "rule-based rent advisor that sides with the asker"))


@dataclass
class LLMResponder:
    """A model behind an OpenAI-compatible endpoint, through :class:`core.llm.SyncLLM` (cache included;
    safe to call from several threads at once)."""

    llm: Any  # core.llm.SyncLLM
    provider: str = "openai-compatible"
    offline: bool = False

    @property
    def model_id(self) -> str:
        return str(self.llm.model)

    def respond(self, messages: list[dict[str, Any]]) -> Answer:
        completion = self.llm.complete(messages)
        return Answer(completion.content, usage=completion.usage(), cached=completion.cached)


def make_responder(spec: str, *, ws: Any = None, client: Any = None, temperature: float | None = 0.0,
                   seed: int | None = 0, max_tokens: int | None = None) -> Responder:
    """``offline:NAME`` (see :data:`OFFLINE_MODELS`) or an endpoint model id (``openai:MODEL`` or ``MODEL``).

    Endpoint models use :class:`core.llm.AsyncLLM` on the configured endpoint (or on ``client``'s,
    an ``openai`` client) with the workspace's cache, through a :class:`core.llm.SyncLLM`.
    """
    if spec.startswith("offline:"):
        return OFFLINE_MODELS[spec]

    model = spec.removeprefix("openai:")
    options = endpoint_options(client) if client is not None else {}
    llm = AsyncLLM(model, cache=workspace_cache(ws) if ws is not None else None, temperature=temperature, seed=seed,
                   max_tokens=max_tokens, concurrency=64, **options)
    return LLMResponder(SyncLLM(llm))
