"""Planted sentences: allergy incidents, staff interactions, hypotheticals, mentions, false friends.

Each planted kind has several phrasings so a rule-based judge has real work to do: severity cues
are sometimes explicit ("EpiPen", "hives") and sometimes implicit ("my throat started closing");
firsthand accounts may be about a member of the dining party ("my son"); secondhand accounts
repeat what someone else said; hypotheticals voice a worry without an incident. Every rendered
planted sentence contains at least one G1a keyword (tested), so every planted review is judged.

Slots: ``{nut}`` (an allergen, always a keyword), ``{adish}`` (a dish containing it),
``{allergy}`` (e.g. "tree nut allergy"), ``{free}`` ("nut-free" …), ``{staff}``, ``{dish}``,
``{num}``, ``{mins}``; third-person cues use ``{pron}``/``{pos}`` of a person.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from core.demo.planting import Plant
from core.demo.templates import lines
from core.demo.text import is_plural

# (first person clause, third person clause) per severity (SPEC §2.3 meanings).
SEVERITY_CUES: dict[str, tuple[tuple[str, str], ...]] = {
    "mild": (
        ("my stomach was upset for the rest of the night", "{pron} had an upset stomach for the rest of the night"),
        ("I had cramps and a queasy stomach for a few hours", "{pron} felt queasy and crampy for a few hours"),
        ("I had some mild stomach discomfort on the way home", "{pron} had some mild stomach discomfort"),
        ("my stomach was in knots the whole evening", "{pos} stomach was in knots the whole evening"),
        ("I felt nauseous and uncomfortable for a couple of hours", "{pron} felt nauseous for a couple of hours"),
        ("my mouth got a little itchy and my stomach felt off", "{pos} stomach felt off for the evening"),
        ("I felt off and crampy the whole drive home", "{pron} felt off and crampy the whole way home"),
    ),
    "moderate": (
        ("I broke out in hives across my neck and chest", "{pron} broke out in hives all over {pos} arms"),
        ("my lips swelled up and I had to take a Benadryl", "{pos} lips swelled up and {pron} needed a Benadryl"),
        ("I got itchy red welts on my arms and needed an antihistamine", "{pron} got itchy welts and had to take an antihistamine"),
        ("my face got puffy and blotchy and I took two Benadryl in the car", "{pos} face got puffy and blotchy"),
        ("my eyes were swollen half shut by the time we got home", "{pos} eyes swelled half shut"),
        ("I spent the night covered in an itchy rash, popping antihistamines", "{pron} spent the night itching, on antihistamines"),
        ("my skin erupted in raised itchy bumps within the hour", "{pos} skin erupted in raised itchy bumps within the hour"),
    ),
    "severe": (
        ("I went into anaphylaxis and had to use my EpiPen", "{pron} went into anaphylaxis and had to use {pos} EpiPen"),
        ("my throat started closing and I ended up in the ER", "{pos} throat started closing and {pron} ended up in the ER"),
        ("I spent the night in the hospital", "{pron} spent the night in the hospital"),
        ("I could barely breathe and we called an ambulance", "{pron} could barely breathe and an ambulance was called"),
        ("my throat started closing up and I could not get a full breath", "{pos} throat started closing up and {pron} could not breathe"),
        ("I used my EpiPen in the parking lot and went straight to the emergency room",
         "{pron} had to use an EpiPen and go to the emergency room"),
        ("my throat got tight and my chest felt like it was in a vise until the paramedics arrived",
         "{pos} throat got tight and the paramedics had to come"),
        ("my tongue swelled, my chest went tight and the paramedics gave me epinephrine",
         "{pos} tongue swelled and the paramedics had to step in with epinephrine"),
    ),
}

# Members of the dining party (a firsthand account per ADDM's terms) and people who told the reviewer.
PARTY: tuple[tuple[str, str, str], ...] = (
    ("my son", "he", "his"), ("my daughter", "she", "her"), ("my husband", "he", "his"),
    ("my wife", "she", "her"), ("my boyfriend", "he", "his"), ("my girlfriend", "she", "her"),
)
OTHERS: tuple[tuple[str, str, str], ...] = (
    ("a coworker", "she", "her"), ("a friend of mine", "he", "his"), ("my cousin", "she", "her"),
    ("my neighbor", "he", "his"), ("my sister's friend", "she", "her"), ("a guy from my gym", "he", "his"),
)

# The reviewer's allergy, consistent with the allergen in the dish.
ALLERGIES: dict[str, tuple[str, ...]] = {
    "peanuts": ("peanut allergy", "severe peanut allergy", "nut allergy", "peanut and tree nut allergy"),
    "cashews": ("cashew allergy", "tree nut allergy", "nut allergy"),
    "almonds": ("almond allergy", "tree nut allergy", "nut allergy"),
    "walnuts": ("walnut allergy", "tree nut allergy", "severe nut allergy"),
    "pecans": ("pecan allergy", "tree nut allergy", "nut allergy"),
    "pistachios": ("pistachio allergy", "tree nut allergy", "nut allergy"),
    "hazelnuts": ("hazelnut allergy", "tree nut allergy", "nut allergy"),
    "pine nuts": ("pine nut allergy", "tree nut allergy", "nut allergy"),
}
# What staff claim, consistent with the allergen.
FREE: dict[bool, tuple[str, ...]] = {
    True: ("peanut-free", "nut-free", "free of peanuts"),
    False: ("nut-free", "free of nuts", "completely nut free"),
}

# Dishes that carry an allergen, per cuisine: (dish, allergen). The allergen is always a keyword.
ALLERGEN_DISHES: dict[str, tuple[tuple[str, str], ...]] = {
    "Thai": (("the pad thai", "peanuts"), ("the satay", "peanuts"), ("the massaman curry", "peanuts"),
             ("the stir-fried chicken", "cashews"), ("the papaya salad", "peanuts")),
    "Chinese": (("the kung pao chicken", "peanuts"), ("the dan dan noodles", "peanuts"),
                ("the shrimp stir-fry", "cashews"), ("the honey prawns", "walnuts")),
    "Vietnamese": (("the vermicelli bowl", "peanuts"), ("the summer rolls", "peanuts"),
                   ("the dipping sauce", "peanuts"), ("the papaya salad", "peanuts")),
    "Italian": (("the pesto", "pine nuts"), ("the lamb chops", "pistachios"),
                ("the biscotti", "almonds"), ("the romesco", "almonds")),
    "Pizza": (("the pesto pie", "pine nuts"), ("the cannoli", "pistachios"), ("the house salad", "walnuts")),
    "Coffee & Tea": (("the banana bread", "walnuts"), ("the morning bun", "almonds"),
                     ("the latte", "hazelnuts"), ("the granola bowl", "pecans")),
    "Steakhouses": (("the wedge salad", "pecans"), ("the green beans", "almonds"),
                    ("the chocolate cake", "hazelnuts")),
    "Mexican": (("the mole", "peanuts"), ("the horchata", "almonds"), ("the salsa macha", "peanuts")),
    "Indian": (("the korma", "cashews"), ("the butter chicken", "cashews"), ("the kulfi", "pistachios"),
               ("the biryani", "almonds")),
    "Japanese": (("the spicy tuna roll", "peanuts"), ("the shrimp tempura roll", "walnuts"),
                 ("the sesame dressing", "peanuts")),
    "Korean": (("the japchae", "peanuts"), ("the sweet pancakes", "walnuts"), ("the fried chicken glaze", "peanuts")),
    "American (New)": (("the beet salad", "walnuts"), ("the romesco", "almonds"), ("the pork chop", "pecans")),
    "Breakfast & Brunch": (("the pancakes", "pecans"), ("the granola parfait", "almonds"),
                           ("the banana bread French toast", "walnuts")),
    "Sandwiches": (("the chicken salad", "walnuts"), ("the pesto panini", "pine nuts"),
                   ("the cookie", "peanuts")),
}

PLANTED: dict[str, tuple[str, ...]] = {
    # firsthand incident, no staff interaction described
    "incident_none": lines("""
        There must have been {nut} in {adish}, because {cue}.
        I have a {allergy} and forgot to mention it when ordering; {cue}.
        About an hour after we left, {cue}. Turns out {adish} {ais} made with {nut}.
        Heads up: there are {nut} in {adish} even though the menu does not say so, and {cue}.
        I did not realize {adish} had {nut} in it. Long story short, {cue}.
        My own fault for not asking, but there were {nut} in {adish} and {cue}.
        Something in {adish} set off my {allergy}: {cue}.
    """),
    # firsthand incident of a dining-party member (same labels as above)
    "incident_party": lines("""
        {Member} has a {allergy}, and after a few bites of {adish} {cue3}.
        {Member} is allergic to {nut}; we did not know {adish} had them, and {cue3}.
        We shared {adish} with {member}, who is allergic to {nut}, and {cue3} before dessert came.
    """),
    # firsthand incident after dismissive / careless staff
    "incident_negative": lines("""
        I told {staff} about my {allergy} and got a shrug and an eye roll. Sure enough, {cue}.
        The manager brushed off my question about {nut} like I was being difficult, and {cue}.
        I asked twice about my {allergy}; the server seemed annoyed and said the kitchen was too busy to check. Then {cue}.
        Nobody could be bothered to check {adish} for {nut}, so I took a chance, and {cue}.
    """),
    # staff claimed it was safe, the customer still reacted (assurance claim)
    "incident_betrayal": lines("""
        {staff} assured me {adish} {awas} {free}, but halfway through {cue}.
        They promised the kitchen would keep my order {free}. It wasn't: {cue}.
        I explained my {allergy} in detail and the server swore there were no {nut} in {adish}. Yet {cue}.
        The server checked with the chef and told me {adish} {awas} fine for my {allergy}. A few bites later, {cue}.
        The menu marks {adish} as {free} and {staff} confirmed it, and still {cue}.
    """),
    "positive": lines("""
        When I mentioned my {allergy}, {staff} checked every dish with the kitchen and steered me to a safe option.
        The chef came out to talk through my {allergy} and made {adish} without the {nut}.
        They keep an allergen binder, and {staff} went through it with me item by item.
        I have a {allergy} and they prepared my meal in a separate pan, no issues at all.
        {staff} asked about allergies before we even ordered, which I really appreciate.
        They were very accommodating of my {allergy} and left the {nut} out of {adish} without any fuss.
        Our server double-checked with the kitchen about {nut} and came back with a clear answer.
        As someone with a {allergy}, I felt at ease here because the staff took it seriously.
        {Member} has a {allergy}, and {staff} made sure the kitchen changed gloves and used a clean pan.
        I carry an EpiPen for my {allergy}, but I never felt I would need it here: {staff} walked me through every dish.
        No reaction at all, which is rare for me; they made {adish} without the {nut} and explained every sauce.
    """),
    "positive_assured": lines("""
        {staff} assured me {adish} {awas} {free} after checking with the chef, and I had no problems at all.
        They confirmed my dish was {free} and it was; great to find a place that gets allergies.
    """),
    "negative_dismissive": lines("""
        When I asked about {nut} in {adish}, the server rolled her eyes and said it was probably fine.
        I mentioned my {allergy} and {staff} just shrugged and walked away.
        The server seemed annoyed that I asked about allergens at all, so I just ordered a drink.
        I asked them to leave the {nut} off {adish} and it came out covered in them anyway. Careless.
        {staff} laughed when I asked about my {allergy} and said nobody is really that allergic.
        I asked whether the fryer is shared with {nut} and got a blank stare and a "just order something else."
    """),
    "negative_refused": lines("""
        They flat out refused to tell me whether there were {nut} in {adish}.
        The manager told us they would not make any changes for allergies, period.
        The cook said he could not guarantee anything and would not even look at the ingredient list for my {allergy}.
        When I asked for {adish} without {nut}, {staff} said no substitutions, not even for allergies.
    """),
    "secondhand": lines("""
        {Other} with a {allergy} told me that {cue3} after eating {adish} here.
        I heard from {other}, who is allergic to {nut}, that {cue3} after a meal here last year.
        {Other} says {cue3} after {adish} here; {pron} has a {allergy}, so take that into account.
    """),
    "secondhand_betrayal": lines("""
        {Other} with a {allergy} was assured {adish} {awas} {free}, but {cue3}.
        The staff told {other} that {adish} {awas} {free}; {pron} has a {allergy} and {cue3}.
    """),
    "hypothetical": lines("""
        If you have a nut allergy I would worry here; {nut} are in half the menu.
        I am allergic to {nut}, so I always ask, and tonight I just stuck with the {dish}.
        Anyone with a serious {allergy} should probably skip {adish}.
        Not a great pick for people with allergies; the menu gives no ingredient info.
        With my {allergy} I was a little nervous about the open kitchen.
        Parents of kids with food allergies: I did not see any allergen info on the menu.
        I would be cautious here with a {allergy}, since {adish} {ais} loaded with {nut}.
        If you have a {allergy}, one bite of {adish} could land you in the ER.
        I always carry my EpiPen, and I would not order {adish} here without asking first.
    """),
    "mention": lines("""
        The menu marks vegan and gluten-free options clearly.
        They have a separate gluten-free menu, which is great for my celiac friend.
        There is a gluten-free version of almost everything.
        I loved the crunch of the {nut} in {adish}.
        I loved the {nut} in {adish}.
        The menu lists the common allergens next to each dish.
        Honestly the {nut} on {adish} made the dish.
        Everything fried here is cooked in peanut oil, which gives it a great flavor.
    """),
    "near_miss": lines("""
        Even with my anaphylaxis history I had a lovely meal here.
        My {member} had a reaction of pure joy to {adish}.
    """),
    "false_friend": lines("""
        We waited about {mins} minutes for a table, which was fine.
        Food came out within {mins} minutes.
        Safe parking in the lot behind the building.
        Careful with the hot plate, it comes out sizzling.
        Fair warning: the portions are huge.
        My reaction when the bill came: totally worth it.
        They were very accommodating of our party of {num}.
        The neighborhood feels safe even late at night.
        Be careful, the chili oil is no joke.
        I have sensitive teeth and the drinks come with a mountain of ice.
        We had a swell time.
        It was a nutty Saturday night, but they kept up.
        Last minute reservation and they still fit us in.
        Safe to say we will be back.
        Fair warning, street parking is tough on weekends.
        Everything is made to order, so give it a few minutes.
        Careful: the spicy dishes really are spicy.
        The host was accommodating when we showed up early.
        My reaction to the first bite of the {dish}: wow.
        I am sensitive to spice, so I asked for mild and it was perfect.
    """),
}

MINUTES: tuple[str, ...] = ("10", "15", "20", "25", "30", "40", "45")

# Cuisine-specific false friends and mentions, added to the general pools above.
CUISINE_EXTRA: dict[str, dict[str, tuple[str, ...]]] = {
    "Thai": {"false_friend": ("The coconut soup was rich and tangy.", "Coconut ice cream cooled things down.",
                               "The coconut rice was a nice side.")},
    "Indian": {"false_friend": ("The coconut chutney was bright and fresh.",), "mention": ("Pistachio kulfi to finish.",)},
    "Vietnamese": {"false_friend": ("The coconut coffee is a must.",)},
    "Coffee & Tea": {
        "false_friend": ("The donut of the day was still warm.", "Grabbed a coconut macaroon for later.",
                         "Grabbed a donut from the bakery case on the way out."),
        "mention": ("The almond croissant is flaky and buttery.", "They have almond and oat milk at no charge.",
                    "The walnut brownie at the counter is worth the calories.",
                    "The hazelnut latte was just sweet enough."),
    },
    "Breakfast & Brunch": {
        "false_friend": ("Their donut holes are dangerous.",),
        "mention": ("The pecan waffles are the move.", "They do a decent gluten-free pancake."),
    },
    "Italian": {"mention": ("Pistachio gelato for dessert, perfect.", "They offer gluten-free pasta on request.")},
    "Pizza": {"mention": ("They offer a gluten-free crust for a couple bucks extra.",)},
    "Steakhouses": {"mention": ("Pecan pie for dessert, obviously.",)},
    "Sandwiches": {"mention": ("Gluten-free bread is available for a small upcharge.",
                               "The walnut brownie by the register is worth the calories.")},
    "Chinese": {"mention": ("The almond cookies by the register are a nice touch.",)},
    "Mexican": {"mention": ("The mole had a deep, nutty flavor.",)},
}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _group(plant_kind: str, interaction: str, staff: str, assurance: bool, party: bool) -> str:
    if plant_kind == "incident":
        if interaction == "none":
            return "incident_party" if party else "incident_none"
        return f"incident_{interaction}"
    if plant_kind == "interaction":
        if interaction == "positive":
            return "positive_assured" if assurance else "positive"
        return f"negative_{staff}"
    if plant_kind == "secondhand":
        return "secondhand_betrayal" if interaction == "betrayal" else "secondhand"
    return plant_kind


def render_plant(rng: random.Random, plant: Plant, category: str, fill: Mapping[str, str]) -> str:
    """One planted sentence (or two) carrying ``plant``'s labels, for a restaurant of ``category``."""
    adish, nut = rng.choice(ALLERGEN_DISHES[category])
    party = plant.kind == "incident" and plant.interaction == "none" and rng.random() < 0.25
    group = _group(plant.kind, plant.interaction, plant.staff, plant.assurance, party)
    pool = PLANTED[group] + CUISINE_EXTRA.get(category, {}).get(group, ())
    template = rng.choice(pool)
    member, other = rng.choice(PARTY), rng.choice(OTHERS)
    person = other if plant.kind == "secondhand" else member
    cue, cue3 = rng.choice(SEVERITY_CUES.get(plant.severity, (("", ""),)))
    slots = {
        "nut": nut, "adish": adish, "allergy": rng.choice(ALLERGIES[nut]),
        "awas": "were" if is_plural(adish) else "was", "ais": "are" if is_plural(adish) else "is",
        "free": rng.choice(FREE[nut == "peanuts"]), "staff": fill["staff"], "dish": fill["dish"], "num": fill["num"],
        "mins": rng.choice(MINUTES), "member": member[0], "Member": _cap(member[0]), "other": other[0],
        "Other": _cap(other[0]), "pron": person[1], "pos": person[2],
    }
    slots["cue"] = cue
    slots["cue3"] = cue3.format(pron=person[1], pos=person[2])
    return template.format(**slots)
