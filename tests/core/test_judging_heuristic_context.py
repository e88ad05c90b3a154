"""heuristic-v2 r2: severity cues need allergy context next to them, and no other explanation.

The texts are written here, after the three ways issue 28 saw heuristic-v2 (r1) invent a firsthand
incident on xnot reviews it was never tuned on (a place name with a medical word, a spicy dish that
numbs the mouth, an ordinary cold and its medicine), plus a cue far from any allergy word; each
group also holds real incidents that must survive. The third column is what r1 answered (run on
main at 3610e52, the code before r2, as ``bench/offline_judge_quality.py --baseline`` runs it), kept
to show the change.
"""

from __future__ import annotations

import pytest

from core.judgments.judges.heuristic import V2, HeuristicJudge, judge_text
from core.judgments.judges.heuristic_context import context_reason, is_place
from core.tasks import get_task

FIELDS = ("incident_severity", "account_type", "safety_interaction")
NONE = ("none", "none", "none")

# (text, r2's answer, r1's answer)
CASES = [
    # a hospital as a place, a description or a name
    ("Great spot across the street from Pennsylvania Hospital; the almond croissant was flaky.", NONE,
     ("severe", "firsthand", "none")),
    ("We come here after visiting my dad at Jefferson Hospital. The pad thai with peanuts is our go-to.", NONE,
     ("severe", "firsthand", "none")),
    ("Children's Hospital staff fill the place at lunch, and the walnut brownies sell out fast.", NONE,
     ("severe", "firsthand", "none")),
    ("The lighting is like a hospital waiting room, though the pistachio gelato was good.", NONE,
     ("severe", "firsthand", "none")),
    ("I'm allergic to cashews and there were cashews in the curry; I ended up in the hospital.",
     ("severe", "firsthand", "none"), ("severe", "firsthand", "none")),
    ("My son reacted to the peanut sauce and we spent the night at Jefferson Hospital.",
     ("severe", "firsthand", "none"), ("severe", "firsthand", "none")),
    # the dish's spice numbs the mouth
    ("The Sichuan peppercorn chicken with peanuts is the star; my lips went numb halfway through.", NONE,
     ("mild", "firsthand", "none")),
    ("Get the dan dan noodles with peanuts and chili oil. My tongue was tingling for ten minutes.", NONE,
     ("mild", "firsthand", "none")),
    ("I have a peanut allergy and my mouth started to tingle after two bites of the satay.",
     ("mild", "firsthand", "none"), ("mild", "firsthand", "none")),
    ("I'm allergic to peanuts, and even in this spicy dish my lips started tingling within minutes.",
     ("mild", "firsthand", "none"), ("mild", "firsthand", "none")),
    # an ordinary cold (or pollen) and its medicine
    ("I had a terrible cold, so I took a Claritin and ordered the pho; the peanut sauce on the side was great.", NONE,
     ("moderate", "firsthand", "none")),
    ("Came in with the flu hoping the soup would help. Took some DayQuil and the almond chicken but still felt sick.",
     NONE, ("mild", "firsthand", "none")),
    ("My allergies were acting up from the pollen, so I popped a Zyrtec before we tried the walnut salad.", NONE,
     ("moderate", "firsthand", "none")),
    ("Fighting a cold all week; I took some allergy medicine before dinner.", NONE,
     ("moderate", "firsthand", "none")),
    ("I came in with a cold and my lips swelled after the peanut sauce.", ("moderate", "firsthand", "none"),
     ("moderate", "firsthand", "none")),  # a cold does not swell lips
    ("I'm allergic to walnuts; the salad had them and I had to take two Benadryl.",
     ("moderate", "firsthand", "none"), ("moderate", "firsthand", "none")),
    # allergy context two sentences away is not context; one sentence away is
    ("The peanut noodles were great. The service was slow. Later that night my stomach hurt.", NONE,
     ("mild", "firsthand", "none")),
    ("Nut allergy here. I broke out in a rash after the korma.", ("moderate", "firsthand", "none"),
     ("moderate", "firsthand", "none")),
    ("The satay gave me hives within minutes.", ("moderate", "firsthand", "none"), ("moderate", "firsthand", "none")),
]
# Idioms and hyperboles that look like symptoms, beside an allergen (r2's idiom and spice rules);
# r1 claimed a firsthand incident in each of the five that are none.
IDIOMS = [
    ("The wings with the peanut rub were so spicy I could barely breathe.", NONE),
    ("I was so full after the almond cake I could barely breathe.", NONE),
    ("I was sick of waiting, and the walnut salad was soggy anyway.", NONE),
    ("Ordering the pecan pie was a rash decision; it was too sweet.", NONE),
    ("A fight broke out at the bar while we ate our peanut noodles.", NONE),
    ("Allergic to peanuts, and after the satay I broke out in a rash.", ("moderate", "firsthand", "none")),
    ("I'm allergic to peanuts and could barely breathe after the satay.", ("severe", "firsthand", "none")),
]


