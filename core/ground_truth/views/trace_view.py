"""The Trace page's rendering model: pure data and escaped HTML built from a ``TraceNode`` tree.

Text that comes from data (review text, excerpts, names, categories, dates) is only ever put in
HTML through :func:`html.escape`; :func:`highlight_segments` gives the same highlight as plain
text segments for renderers that do not take HTML. Markdown-bound text goes through
:func:`md_escape`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl

from core.base.highlight import marked_html
from core.datasets.review_text import md_escape  # noqa: F401 (re-exported: core.ground_truth.views.md_escape)
from core.ground_truth import KChange, TraceNode

NEUTRAL = frozenset({"n_allergy_reviews", "n_judgments"})  # every judged review counts here
_SPLIT_EXCERPT = re.compile(r"\.\.\.|…|\n")
_QUOTES = " \t\r\n\"'“”‘’"


def label(name: str) -> str:
    """The display name of a primitive: its SPEC spelling (upper case).

    >>> label("n_severe")
    'N_SEVERE'
    """
    return name.upper()


def fmt_value(value: Any) -> str:
    """A primitive's value for display (floats to at most 3 decimals, None as —).

    >>> fmt_value(6.944), fmt_value(2.0), fmt_value(None), fmt_value("High Risk")
    ('6.944', '2', '—', 'High Risk')
    """
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{round(value, 3):g}"
    return str(value)


# -- tree ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TraceRow:
    """One line of the indented tree."""

    depth: int
    name: str
    label: str
    value: str
    raw: Any
    line: str
    inputs: tuple[tuple[str, str], ...]  # (LABEL, value)
    n_reviews: int
    note: str
    worked: str  # the formula's right-hand side with the input values put in ("" when not applicable)


_TOKEN = re.compile(r"\b[A-Z][A-Z0-9_]*\b")


def worked_line(line: str, inputs: dict[str, str]) -> str:
    """The right-hand side of ``line`` with each input's value put in place of its name, or "".

    >>> worked_line("INCIDENT_AGE = 2025 − MOST_RECENT_INCIDENT_YEAR", {"MOST_RECENT_INCIDENT_YEAR": "2020"})
    '= 2025 − 2020'
    """
    _, sep, rhs = line.partition(" = ")
    if not sep or not inputs:
        return ""
    out = _TOKEN.sub(lambda m: inputs.get(m.group(0), m.group(0)), rhs)
    return "" if out == rhs else f"= {out}"


def trace_rows(root: TraceNode) -> list[TraceRow]:
    """The tree depth-first, each primitive once (its first place), as display rows."""
    rows = []
    for depth, node in root.walk():
        inputs = tuple((label(c.name), fmt_value(c.value)) for c in node.inputs if c.name != "recorded")
        rows.append(TraceRow(depth, node.name, label(node.name), fmt_value(node.value), node.raw, node.line, inputs,
                             len(node.reviews), node.note, worked_line(node.line, dict(inputs))))
    return rows


TREE_CSS = """
<style>
.gt-tree{font-size:0.9rem;line-height:1.35}
.gt-node{border-left:2px solid rgba(128,128,128,.25);padding:3px 0 3px 10px;margin:0}
.gt-node.focus{background:rgba(255,200,0,.16);border-left-color:#f0a500}
.gt-name{font-family:ui-monospace,monospace;font-weight:600}
.gt-val{font-family:ui-monospace,monospace;font-weight:700;padding:0 4px;border-radius:4px;background:rgba(128,128,128,.14)}
.gt-line{font-family:ui-monospace,monospace;font-size:0.8rem;opacity:.75;white-space:pre-wrap}
.gt-work{font-family:ui-monospace,monospace;font-size:0.8rem;color:#3b5bdb;white-space:pre-wrap}
.gt-note{font-size:0.8rem;font-style:italic;opacity:.8}
.gt-rev{font-size:0.75rem;padding:0 6px;border-radius:8px;background:rgba(60,120,220,.18);margin-left:6px}
.gt-text{white-space:pre-wrap;font-size:0.9rem;line-height:1.4;max-height:16rem;overflow-y:auto;padding:6px 8px;
 border-radius:6px;background:rgba(128,128,128,.08)}
.gt-text mark{background:rgba(255,210,0,.55);padding:0 1px;border-radius:2px}
</style>
"""


def _verdict_style(value: Any) -> str:
    """An inline background for a verdict value, from the one verdict palette (core.ground_truth.views.charts)."""
    from core.ground_truth.views.charts import (
        VERDICT_HEX,  # deferred: altair is only needed when a page draws
    )

    colour = VERDICT_HEX.get(str(value))
    return f' style="background:{colour}40"' if colour else ""


def tree_html(root: TraceNode, *, focus: str | None = None) -> str:
    """The formula as an indented tree of primitives (escaped HTML with :data:`TREE_CSS`).

    Each node shows NAME = value, the count of contributing reviews, its formula line, its
    inputs and its note. ``focus`` marks one primitive.
    """
    parts = [TREE_CSS, '<div class="gt-tree">']
    for row in trace_rows(root):
        cls = "gt-node focus" if row.name == focus else "gt-node"
        raw = "" if row.raw is None or fmt_value(row.raw) == row.value else f' title="raw {html.escape(str(row.raw))}"'
        reviews = (f'<span class="gt-rev">{row.n_reviews} review{"s" if row.n_reviews != 1 else ""}</span>'
                   if row.n_reviews else "")
        value = "" if row.name == "recorded" else (
            f' = <span class="gt-val"{_verdict_style(row.value)}{raw}>{html.escape(row.value)}</span>')
        if row.worked:
            detail = f'<div class="gt-work">{html.escape(row.worked)} → {html.escape(row.value)}</div>'
        elif row.inputs and row.name != "recorded":
            detail = ('<div class="gt-work">with ' + html.escape(", ".join(f"{n} = {v}" for n, v in row.inputs))
                      + "</div>")
        else:
            detail = ""
        note = f'<div class="gt-note">{html.escape(row.note)}</div>' if row.note else ""
        parts.append(
            f'<div class="{cls}" style="margin-left:{row.depth * 1.1:.1f}rem">'
            f'<span class="gt-name">{html.escape(row.label)}</span>{value}{reviews}'
            f'<div class="gt-line">{html.escape(row.line)}</div>{detail}{note}</div>'
        )
    parts.append("</div>")
    return "".join(parts)


# -- highlight -----------------------------------------------------------------------------------
def highlight_spans(text: str | None, excerpt: str | None) -> list[tuple[int, int]]:
    """(start, end) of the excerpt in the text: its pieces (split on "..."), each found exactly,
    else ignoring case and runs of whitespace; merged and sorted. [] when nothing is found."""
    if not text or not excerpt:
        return []
    spans = []
    for piece in (p.strip(_QUOTES) for p in _SPLIT_EXCERPT.split(excerpt)):
        if len(piece) < 3:
            continue
        start = text.find(piece)
        if start >= 0:
            spans.append((start, start + len(piece)))
            continue
        pattern = r"\s+".join(re.escape(w) for w in piece.split())
        found = re.search(pattern, text, flags=re.IGNORECASE)
        if found:
            spans.append(found.span())
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def highlight_segments(text: str | None, excerpt: str | None) -> list[tuple[str, bool]]:
    """The text as (segment, is_excerpt) pieces, in order.

    >>> highlight_segments("I had hives after the satay.", "hives")
    [('I had ', False), ('hives', True), (' after the satay.', False)]
    """
    if not text:
        return []
    out, pos = [], 0
    for start, end in highlight_spans(text, excerpt):
        if start > pos:
            out.append((text[pos:start], False))
        out.append((text[start:end], True))
        pos = end
    if pos < len(text):
        out.append((text[pos:], False))
    return out


def highlight_html(text: str | None, excerpt: str | None) -> str:
    """The full text as escaped HTML with the excerpt wrapped in ``<mark>``.

    >>> highlight_html("<b>hives</b> & more", "hives")
    '<div class="gt-text">&lt;b&gt;<mark>hives</mark>&lt;/b&gt; &amp; more</div>'
    """
    body = marked_html(text or "", highlight_spans(text, excerpt))
    return f'<div class="gt-text">{body}</div>'


def excerpt_found(text: str | None, excerpt: str | None) -> bool:
    """True when some piece of the excerpt was found in the text."""
    return bool(highlight_spans(text, excerpt))


# -- review cards --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReviewCard:
    """One contributing review and every primitive it counts towards."""

    idx: int
    review_id: str | None
    date: str | None
    stars: float | None
    useful: int | None
    fields: dict[str, Any]
    excerpt: str | None
    text: str | None
    overridden: bool
    contributions: tuple[tuple[str, float, str], ...]  # (primitive, amount, explanation)

    @property
    def moves_score(self) -> bool:
        """True when the review counts towards more than the number of judged reviews."""
        return any(name not in NEUTRAL for name, _, _ in self.contributions)

    def header(self) -> str:
        """"idx 39 · 2020-03-01 · ★ 5.0 · useful 2" (plain text; stars with one decimal, as everywhere)."""
        stars = "—" if self.stars is None else f"{float(self.stars):.1f}"
        date = (self.date or "no date")[:10]
        return f"idx {self.idx} · {date} · ★ {stars} · useful {fmt_value(self.useful)}"


def review_cards(root: TraceNode, *, primitive: str | None = None, include_neutral: bool = False) -> list[ReviewCard]:
    """The contributing reviews of the tree, by idx, each with its contributions in tree order.

    Args:
        primitive: only reviews contributing to this primitive.
        include_neutral: also reviews that only count as judged reviews (no incident, no interaction).
    """
    cards: dict[int, dict[str, Any]] = {}
    for _, node in root.walk():
        for c in node.reviews:
            entry = cards.setdefault(c.idx, {"c": c, "contributions": []})
            entry["contributions"].append((node.name, c.amount, c.explanation))
    out: list[ReviewCard] = []
    for idx in sorted(cards):
        c, contributions = cards[idx]["c"], tuple(cards[idx]["contributions"])
        card = ReviewCard(c.idx, c.review_id, c.date, c.stars, c.useful, dict(c.fields), c.excerpt, c.text,
                          c.overridden, contributions)
        if primitive is not None and all(name != primitive for name, _, _ in contributions):
            continue
        if primitive is None and not include_neutral and not card.moves_score:
            continue
        out.append(card)
    return out


def primitives_with_reviews(root: TraceNode) -> list[str]:
    """Names of the primitives that have contributing reviews, in tree order."""
    return [node.name for _, node in root.walk() if node.reviews]


def flat_values(root: TraceNode) -> dict[str, Any]:
    """name -> stored value of every primitive of the tree."""
    return {node.name: node.value for _, node in root.walk() if node.name != "recorded"}


def value_changes(before: dict[str, Any] | TraceNode, after: dict[str, Any] | TraceNode) -> list[dict[str, Any]]:
    """The primitives whose value differs: [{name, label, before, after}] in the order of ``after``."""
    a = flat_values(before) if isinstance(before, TraceNode) else before
    b = flat_values(after) if isinstance(after, TraceNode) else after
    return [{"name": n, "label": label(n), "before": a.get(n), "after": v} for n, v in b.items() if a.get(n) != v]


def changes_frame(changes: Iterable[dict[str, Any]]) -> pl.DataFrame:
    """A display frame of value changes: primitive, before, after (as text)."""
    rows = [{"primitive": c["label"], "before": fmt_value(c["before"]), "after": fmt_value(c["after"])}
            for c in changes]
    return pl.DataFrame(rows, schema={"primitive": pl.Utf8, "before": pl.Utf8, "after": pl.Utf8})


def kchange_frames(change: KChange) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """(moved primitives, reviews that move something, number of neutral reviews) of a K change.

    The reviews frame has idx, date, stars, fields, primitives (the ones it counts towards) and
    score_effect (the score change this review alone makes on top of the lower K).
    """
    moved = changes_frame({"label": label(p["name"]), **p} for p in change.primitives)
    rows, neutral = [], 0
    for r in change.reviews:
        touched = [t["primitive"] for t in r["touches"]]
        if not any(t not in NEUTRAL for t in touched):
            neutral += 1
            continue
        fields = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in (r.get("fields") or {}).items()
                           if v not in (None, "none"))
        rows.append({"idx": r["idx"], "date": (r.get("date") or "")[:10], "stars": r.get("stars"),
                     "judgment": fields or "none", "score_effect": r.get("score_effect"),
                     "primitives": ", ".join(label(t) for t in touched)})
    schema = {"idx": pl.Int64, "date": pl.Utf8, "stars": pl.Float64, "judgment": pl.Utf8, "score_effect": pl.Float64,
              "primitives": pl.Utf8}
    return moved, pl.DataFrame(rows, schema=schema), neutral
