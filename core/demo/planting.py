"""What each demo restaurant carries: a profile, and the planted content of its reviews by idx.

The planted labels are the TRUE G1a labels of a review (SPEC §2.3); reviews without a plant are
none/none/none and contain no G1a keyword. A few "special" profiles are placed so that G1a v1 GT
by K (SPEC §3.1), computed from the true labels, resembles the real xnot distribution
(K25 99/1/0, K50 96/2/2, K100 96/1/3, K200 93/5/2), with verdicts that change with K:

==========================  ===========  =====  =====  =====  =====
profile                     cuisine      K25    K50    K100   K200
==========================  ===========  =====  =====  =====  =====
flip_vetri_like             Italian      Low    High   Low    Low
critical_recent_severe      Thai         Low    Crit   Crit   Crit
flip_high_to_critical       Chinese      High   High   Crit   Crit
critical_then_high          Vietnamese   Low    Crit   Crit   High
high_mild_recent            Indian       Low    Low    High   High
high_dismissive_staff       Japanese     Low    Low    Low    High
high_secondhand_betrayal    Chinese      Low    Low    Low    High
high_old_moderate           Mexican      Low    Low    Low    High
==========================  ===========  =====  =====  =====  =====

Every other restaurant gets a background profile that stays Low at every K (mentions, false
friends, hypotheticals, secondhand stories, positive staff, at most one negative interaction
where the cuisine modifier allows it, harmless firsthand mild incidents).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from core.base.errors import UnknownNameError

KINDS = ("incident", "interaction", "secondhand", "hypothetical", "mention", "false_friend", "near_miss")


@dataclass(frozen=True)
class Plant:
    """The true G1a labels of one review and, optionally, its forced stars and useful votes."""

    kind: str
    severity: str = "none"
    account: str = "none"
    interaction: str = "none"
    assurance: bool = False
    staff: str = "none"  # none | accommodating | dismissive | refused
    stars: int | None = None
    useful: int | None = None


def incident(severity: str, interaction: str = "none", *, stars: int | None = None,
             useful: int | None = None) -> Plant:
    """A firsthand incident; ``interaction`` none, negative (dismissive staff) or betrayal."""
    staff = {"none": "none", "negative": "dismissive", "betrayal": "accommodating"}[interaction]
    return Plant("incident", severity, "firsthand", interaction, interaction == "betrayal", staff, stars, useful)


def positive(*, assurance: bool = False, stars: int | None = None, useful: int | None = None) -> Plant:
    """Staff asked about allergies and accommodated (no incident)."""
    return Plant("interaction", interaction="positive", assurance=assurance, staff="accommodating",
                 stars=stars, useful=useful)


def negative(staff: str = "dismissive", *, stars: int | None = None, useful: int | None = None) -> Plant:
    """Dismissive or refusing staff (no incident)."""
    return Plant("interaction", interaction="negative", staff=staff, stars=stars, useful=useful)


def secondhand(severity: str, interaction: str = "none", *, stars: int | None = None,
               useful: int | None = None) -> Plant:
    """Someone else's incident, retold; ``interaction`` none or betrayal."""
    betrayal = interaction == "betrayal"
    return Plant("secondhand", severity, "secondhand", interaction, betrayal,
                 "accommodating" if betrayal else "none", stars, useful)


HYPOTHETICAL = Plant("hypothetical", account="hypothetical")
MENTION = Plant("mention")
FALSE_FRIEND = Plant("false_friend")
# Names a reaction or a condition but reports no incident: heuristic-v1 reads one, v2 does not.
NEAR_MISS = Plant("near_miss")


@dataclass(frozen=True)
class Placement:
    """A plant wanted at ``idx``; ``years`` (inclusive) constrains the review's year."""

    idx: int
    plant: Plant
    years: tuple[int, int] | None = None


PlacementFn = Callable[[random.Random, int], list[Placement]]


@dataclass(frozen=True)
class Profile:
    """A restaurant profile: fixed or random placements, background richness, date span."""

    name: str
    description: str
    placements: PlacementFn
    cuisine: str | None = None  # a special profile's cuisine
    rich_background: bool = True  # background may add positive interactions
    span: tuple[str, str] | None = None  # (first, last) review date "YYYY-MM-DD"
    min_matches: tuple[tuple[int, int], ...] = ()  # (K, n): at least n planted reviews with idx < K
    allowed: Callable[[float], bool] = field(default=lambda modifier: True)  # by cuisine modifier


def _fixed(*placements: Placement) -> PlacementFn:
    return lambda rng, n: list(placements)


def _p(idx: int, plant: Plant, years: tuple[int, int] | None = None) -> Placement:
    return Placement(idx, plant, years)


