"""Planted content of the demo's two project tasks: dietary restrictions (G1_diet) and business
dining (G2_meetings), written for this project in the policy language (``core/demo/task_data``).

Each restaurant gets a dietary and a business profile from its own random stream (separate from
the G1a stream, so the allergy content and its GT are unchanged); the profile's sentences are added
to reviews that carry no allergy plant, at idx ranges chosen so verdicts change with K for some
restaurants. No planted sentence contains a G1a keyword (tests check it), so the allergy keyword
index and judgments are those of the allergy content alone. The offline cue judge reads exactly
the phrases the task files list, so the planted label of every sentence is what it finds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

TASK_DATA = "task_data"

BUSINESS = {
    "positive": ["We took a client here for a business lunch and the meeting went well.",
                 "Brought a client and two coworkers; we closed the deal over dessert.",
                 "I impressed our client with this place at a business dinner."],
    "negative": ["It was embarrassing in front of our client when the next table started a party.",
                 "Our business dinner here was a mess and the meeting was a disaster.",
                 "At a business lunch I could not hear our client across the table."],
    "neutral": ["Came for a team lunch with colleagues.", "A regular work lunch spot for our office."],
    "quiet": ["The room was quiet enough to talk business.", "Even at noon we could hear each other without effort."],
    "loud": ["The dining room was too loud for a meeting.", "It was so loud we were shouting over the music."],
    "efficient": ["The service was quick and we were back to the office on time."],
    "slow": ["The service was slow and we missed our next meeting."],
    "private": ["They gave us a private room for the meeting.", "We booked a private booth for a client."],
}
DIET_OPEN = {"vegan": "I asked for the vegan version of the curry", "vegetarian": "I ordered the vegetarian platter",
             "dairy_free": "My wife ordered a dairy-free dessert", "halal": "I asked for a halal option"}
DIET_END = {
    "excellent": "and the staff went out of their way to help.",
    "adequate": "and they had options for me.",
    "poor": "but the waiter seemed annoyed and the only option was a side salad.",
    "refused": "but the kitchen would not change the dish, no substitutions.",
    "served": "but I found bacon in it and ate half before anyone noticed.",
    "caught": "but I sent it back because the sauce had cream in it.",
}
DIET_SECONDHAND = "My friend said the {kind} menu here is small."

# profile -> list of (label, lowest idx, highest idx) to plant
BUSINESS_PROFILES: dict[str, list[tuple[str, int, int]]] = {
    "none": [],
    "great": [("positive", 0, 24), ("positive", 0, 24), ("positive", 25, 60), ("positive", 40, 120),
              ("positive", 60, 199), ("positive", 100, 199), ("positive+quiet", 0, 199), ("positive+efficient", 0, 199),
              ("positive+private", 50, 199)],
    "quiet_private": [("private", 0, 24), ("neutral+quiet", 0, 24), ("quiet", 25, 49), ("quiet", 50, 199)],
    "poor": [("loud", 0, 24), ("loud", 0, 40), ("slow", 10, 60), ("loud", 50, 150), ("loud+slow", 60, 199),
             ("negative", 100, 199), ("slow", 120, 199)],
    "fades": [("positive", 0, 24), ("positive+quiet", 0, 24), ("loud", 25, 49), ("loud", 30, 60),
              ("negative+loud", 50, 99), ("slow", 60, 150), ("negative", 100, 199), ("loud", 110, 199)],
    "late_trouble": [("neutral", 0, 24), ("negative", 100, 199), ("loud", 30, 199)],
    "neutral": [("neutral", 0, 199), ("neutral+efficient", 0, 199)],
}
BUSINESS_WEIGHTS = {"none": 40, "great": 12, "quiet_private": 8, "poor": 12, "fades": 8, "late_trouble": 10, "neutral": 10}
DIET_PROFILES: dict[str, list[tuple[str, int, int]]] = {
    "none": [],
    "friendly": [("firsthand:excellent", 0, 60), ("firsthand:adequate", 0, 199), ("firsthand:excellent", 50, 199)],
    "risky": [("firsthand:served", 0, 24), ("firsthand:refused", 10, 60), ("firsthand:refused", 30, 120),
              ("firsthand:poor", 40, 199), ("firsthand:served", 60, 199), ("firsthand:served", 120, 199)],
    "slipping": [("firsthand:adequate", 0, 24), ("firsthand:caught", 30, 49), ("firsthand:poor", 50, 99),
                 ("firsthand:poor", 60, 120), ("firsthand:served", 100, 199)],
    "hearsay": [("secondhand", 0, 199), ("secondhand", 0, 199)],
}
DIET_WEIGHTS = {"none": 50, "friendly": 20, "risky": 8, "slipping": 10, "hearsay": 12}


@dataclass(frozen=True)
class TopicPlant:
    """One planted sentence: the task it belongs to, its label and the text."""

    task: str
    label: str
    text: str


def business_sentence(rng: random.Random, label: str) -> str:
    """The sentence(s) of a business label such as ``positive+quiet``."""
    return " ".join(rng.choice(BUSINESS[part]) for part in label.split("+"))


def diet_sentence(rng: random.Random, label: str) -> str:
    """The sentence of a dietary label (``firsthand:served``, ``secondhand``)."""
    kind = rng.choice(list(DIET_OPEN))
    if label == "secondhand":
        return DIET_SECONDHAND.format(kind=kind.replace("_", "-"))
    return f"{DIET_OPEN[kind]} {DIET_END[label.split(':', 1)[1]]}"


def _place(rng: random.Random, plan: list[tuple[str, int, int]], free: list[int], used: set[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for label, lo, hi in plan:
        options = [i for i in free if lo <= i <= hi and i not in used]
        if options:
            idx = rng.choice(options)
            used.add(idx)
            out[idx] = label
    return out


def plan_topics(seed: int, position: int, n_reviews: int, taken: set[int]) -> dict[int, TopicPlant]:
    """idx → planted sentence of one restaurant (reviews in ``taken`` carry allergy content)."""
    rng = random.Random(f"scale-workbench-demo:{seed}:topics:{position}")
    free = [i for i in range(n_reviews) if i not in taken]
    used: set[int] = set()
    business = rng.choices(list(BUSINESS_WEIGHTS), list(BUSINESS_WEIGHTS.values()))[0]
    diet = rng.choices(list(DIET_WEIGHTS), list(DIET_WEIGHTS.values()))[0]
    out: dict[int, TopicPlant] = {}
    for idx, label in _place(rng, BUSINESS_PROFILES[business], free, used).items():
        out[idx] = TopicPlant("G2_meetings", f"{business}:{label}", business_sentence(rng, label))
    for idx, label in _place(rng, DIET_PROFILES[diet], free, used).items():
        out[idx] = TopicPlant("G1_diet", f"{diet}:{label}", diet_sentence(rng, label))
    return out


def every_sentence() -> list[str]:
    """Every sentence the planting can produce (for the keyword checks in tests)."""
    parts = [s for group in BUSINESS.values() for s in group]
    parts += [f"{o} {e}" for o in DIET_OPEN.values() for e in DIET_END.values()]
    parts += [DIET_SECONDHAND.format(kind=k.replace("_", "-")) for k in DIET_OPEN]
    return parts
