"""The cue lexicons of ``heuristic-v1`` (G1a), as data: rule name, what it says, regex.

Patterns are matched case-insensitively with word boundaries, so "donut", "minute", "butternut"
or "coconut" never count as nuts and "safe parking" never counts as an assurance. Changing a
pattern changes the judge's output: bump :data:`RULES_VERSION` (it is the records' prompt version).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

RULES_VERSION = "heuristic-v1"
_I = re.IGNORECASE


class RuleSet:
    """Compiled rules with a trigger prefilter.

    A rule's regex only runs when one of its trigger words (:data:`TRIGGERS`, lower-case word
    starts) occurs in the text. :func:`find_triggers` finds every trigger of every rule in one
    pass; a found trigger also wakes the rules whose triggers it contains ("careless" wakes
    "care"). Patterns are lower case and run on the lower-cased text (faster than IGNORECASE);
    the IGNORECASE twin is for the rare text whose length changes when lower-cased.
    """

    def __init__(self, rules: Sequence[tuple[str, str]]) -> None:
        for name, pattern in rules:
            if re.sub(r"\\.", "", pattern) != re.sub(r"\\.", "", pattern).lower():
                raise ValueError(f"rule {name}: patterns run on lower-cased text and must be lower case")
        self.rules = tuple((name, re.compile(pattern), re.compile(pattern, _I)) for name, pattern in rules)
        self._wakes = {
            found: frozenset(i for i, (name, _) in enumerate(rules) if any(t in found for t in TRIGGERS[name]))
            for found in ALL_TRIGGERS
        }

    def active(self, triggers: set[str]) -> list[tuple[str, re.Pattern[str], re.Pattern[str]]]:
        """``(name, lower-case pattern, IGNORECASE pattern)`` of the rules the found ``triggers`` wake."""
        woken: set[int] = set()
        for found in triggers:
            woken |= self._wakes[found]
        return [self.rules[i] for i in sorted(woken)]


def find_triggers(low: str) -> set[str]:
    """Every trigger word of :data:`TRIGGERS` that starts a word in the lower-cased text ``low``."""
    return set(_TRIGGER_RE.findall(low))


_BODY = r"lips?|face|tongue|eyes?|eyelids?|mouth|cheeks?|neck|hands?"
_DEGREE = r"(?:a (?:little|bit) |slightly |kind of |really |very |so |super )?"

# (rule, level, pattern, needs allergy context somewhere in the review)
SEVERITY_RULES: tuple[tuple[str, str, str, bool], ...] = (
    ("anaphylaxis", "severe", r"\banaphyla\w*", False),
    ("epipen", "severe", r"\bepi-?\s?pens?\b", False),
    ("epinephrine", "severe", r"\bepinephrine\b", False),
    ("emergency_room", "severe", r"\bemergency (?:room|department)\b", True),
    ("hospital", "severe", r"\bhospital(?:i[sz]ed)?\b", True),
    ("ambulance", "severe", r"\bambulance\b|\bparamedics?\b|\bcalled 911\b", True),
    ("throat_closing", "severe", r"\bthroat (?:was |started |began |kept )?(?:clos\w*|swell\w*|tight\w*|swollen)", False),
    ("could_not_breathe", "severe",
     r"\b(?:couldn'?t|could not|could barely|unable to|hard to|struggl\w* to) (?:breathe?|get (?:a )?(?:full |deep )?breath)\b|"
     r"\b(?:trouble|difficulty) breathing\b|\bstopped breathing\b", True),
    ("severe_reaction", "severe", r"\b(?:severe|serious|life[- ]threatening) (?:allergic )?(?:reaction|attack)\b", False),
    ("hives", "moderate", r"\bhives\b|\bwelts\b|\b(?:skin|face|arms?|neck|chest) (?:\w+ )?erupted\b|"
     r"\b(?:itchy|raised|red) (?:\w+ )?bumps\b", False),
    ("swelling", "moderate",
     rf"\b(?:{_BODY}) (?:was |were |got |started |began |went )?{_DEGREE}(?:swell\w*|swollen|puff\w*)|"
     rf"\b(?:swollen|swelling|swelled|puffy) (?:up )?(?:{_BODY})", False),
    ("swelled_up", "moderate", r"\b(?:swelled|swelling) up\b|\bstarted swelling\b", True),
    ("antihistamine", "moderate", r"\bbenadryl\b|\bantihistamines?\b|\bzyrtec\b|\bclaritin\b", False),
    ("rash_broke_out", "moderate", r"\bbroke out\b|\brash\b|\bblotch\w*", True),
    ("urgent_care", "moderate", r"\burgent care\b", True),
    ("bad_reaction", "moderate", r"\b(?:bad|major|terrible|awful|horrible|scary) (?:allergic )?(?:reaction|response)\b", False),
    ("stomach", "mild",
     rf"\bstomach ?(?:ache|pain|cramps?|upset|issues?|hurt\w*)\b|\bupset stomach\b|\btummy ?ache\b|\bcramp(?:s|y|ing)\b|"
     rf"\bstomach (?:was |felt |got |went )?{_DEGREE}(?:upset|off|queasy|in knots|churn\w*|sick)\b", True),
    ("felt_sick", "mild", rf"\b(?:felt|feeling|got|was|became) {_DEGREE}(?:sick|ill|queasy|nauseous|unwell)\b", True),
    ("nausea", "mild", r"\bnause\w*|\bvomit\w*|\bthrew up\b|\bthrowing up\b|\bdiarrh\w*", True),
    ("discomfort", "mild", r"\bdiscomfort\b", True),
    ("itchy_mouth", "mild",
     r"\b(?:itchy|itching|tingl\w*|scratchy|numb) (?:mouth|throat|lips?|tongue)\b|"
     rf"\b(?:mouth|throat|lips?|tongue) (?:was |were |got |started |felt |went )?{_DEGREE}(?:itch\w*|tingl\w*|scratchy|numb)", False),
    ("itchy_skin", "mild",
     r"\b(?:itchy|itching) (?:skin|fingers|hands|all over)\b|\bfingers? (?:started )?(?:becoming )?(?:really )?itchy", True),
    ("mild_reaction", "mild", r"\b(?:mild|minor|slight|small|little) (?:allergic )?(?:reaction|response)\b", False),
    ("had_reaction", "mild",
     r"\b(?:had|have|having|got|get|suffered|experienced|went into|caused|triggered) (?:a |an |my )?(?:allergic )?"
     r"(?:reaction|response)\b|\breacted\b", False),
)
# heuristic-v2's extra cues: a tingling mouth however it is said, allergy medicine by name.
SEVERITY_RULES_V2: tuple[tuple[str, str, str, bool], ...] = (
    ("tingling_mouth", "mild",
     r"\b(?:mouth|throat|lips?|tongue) (?:began|started) to (?:itch|tingle|burn|swell)\b", False),
    ("allergy_medicine", "moderate", r"\ballergy (?:medicine|medication|meds|pills?)\b", False),
)
# heuristic-v2's rules revision (recorded in each judgment's prompt_version and raw). r1: the
# precision rules of b69ff17 (context anywhere in the review, for the generic cues only). r2: every
# severity cue needs allergy context in its own or a neighbouring sentence, and a symptom an ordinary
# illness, the dish's spice or heat, or a place explains is not a reaction (see heuristic_context).
V2_REVISION = "r2"
# Cues that only name a reaction; heuristic-v2 wants a symptom or a treatment beside them.
GENERIC_REACTION = frozenset({"had_reaction", "mild_reaction", "bad_reaction", "severe_reaction"})
# A condition, not an event: "anaphylaxis case", "anaphylactic allergy" (``.match`` at the cue's start).
CONDITION_NOT_EVENT = re.compile(
    r"(?:anaphyla\w*|epi-?\s?pens?)\s+(?:case|allerg\w*|condition|history|risk|patient|sufferer|kid|child)\b", _I,
)
# …unless the clause says it happened ("went into", "had", "needed", "used").
EVENT_VERB = re.compile(
    r"\b(?:went into|go into|going into|had|having|suffered|experienced|caused|triggered|needed|used|use|gave|"
    r"administer\w*|jab\w*|inject\w*)\b", _I,
)
ER = re.compile(r"\b(?:ER|E\.R\.)(?=\W|$)")  # case-sensitive: "er" is in every other word

# An allergy, an allergen, or a diet: any of these in a review makes a generic cue (hospital,
# stomach ache) count, and in a sentence makes a staff cue count.
ALLERGY_CONTEXT = re.compile(
    r"\ballerg\w*|\banaphyla\w*|\bepi-?\s?pen|\bepinephrine\b|\bceliac|\bcoeliac|\bintoleran\w*|"
    r"\bsensitivit\w*|\bdietary (?:restriction|need|requirement)s?\b|\bcross[- ]?contam\w*|"
    r"\b(?:nut|peanut|gluten|dairy|allergen)[- ]free\b|\bfree of (?:nuts|peanuts|gluten)\b|\bpeanuts?\b|"
    r"\btree ?nuts?\b|\bnuts?\b|\bpine nuts\b|\bcashews?\b|\balmonds?\b|\bwalnuts?\b|\bpecans?\b|\bhazelnuts?\b|"
    r"\bpistachios?\b|\bmacadamias?\b|\bshellfish\b|\bsesame\b|\bgluten\b",
    _I,
)
# heuristic-v2 r2: what explains a symptom or a medicine other than a food reaction, next to the cue.
# An ordinary illness ("I had a cold", "flu", "DayQuil") or an allergy to pollen, dust or pets.
NOT_FOOD_CAUSE = re.compile(
    r"\b(?:caught|catching|had|have|having|got|getting|fighting|nursing|recovering from|sick with|down with|"
    r"coming down with|came down with|come down with|with) (?:a |an |my |the |this )?(?:bad |nasty |terrible |little |slight |head |chest |summer )?"
    r"(?:cold|flu|fever|virus|sinus infection|covid|bug)(?=\s*(?:[.,;:!?)]|$)|\s+(?:and|so|but|that|which|when|last|"
    r"this|for|all|too|at|or|i|we)\b)|"
    r"\b(?:cold|flu) (?:medicine|meds|medication|symptoms|season|tablets|pills)\b|\bthe flu\b|\bfever(?:ish)?\b|"
    r"\bsinus\w*|\bcongest\w*|\bcovid\b|\b(?:day|ny)quil\b|\bsudafed\b|\bmucinex\b|\bunder the weather\b|"
    r"\bhang ?over\b|\bhung ?over\b|\bsore throat\b|\b(?:stuffy|runny) nose\b|"
    r"\bseasonal allerg\w*|\bpollen\b|\bhay ?fever\b|\ballergy season\b|\b(?:cat|dog|pet|dust|mold|grass|tree pollen) allerg\w*",
    _I,
)
# What an ordinary illness or a non-food allergy can explain: feeling sick, a stomach, a scratchy
# throat, no breath, a medicine, a visit to a doctor; not hives, swelling, a rash or anaphylaxis.
NOT_FOOD_EXPLAINS = frozenset({"felt_sick", "nausea", "stomach", "discomfort", "antihistamine", "allergy_medicine",
                               "could_not_breathe", "itchy_mouth", "urgent_care", "hospital", "emergency_room"})
# A food allergy in the cue's own sentence outweighs NOT_FOOD_CAUSE (an ingredient alone does not:
# "I had a cold and took a Claritin; the peanut sauce was great" is still a cold).
FOOD_ALLERGY = re.compile(
    r"\ballerg(?:ic|y|ies) to (?!pollen|dust|cats?|dogs?|pets?|grass|mold)|\b(?:nut|peanut|shellfish|sesame|gluten|"
    r"dairy|egg|soy|fish|food|cashew|almond|walnut|pecan|hazelnut|pistachio)[- ]allerg\w*|\banaphyla\w*|\bepi-?\s?pen",
    _I,
)
# The dish's spice or heat: a tingling, numb or burning mouth next to it is the food doing its job.
SPICE_OR_HEAT = re.compile(
    r"\bspic(?:y|e|es|ier|iest|iness)\b|\bsichuan\b|\bszechuan\b|\bpeppercorns?\b|\bma ?la\b|\bnumbing\b|"
    r"\bchil(?:i|e|li)(?:es|s)?\b|\bjalape\w*|\bhabaneros?\b|\bwasabi\b|\bhorseradish\b|\bhot sauce\b|\bsriracha\b|"
    r"\bcapsaicin\b|\bheat\b|\bhot\b|\bscalding\b|\bpepper(?:s|y)?\b|\bghost pepper\b",
    _I,
)
# An allergy word (not just an ingredient) in the cue's sentence: the tingle is a reaction after all.
ALLERGY_WORD = re.compile(r"\ballerg\w*|\banaphyla\w*|\bepi-?\s?pen|\bintoleran\w*", _I)
# Cues the dish's spice or heat (or a full stomach, a laugh) explain: a tingling, numb or burning
# mouth, a tight throat, no breath ("so spicy I could barely breathe").
MOUTH_CUES = frozenset({"itchy_mouth", "tingling_mouth", "throat_closing", "could_not_breathe"})
BREATH_OTHER = re.compile(r"\b(?:so full|stuffed|laugh\w*|crowded|packed|smok\w*|stuffy)\b", _I)
# Idioms that look like a symptom: "sick of", "sick and tired", "ill-prepared", "a rash decision",
# "a fight broke out", "broke out the champagne" (a rash breaks out *in*, *on*, *all over*, *with*).
IDIOM = re.compile(
    r"(?<=sick)\s+(?:of|and tired)\b|(?<=ill)-\w|(?<=rash)\s+(?:decision|choice|move|judgm?ent|statement|remark|"
    r"promise|purchase|assumption)|(?<=broke out)(?!\s+(?:in|on|all over|with|everywhere|into)\b|\s*(?:[.,;:!)]|$))",
    _I,
)
# Words that name an allergic reaction by themselves and so are allergy context for heuristic-v2's
# cues, their own included (anaphylaxis, EpiPen, epinephrine, "allergic" are in ALLERGY_CONTEXT).
ALLERGIC_SIGN = re.compile(r"\bhives\b", _I)
# A hospital, an ER or an urgent care as a place: where the restaurant is, where someone works or
# visits, what a room looks like ("hospital lighting"), or a proper name ("Pennsylvania Hospital").
PLACE_CUES = frozenset({"hospital", "emergency_room", "urgent_care"})
PLACE_BEFORE = re.compile(
    r"\b(?:near|nearby|next to|across (?:the street |the road )?from|close to|(?:right|just) by|around the corner from|"
    r"down the (?:street|road|block) from|blocks? (?:away )?from|minutes? (?:away )?from|walking distance (?:to|from|of)|"
    r"opposite|beside|behind|outside|within walking|work(?:s|ed|ing)? (?:at|in|for)|visit(?:s|ed|ing)?|shift at|"
    r"employees?|nurses?|doctors?|residents?|patients? at|parking (?:at|for)|located (?:in|at|by)|inside)\b"
    r"(?:\W+\w+){0,4}\W*$",
    _I,
)
PLACE_AFTER = re.compile(
    r"(?:[- ](?:food|cafeteria|grade|clean|corners|vibe|lighting|waiting room|parking|campus|district|area|"
    r"complex|staff|workers?|employees?|crowd|across the street|nearby|next door|down the street))\b",
    _I,
)
# How someone gets to a hospital for a reaction: then a named hospital is where it ended, not a landmark.
TO_HOSPITAL = re.compile(
    r"\b(?:ended up|end up|rushed|rush|taken|took (?:me|him|her|them|us)|went|go|going|admitted|spent|drove|drive|"
    r"brought|bring|trip|ride|sent|landed|land|stay\w*)\b", _I,
)
LIKE_A = re.compile(r"\blike (?:a |an |the |being in (?:a |an |the )?)?$", _I)

# Every ALLERGY_CONTEXT match contains one of these (a prefilter: most reviews have none).
CONTEXT_TRIGGERS = ("allerg", "anaphyla", "epi", "celiac", "coeliac", "intoleran", "sensitiv", "dietary", "contam",
                    "free", "nut", "cashew", "almond", "pecan", "pistachio", "macadamia", "shellfish", "sesame", "gluten")
# A condition rather than an ingredient (a diet, an allergy, a restriction).
ALLERGY_CONDITION = re.compile(
    r"\ballerg\w*|\banaphyla\w*|\bepi-?\s?pen|\bceliac|\bcoeliac|\bintoleran\w*|\bsensitivit\w*|"
    r"\bdietary\b|\brestrictions?\b|\bcross[- ]?contam\w*|\b(?:nut|peanut|gluten|allergen)[- ]free\b|\bgluten\b",
    _I,
)
# The reviewer telling the staff about an allergy: a staff cue in the next or previous sentence
# is the staff's answer ("I told the waiter about my nut allergy. He rolled his eyes.").
DISCLOSURE = re.compile(
    r"\b(?:i|we) (?:\w+ )?(?:told|asked|mentioned|explained|informed|warned|said|let (?:them|him|her|the \w+) know)\b",
    _I,
)
# A negator at most four words before a cue, in the same clause ("didn't need the hospital").
NEGATED = re.compile(
    r"\b(?:no|not|never|didn'?t|did not|don'?t|doesn'?t|without|zero|wasn'?t|weren'?t|nor)\b"
    r"(?:\W+(?!(?:and|but|so|or|then)\b)\w+){0,4}\W*$",
    _I,
)
# Conditionals and advice anywhere before a cue in its sentence make it hypothetical.
STRONG_HYPOTHETICAL = re.compile(
    r"\bif (?:you|your|u|anyone|someone|one)\b|\b(?:anyone|people|those|folks|kids|children) (?:with|who)\b|"
    r"(?<!as )\bsomeone with\b|\bfor (?:those|anyone)\b|\bin case\b|\bwhat if\b|\bimagine\b|\bcan be dangerous\b|"
    r"\bbe careful\b|\bbeware\b",
    _I,
)
# Modal or worry words in a cue's own clause make it hypothetical ("you could end up in the ER").
WEAK_HYPOTHETICAL = re.compile(
    r"\b(?:would|could(?! (?:feel|tell|see|barely|hardly|not|only))|might|worr(?:y|ied|ies)|afraid|scared|fear|"
    r"be careful|beware|risk)\b",
    _I,
)
# A voiced concern or precaution without an event (hypothetical account), next to an allergy word.
CONCERN = re.compile(
    r"\b(?:nervous|worr(?:y|ied|ies)|afraid|scared|fear\w*|cautious|wary|hesitant|anxious|"
    r"skip|avoid|beware|careful|risky)\b|\balways (?:ask|check|mention|tell|carry)\b|\b(?:stuck|stick|stay(?:ed)?) "
    r"(?:with|to)\b|\bplay(?:ed)? it safe\b|\bnot (?:a )?(?:great|good|safe) (?:pick|choice|option|place|spot)\b|"
    r"\bno (?:allergen|ingredient) (?:info|information|list)\b",
    _I,
)
ROUTINE = re.compile(r"\b(?:carry|carries|carrying|bring|brought|pack|packed|keep|always have|had my|have my)\b[^.!?]*$", _I)
FOOD_POISONING = re.compile(r"\bfood poisoning\b|\bbad (?:oyster|fish|chicken)\b|\bundercooked\b|\bspoiled\b", _I)

# People: the dining party (firsthand per the task's definition), others and hearsay (secondhand).
PARTY = re.compile(
    r"\bmy (?:\w+ )?(?:wife|husband|son|daughter|kids?|child|children|mom|mother|dad|father|boyfriend|girlfriend|"
    r"partner|fianc[eé]e?|baby|toddler|spouse|family|friend|date|parents?|sister|brother|roommate)\b|"
    r"\bour (?:son|daughter|kids?|child|children|baby|toddler|friend|guest)\b",
    _I,
)
OTHERS = re.compile(
    r"\b(?:a|one|another|some) (?:\w+ )?(?:friend|coworker|co-worker|colleague|neighbou?r|guy|girl|woman|man|lady|"
    r"customer|diner|patron|person|acquaintance)s?\b|\b(?:friend|coworker|colleague)s? of (?:mine|ours)\b|"
    r"\bmy (?:coworker|co-worker|colleague|neighbou?r|cousin|aunt|uncle|niece|nephew|classmate|acquaintance|boss)s?\b|"
    r"'s (?:friend|coworker|colleague|neighbou?r)\b|\bsomeone\b|\bsomebody\b",
    _I,
)
HEARSAY = re.compile(
    r"\b(?:i|we) (?:have |had |'ve )?(?:heard|was told|were told|read)\b|\btold (?:me|us)\b|\bsays\b|\bsaid that\b|"
    r"\baccording to\b|\bapparently\b|\brumou?r\b",
    _I,
)
REVIEWER = re.compile(
    rf"\b(?:i|i'm|i've|i'd|we|myself)\b|\bmy (?:{_BODY}|throat|skin|stomach|body|fingers?|chest|airways?)\b", _I
)
PRONOUN = re.compile(r"\b(?:she|he|they|her|his|their)\b", _I)

_SAFE_WORD = (
    r"safe|fine|okay|ok|(?:nut|peanut|gluten|allergen|dairy)[- ]free|free of \w+|"
    r"no [\w\s-]{0,20}?(?:nuts?|peanuts?|almonds?|cashews?|pistachios?|pecans?|walnuts?|gluten|allergens?|dairy)|"
    r"(?:did|does|do)(?: not|n'?t) (?:contain|have)|nothing had"
)
# (rule, kind, pattern); kind: assurance, negative, positive.
STAFF_RULES: tuple[tuple[str, str, str], ...] = (
    ("assured_safe", "assurance",
     rf"\b(?:assured|promised|swore|guaranteed|insisted|confirmed|claimed|told|said|says)\b[^.!?]{{0,60}}?\b(?:{_SAFE_WORD})\b|"
     r"\b(?:(?:nut|peanut|gluten|allergen)[- ]free|free of \w+)\b[^.!?]{0,40}\b(?:confirmed|assured|promised|guaranteed|"
     r"vouched)\b"),
    ("dismissive", "negative",
     r"\bdismissive\w*|\brolled (?:her|his|their) eyes\b|\beye[- ]?roll\w*|\bshrug\w*|\bbrush(?:ed)? (?:me |us |it )?off\b|"
     r"\bbrushed (?:off )?my\b|\blaughed\b|\bmade fun\b|\bblank stare\b|\bjust order something else\b"),
    ("refused", "negative",
     r"\brefus\w*|\b(?:would|will|could)(?: not|n'?t) (?:even )?(?:make|do|accommodate|change|substitute|check|look|"
     r"tell|answer)\b|\bno substitutions?\b|\bno changes\b"),
    ("annoyed", "negative", r"\bannoy\w*|\birritated\b|\bbothered\b|\brude\w*|\battitude\b"),
    ("careless", "negative",
     r"\bcareless\w*|\b(?:didn'?t|did not|don'?t|couldn'?t) (?:seem to )?care\b|\bignor\w*|\bclueless\b|"
     r"\bno idea\b|\b(?:didn'?t|did not) (?:know|check|listen|bother)\b|\bstill (?:came|come|arrived) (?:out )?with\b|"
     r"\b(?:came|arrived) (?:out )?(?:covered|topped|loaded|sprinkled|with)\b[^.!?]{0,40}\banyway\b|"
     r"\bnot (?:take|taking|took) (?:it|this|my allergy|allergies) seriously\b"),
    ("asked_allergies", "positive",
     r"\bask(?:ed|s)? (?:us |me |everyone )?(?:about|if|whether) (?:we |i |anyone )?(?:had |have )?(?:any )?(?:food )?"
     r"(?:allerg\w*|dietary)"),
    ("accommodated", "positive", r"\baccommodat\w*"),
    ("careful", "positive", r"\bcareful\b|\bcautious\b|\bmindful\b|\bthorough\b|\bmeticulous\b"),
    ("separate_prep", "positive",
     r"\bseparate(?:ly)? (?:fryer|pan|prep\w*|plate|area|kitchen|surface|utensils?|grill|board)\b|"
     r"\bchanged (?:their )?gloves\b|\bclean (?:pan|grill|surface|board|gloves)\b|\bclean(?:ed)? the (?:grill|surface|pan)\b"),
    ("checked_kitchen", "positive",
     r"\b(?:double|triple)[- ]check\w*|\bcheck(?:ed|ing)?\b[^.!?]{0,25}?\bwith (?:the )?(?:kitchen|chef|cook|manager)\b|"
     r"\b(?:chef|manager|cook) came (?:out|over)\b|\bmade sure\b|\b(?:took|takes|take) (?:it|my allergy|my allergies|"
     r"allergies) (?:very )?seriously\b|\b(?:went|walked) (?:me |us )?through (?:it|the menu|every|each)\b|\bknowledgeable\b|"
     r"\bexplained (?:every|each|all|the) (?:dish|sauce|ingredient|item)|"
     r"\b(?:made|prepared|cooked|served|brought) (?:me |us )?[^.!?]{0,40}?\bwithout (?:the |any )?"
     r"(?:nuts?|peanuts?|almonds?|cashews?|walnuts?|pecans?|pistachios?|hazelnuts?|pine nuts|gluten|sesame)\b"),
    ("allergen_info", "positive", r"\ballerg(?:y|en) (?:menu|chart|binder|book|matrix|guide)\b"),
    ("felt_safe", "positive",
     r"\b(?:felt|feel|feeling) (?:very |so |completely |totally )?(?:safe|at ease|comfortable|confident)\b"),
)
NO_FLIP = frozenset({"allergen_info"})  # a negated object ("no allergen menu") is not negative conduct
# "we did not know", "I didn't check": the reviewer's own doing, not the staff's.
SELF_SUBJECT = re.compile(r"\b(?:i|we|you)\s*$", _I)
# "I was careful", "be careful": the reviewer's own care, not the staff's (only for the careful rule).
SELF_CARE = re.compile(r"\b(?:i|we) (?:was|were|am|are|'m|'re) (?:very |extra |always |so )?$|\bbe (?:very |extra )?$", _I)

# Lower-case word starts one of which must occur for a rule's regex to be run (a cheap prefilter:
# every match of the rule contains one of them at the start of a word).
TRIGGERS: dict[str, tuple[str, ...]] = {
    "anaphylaxis": ("anaphyla",), "epipen": ("epi",), "epinephrine": ("epinephrine",),
    "emergency_room": ("emergency",), "hospital": ("hospital",), "ambulance": ("ambulance", "paramedic", "911"),
    "throat_closing": ("throat",), "could_not_breathe": ("breath",), "severe_reaction": ("reaction", "attack"),
    "hives": ("hives", "welts", "erupted", "bumps"), "swelling": ("swell", "swoll", "puff"), "swelled_up": ("swell",),
    "antihistamine": ("benadryl", "antihistamine", "zyrtec", "claritin"), "rash_broke_out": ("broke out", "rash", "blotch"),
    "urgent_care": ("urgent care",), "bad_reaction": ("reaction", "response"),
    "stomach": ("stomach", "tummy", "cramp"), "felt_sick": ("sick", "ill", "queasy", "nauseous", "unwell"),
    "nausea": ("nause", "vomit", "threw up", "throwing up", "diarrh"), "discomfort": ("discomfort",),
    "itchy_mouth": ("itch", "tingl", "scratchy", "numb"), "itchy_skin": ("itch",),
    "mild_reaction": ("reaction", "response"), "had_reaction": ("reaction", "response", "reacted"),
    "assured_safe": ("assured", "promised", "swore", "guaranteed", "insisted", "confirmed", "claimed", "told", "said",
                     "says", "free"),
    "dismissive": ("dismissive", "rolled", "eye", "shrug", "brush", "laughed", "made fun", "blank", "just order"),
    "refused": ("refus", "would", "will", "could", "no substitution", "no change"),
    "annoyed": ("annoy", "irritated", "bothered", "rude", "attitude"),
    "careless": ("careless", "care", "ignor", "clueless", "no idea", "know", "check", "listen", "bother", "still",
                 "anyway", "serious"),
    "asked_allergies": ("ask",), "accommodated": ("accommodat",),
    "careful": ("careful", "cautious", "mindful", "thorough", "meticulous"),
    "separate_prep": ("separate", "glove", "clean"),
    "checked_kitchen": ("check", "came out", "came over", "made sure", "serious", "went through", "walked",
                        "knowledgeable", "explained", "without"),
    "allergen_info": ("allergy", "allergen"), "felt_safe": ("felt", "feel"),
    "tingling_mouth": ("mouth", "throat", "lip", "tongue"), "allergy_medicine": ("allergy",),
}
ALL_TRIGGERS = tuple(sorted({t for words in TRIGGERS.values() for t in words}, key=lambda t: (-len(t), t)))
_TRIGGER_RE = re.compile(r"\b(?:" + "|".join(re.escape(t) for t in ALL_TRIGGERS) + ")")