_DENSE = ((25, 3), (50, 11), (100, 14))
SPECIAL_PROFILES: tuple[Profile, ...] = (
    Profile("flip_vetri_like", "old severe incident at idx 39, praise at 49, 52, 59, 83, 88 …: Low/High/Low/Low",
            _fixed(_p(39, incident("severe", stars=5, useful=2), (2012, 2020)),
                   _p(49, positive(stars=5, useful=3)), _p(52, positive(stars=5, useful=1)),
                   _p(59, positive(stars=5, useful=4)), _p(83, positive(stars=5, useful=1)),
                   _p(85, negative(stars=3, useful=1)), _p(88, positive(stars=5, useful=1)),
                   _p(133, positive(stars=5, useful=1)), _p(192, positive(stars=5, useful=8))),
            "Italian", False, ("2014-03-01", "2021-04-30"), _DENSE),
    Profile("critical_recent_severe", "recent severe incident after a false assurance at idx 31",
            _fixed(_p(31, incident("severe", "betrayal", stars=1, useful=7), (2023, 2025)),
                   _p(140, incident("moderate", "negative", stars=2, useful=2))),
            "Thai", False, ("2015-01-10", "2025-09-30"), _DENSE),
    Profile("flip_high_to_critical", "recent mild incident at idx 18, moderate one with dismissive staff at 60",
            _fixed(_p(18, incident("mild", stars=3, useful=0), (2024, 2025)),
                   _p(60, incident("moderate", "negative", stars=1, useful=2))),
            "Chinese", False, ("2016-04-01", "2025-10-15"), _DENSE),
    Profile("critical_then_high", "moderate incident (2022-23) at idx 44, six positives after it",
            _fixed(_p(44, incident("moderate", stars=3, useful=1), (2022, 2023)),
                   *(_p(i, positive(stars=5)) for i in (57, 91, 108, 126, 151, 177))),
            "Vietnamese", False, ("2016-01-01", "2025-08-31"), _DENSE),
    Profile("high_mild_recent", "recent mild incident at idx 70 in a four-star review",
            _fixed(_p(70, incident("mild", stars=4, useful=1), (2022, 2025))),
            "Indian", False, ("2019-05-01", "2025-09-30"), _DENSE),
    Profile("high_dismissive_staff", "four dismissive or refusing staff interactions, no incident",
            _fixed(_p(30, negative("dismissive", stars=2)), _p(110, negative("refused", stars=3)),
                   _p(140, negative("dismissive", stars=1)), _p(175, negative("refused", stars=2))),
            "Japanese", False, None, _DENSE),
    Profile("high_secondhand_betrayal", "a friend's reaction after a false assurance (secondhand) at idx 150",
            _fixed(_p(150, secondhand("moderate", "betrayal", stars=2, useful=1))),
            "Chinese", False, None, _DENSE),
    Profile("high_old_moderate", "moderate incident years ago at idx 120",
            _fixed(_p(120, incident("moderate", stars=3, useful=1), (2012, 2020))),
            "Mexican", False, ("2012-06-01", "2025-08-31"), _DENSE),
)


def _random_idx(rng: random.Random, n: int, count: int) -> list[int]:
    return rng.sample(range(n), min(count, n))


def _accommodating(rng: random.Random, n: int) -> list[Placement]:
    return [_p(i, positive(assurance=rng.random() < 0.2)) for i in _random_idx(rng, n, rng.randint(3, 6))]


def _one_negative(rng: random.Random, n: int) -> list[Placement]:
    idx = _random_idx(rng, n, rng.randint(2, 4))
    return [_p(idx[0], negative(rng.choice(("dismissive", "refused"))))] + [_p(i, positive()) for i in idx[1:]]


def _mild_five_star(rng: random.Random, n: int) -> list[Placement]:
    # weight (5 - 5) + ln(0 + 1) = 0, so the incident adds nothing to the v1 score
    return [_p(rng.randrange(n), incident("mild", stars=5, useful=0))]


