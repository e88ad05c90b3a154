"""heuristic-v2's context rules (revision r2): a severity cue is a reaction only in allergy context.

A symptom, a medicine or a hospital is an allergy incident only when the text around it is about an
allergy: :func:`context_reason` drops a cue

1. without allergy context (an allergen, an allergic reaction, an allergy word: ``ALLERGY_CONTEXT``)
   in its own sentence or a neighbouring one (hives, an allergic reaction, are context too);
2. next to an ordinary illness or a non-food allergy ("I had a cold, so I took a Claritin",
   "seasonal allergies"), for what those explain (feeling sick, a medicine, a doctor's visit; not
   hives, swelling or a rash), unless its own sentence names a food allergy;
3. for a tingling, numb or burning mouth, a tight throat or no breath, next to the dish's spice or
   heat ("the Sichuan peppercorns numbed my lips", "so spicy I could barely breathe"; for breath
   also a full stomach or a laugh), unless its own sentence names an allergy;
   and an idiom that only looks like a symptom ("sick of", "a rash decision", "a fight broke out");
4. for a hospital, an ER or an urgent care, when it is a place: where the restaurant is or someone
   works or visits ("across the street from the hospital"), a description ("hospital lighting",
   "like an ER"), or part of a proper name ("Pennsylvania Hospital") nobody was taken to.

The rules are general (windows and explanations), not a list of reviews: see
``bench/offline_judge_quality.py`` for what they do on real reviews.
"""

from __future__ import annotations

from core.judgments.judges import heuristic_rules as R


def window_text(text: str, spans: list[tuple[int, int]], i: int) -> str:
    """Sentence ``i`` with the previous and the next one (as far as they exist), verbatim.

    >>> t = "One. Two nuts. Three. Four."
    >>> from core.judgments.judges.heuristic import sentence_spans
    >>> window_text(t, sentence_spans(t), 2), window_text(t, sentence_spans(t), 0)
    ('Two nuts. Three. Four.', 'One. Two nuts.')
    """
    first, last = spans[max(0, i - 1)], spans[min(len(spans) - 1, i + 1)]
    return text[first[0] : last[1]]


def is_place(text: str, sentence_start: int, start: int, end: int) -> bool:
    """The cue at ``text[start:end]`` names a place, a description or a proper name, not a visit.

    >>> is_place("We parked across the street from the hospital.", 0, 37, 45)
    True
    >>> is_place("I ended up in the hospital.", 0, 18, 26)
    False
    >>> is_place("Dinner after a shift at Pennsylvania Hospital was great.", 0, 37, 45)
    True
    """
    before = text[sentence_start:start]
    if R.PLACE_BEFORE.search(before) or R.LIKE_A.search(before) or R.PLACE_AFTER.match(text, end):
        return True
    return _proper_name(text, sentence_start, start, end)


def _proper_name(text: str, sentence_start: int, start: int, end: int) -> bool:
    """A capitalised cue inside a run of capitalised words ("Jefferson Hospital", "Hospital of the
    University"), not at the start of its sentence, in a sentence that is not written in capitals,
    and nobody went there before it in the sentence ("we ended up at Jefferson Hospital" is a visit)."""
    word, before = text[start:end], text[sentence_start:start].split()
    if R.TO_HOSPITAL.search(text, sentence_start, start):
        return False
    sentence_end = text.find(".", end)
    sentence = text[sentence_start : sentence_end if sentence_end >= 0 else len(text)]
    if not before or not word[:1].isupper() or word.isupper() or sentence.isupper():
        return False
    after = text[end:].split()
    previous_capital = before[-1][:1].isupper() and before[-1] != "I"
    next_capital = bool(after) and after[0][:1].isupper() and after[0] != "I"
    of_name = len(after) >= 2 and after[0] == "of" and after[1][:1].isupper()
    return previous_capital or next_capital or of_name


def context_reason(text: str, spans: list[tuple[int, int]], i: int, start: int, end: int, rule: str) -> str | None:
    """Why the severity cue ``rule`` at ``text[start:end]`` (in sentence ``i``) is not a reaction, or None.

    >>> from core.judgments.judges.heuristic import sentence_spans
    >>> def why(t, cue, rule):
    ...     s = t.index(cue)
    ...     spans = sentence_spans(t)
    ...     i = max(n for n, (a, _) in enumerate(spans) if a <= s)
    ...     return context_reason(t, spans, i, s, s + len(cue), rule)
    >>> why("I had a cold, so I took a Benadryl before dinner.", "Benadryl", "antihistamine")
    'no allergy context in its sentence or a neighbouring one'
    >>> why("I had a cold and took allergy medicine.", "allergy medicine", "allergy_medicine")
    'an ordinary illness or a non-food allergy explains it'
    >>> why("The mala beef with peanuts was so spicy my lips went numb.", "lips went numb", "itchy_mouth")
    "the dish's spice or heat, not a reaction"
    >>> why("I ate the pecan pie. My lips went numb.", "lips went numb", "itchy_mouth") is None
    True
    """
    sentence = text[spans[i][0] : spans[i][1]]
    window = window_text(text, spans, i)
    if not (R.ALLERGY_CONTEXT.search(window) or R.ALLERGIC_SIGN.search(window)):
        return "no allergy context in its sentence or a neighbouring one"
    if rule in R.NOT_FOOD_EXPLAINS and R.NOT_FOOD_CAUSE.search(window) and not R.FOOD_ALLERGY.search(sentence):
        return "an ordinary illness or a non-food allergy explains it"
    if R.IDIOM.match(text, end):
        return "an idiom, not a symptom"
    other = R.SPICE_OR_HEAT.search(window) or (rule == "could_not_breathe" and R.BREATH_OTHER.search(sentence))
    if rule in R.MOUTH_CUES and other and not R.ALLERGY_WORD.search(sentence):
        return "the dish's spice or heat, not a reaction"
    if rule in R.PLACE_CUES and is_place(text, spans[i][0], start, end):
        return "a place, not a visit for a reaction"
    return None
