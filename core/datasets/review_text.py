"""A review's text as escaped HTML for the Data page: search hits and keyword matches marked,
long texts collapsed behind a ``<details>`` element (no script, no markup from the data).

Matching follows the keyword index (case-insensitive substring, SPEC §2.2); the text is cut
into segments first and every segment goes through :func:`html.escape`, so markup in a review is
shown as characters.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

# Every character markdown or a Streamlit directive gives a meaning to.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


# What Streamlit's markdown turns into a link by itself (GFM autolink literals: an e-mail address,
# www., a scheme's ://), escaped or not: a WORD JOINER (U+2060, invisible) breaks each trigger.
_AUTOLINK = re.compile(r"(@|(?<![A-Za-z0-9])[wW](?=[wW]{2}\.)|(?<=[A-Za-z0-9]):(?=//))")
WORD_JOINER = "\u2060"


def md_escape(text: Any) -> str:
    r"""Text safe to embed in Streamlit markdown: every markdown/directive character escaped, and no
    e-mail address or URL in it made a link (a word joiner after the ``@``, the first ``w`` of
    ``www.`` and before ``://``; the text reads the same).

    >>> md_escape("*x* [a](b)") == r"\*x\* \[a\]\(b\)"
    True
    >>> md_escape("a@b.org www.x.com http://y").replace(WORD_JOINER, "|")
    'a@|b\\.org w|ww\\.x\\.com http|\\://y'
    """
    text = _AUTOLINK.sub(lambda m: m.group(1) + WORD_JOINER if m.group(1) != ":" else WORD_JOINER + ":",
                         "" if text is None else str(text))
    return _MD_SPECIAL.sub(r"\\\1", text)


REVIEW_CSS = """<style>
.rv-text{white-space:pre-wrap;font-size:0.92rem;line-height:1.45;margin:0}
.rv-text mark.hit{background:rgba(255,210,0,.6);padding:0 1px;border-radius:2px}
.rv-text mark.kw{background:rgba(58,111,176,.18);border-bottom:2px solid #3a6fb0;padding:0 1px}
.rv-text summary{cursor:pointer;list-style:none}
.rv-text summary .more{color:#3a6fb0;font-size:0.85rem;white-space:nowrap}
.rv-text details[open] summary{display:none}
</style>"""


def match_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Non-overlapping (start, end) of every case-insensitive occurrence of any term, in order
    (a longer term wins where two start at the same place).

    >>> match_spans("Peanut and PEANUTS", ["peanut", "peanuts"])
    [(0, 6), (11, 18)]
    """
    lower = text.lower()
    found = []
    for term in {t.strip().lower() for t in terms if t and t.strip()}:
        start = lower.find(term)
        while start >= 0:
            found.append((start, start + len(term)))
            start = lower.find(term, start + 1)
    out: list[tuple[int, int]] = []
    for s, e in sorted(found, key=lambda p: (p[0], -p[1])):
        if not out or s >= out[-1][1]:
            out.append((s, e))
    return out


def _marked(text: str, search: str, keywords: Sequence[str]) -> str:
    spans = [(s, e, "hit") for s, e in match_spans(text, [search])]
    taken = spans[:]
    for s, e in match_spans(text, keywords):
        if all(e <= a or s >= b for a, b, _ in taken):
            taken.append((s, e, "kw"))
    parts, pos = [], 0
    for s, e, kind in sorted(taken):
        parts.append(html.escape(text[pos:s]))
        title = "search hit" if kind == "hit" else "task keyword"
        parts.append(f'<mark class="{kind}" title="{title}">{html.escape(text[s:e])}</mark>')
        pos = e
    parts.append(html.escape(text[pos:]))
    return "".join(parts)


def review_html(text: str | None, *, search: str = "", keywords: Sequence[str] = (), collapse_at: int = 600) -> str:
    """The review as escaped HTML with marks; a text longer than ``collapse_at`` characters shows
    its beginning and opens in full on click.

    >>> review_html("<b>nuts</b>", search="nut")
    '<div class="rv-text">&lt;b&gt;<mark class="hit" title="search hit">nut</mark>s&lt;/b&gt;</div>'
    >>> "<details>" in review_html("word " * 200, collapse_at=100)
    True
    """
    if not text:
        return '<div class="rv-text"><em>(no text stored for this review)</em></div>'
    if len(text) <= collapse_at:
        return f'<div class="rv-text">{_marked(text, search, keywords)}</div>'
    cut = text.rfind(" ", 0, collapse_at)
    head = text[: cut if cut > collapse_at // 2 else collapse_at]
    return (f'<div class="rv-text"><details><summary>{_marked(head, search, keywords)}… '
            f'<span class="more">show all {len(text):,} characters</span></summary>'
            f"{_marked(text, search, keywords)}</details></div>")