def _old_mild(rng: random.Random, n: int) -> list[Placement]:
    # 2·0.3·((5 - 4) + ln 1) = 0.6 on top of 3.0: stays Low where the cuisine modifier is 1
    return [_p(rng.randrange(n // 2, n), incident("mild", stars=4, useful=0), (2012, 2020))]


def _storytellers(rng: random.Random, n: int) -> list[Placement]:
    out = [_p(i, HYPOTHETICAL) for i in _random_idx(rng, n, rng.randint(3, 6))]
    severities = ("mild", "moderate", "severe")
    return out + [_p(i, secondhand(rng.choice(severities))) for i in _random_idx(rng, n, rng.randint(1, 3))]


BACKGROUND_PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("clean", "mentions and false friends, now and then a positive interaction", lambda rng, n: []),
    Profile("accommodating", "several positive staff interactions", _accommodating),
    Profile("low_one_negative", "one negative interaction, some positives", _one_negative,
            allowed=lambda modifier: modifier <= 1.5),
    Profile("low_mild_five_star", "a firsthand mild incident in a five-star review with no votes",
            _mild_five_star),
    Profile("low_old_mild", "an old firsthand mild incident in a four-star review", _old_mild,
            allowed=lambda modifier: modifier <= 1.0),
    Profile("low_storytellers", "hypothetical worries and secondhand stories, no firsthand incident",
            _storytellers),
)}
# The cycle of background profiles over the non-special restaurants (falls back to "clean").
BACKGROUND_CYCLE: tuple[str, ...] = (
    "clean", "accommodating", "clean", "low_storytellers", "clean", "low_one_negative", "clean",
    "accommodating", "low_mild_five_star", "clean", "low_old_mild", "clean", "low_storytellers",
    "accommodating", "clean", "low_one_negative",
)

PROFILES: dict[str, Profile] = {**{p.name: p for p in SPECIAL_PROFILES}, **BACKGROUND_PROFILES}


def get_profile(name: str) -> Profile:
    """A profile by name; unknown names raise :class:`UnknownNameError`."""
    if name not in PROFILES:
        raise UnknownNameError("demo profile", name, list(PROFILES))
    return PROFILES[name]

# Share of reviews that carry background keyword content (mentions, false friends …), per cuisine.
BACKGROUND_RATE: dict[str, float] = {
    "Thai": 0.19, "Vietnamese": 0.18, "Chinese": 0.16, "Indian": 0.16, "Coffee & Tea": 0.17,
    "Breakfast & Brunch": 0.15, "Italian": 0.15, "Pizza": 0.14, "Sandwiches": 0.14, "Steakhouses": 0.13,
    "Mexican": 0.14, "Japanese": 0.14, "Korean": 0.14, "American (New)": 0.14,
}


def _background_plant(rng: random.Random, rich: bool) -> Plant:
    r = rng.random()
    if rich and r < 0.03:
        return positive(assurance=rng.random() < 0.15)
    if r < 0.50:
        return FALSE_FRIEND
    if r < 0.905:
        return MENTION
    if r < 0.91:
        return NEAR_MISS
    if r < 0.96:
        return HYPOTHETICAL
    return secondhand(rng.choice(("mild", "moderate", "severe")))


# GT is computed for these K (SPEC §3): a plant may move to honour its years, but never across one.
K_BOUNDS = (0, 25, 50, 100, 200)


def _resolve(target: int, years: tuple[int, int] | None, dates: list[str], taken: dict[int, Plant]) -> int | None:
    """The free idx nearest ``target`` within its K bucket whose year is within ``years``.

    Without such an idx the year constraint is dropped (the nearest free idx in the bucket).
    """
    n = len(dates)
    if target >= n:
        return None
    lo = max(b for b in K_BOUNDS if b <= target)
    hi = min([b for b in K_BOUNDS if b > target] + [max(n, target + 1)])
    order = sorted(range(lo, min(hi, n)), key=lambda i: (abs(i - target), -i))
    free = [i for i in order if i not in taken]
    fitting = [i for i in free if years is None or years[0] <= int(dates[i][:4]) <= years[1]]
    candidates = fitting or free
    return candidates[0] if candidates else None


def plan_plants(rng: random.Random, profile: Profile, category: str, dates: list[str]) -> dict[int, Plant]:
    """The plants of one restaurant by idx, given its review dates (newest first)."""
    n = len(dates)
    plants: dict[int, Plant] = {}
    placements = profile.placements(rng, n) if n else []
    # incidents first: their years matter most, interactions may move a step
    for placement in sorted(placements, key=lambda p: (p.plant.kind != "incident", p.idx)):
        idx = _resolve(placement.idx, placement.years, dates, plants)
        if idx is not None:
            plants[idx] = placement.plant
    rate = BACKGROUND_RATE.get(category, 0.15)
    for idx in range(n):
        if idx not in plants and rng.random() < rate:
            plants[idx] = _background_plant(rng, profile.rich_background)
    for k, need in profile.min_matches:
        free = [i for i in range(min(k, n)) if i not in plants]
        rng.shuffle(free)
        have = sum(1 for i in plants if i < k)
        for idx in free[: max(0, need - have)]:
            plants[idx] = _background_plant(rng, False)
    return plants