def _fields(text: str) -> tuple[str, ...]:
    return tuple(judge_text(text, V2)[0][f] for f in FIELDS)


@pytest.mark.parametrize(("text", "r2", "r1"), CASES)
def test_r2_needs_allergy_context_and_no_other_explanation(text, r2, r1):
    assert _fields(text) == r2


@pytest.mark.parametrize(("text", "expected"), IDIOMS)
def test_r2_idioms_and_hyperboles_are_not_symptoms(text, expected):
    assert _fields(text) == expected


def test_the_cases_cover_both_directions():
    """Eleven texts where r1 invented an incident (r2 drops them), eight real incidents both keep."""
    assert sum(r1 != r2 for _, r2, r1 in CASES) == 11
    assert sum(r1 == r2 != NONE for _, r2, r1 in CASES) == 8


def test_r2_says_why_a_cue_was_dropped():
    _, _, raw = judge_text("Great spot across the street from Pennsylvania Hospital; the almond croissant was flaky.", V2)
    assert raw["rules_version"] == "heuristic-v2" and raw["rules_revision"] == "r2"
    assert {s["why"] for s in raw["suppressed"]} == {"a place, not a visit for a reaction"}
    _, _, raw = judge_text("The peanut noodles were great. The service was slow. Later that night my stomach hurt.", V2)
    assert raw["suppressed"][0]["why"] == "no allergy context in its sentence or a neighbouring one"


def test_records_carry_the_rules_revision_in_prompt_version():
    row = {"business_id": "b", "review_id": "r", "idx": 0, "text": "I got hives from the satay (peanuts)."}
    v2 = HeuristicJudge(get_task("G1a", None), "heuristic-v2").judge([row])[0]
    assert v2["judge"] == "heuristic-v2" and v2["prompt_version"] == "heuristic-v2/r2"
    v1 = HeuristicJudge(get_task("G1a", None)).judge([row])[0]
    assert v1["prompt_version"] == "heuristic-v1" and "rules_revision" not in v1["raw"]


@pytest.mark.parametrize(("text", "cue", "expected"), [
    ("We parked across the street from the hospital.", "hospital", True),
    ("Two blocks from the Hospital of the University of Pennsylvania.", "Hospital", True),
    ("Pennsylvania Hospital is around the corner.", "Hospital", True),
    ("The room had that hospital lighting.", "hospital", True),
    ("I ended up in the hospital.", "hospital", False),
    ("We rushed him to Jefferson Hospital.", "Hospital", False),
    ("Then the Hospital called.", "Hospital", False),  # a capital without a name around it
    ("HOSPITAL FOOD WOULD BE BETTER.", "HOSPITAL", True),  # "hospital food" is a description in any case
    ("I WAS IN THE HOSPITAL ALL NIGHT.", "HOSPITAL", False),  # a shouted sentence is not a name
])
def test_is_place(text, cue, expected):
    start = text.index(cue)
    assert is_place(text, 0, start, start + len(cue)) is expected


def test_context_reason_edge_cases():
    one = [(0, 11)]
    assert context_reason("hives today", one, 0, 0, 5, "hives") is None  # hives are their own context
    assert context_reason("nauseous", [(0, 8)], 0, 0, 8, "nausea") == "no allergy context in its sentence or a neighbouring one"
