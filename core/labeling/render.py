"""Text helpers of the labeling pages (no streamlit here): safe markdown, labels, captions.

``st.markdown`` never renders raw HTML unless told to (we never do), so data text is shown as
markdown after :func:`safe_markdown` neutralises what markdown would still do on its own: images
(which would load remote URLs when the item is shown) and ``$…$`` (rendered as LaTeX, which
garbles amounts of money).
"""

from __future__ import annotations

import re
from typing import Any

from core.datasets.review_text import md_escape


def safe_markdown(text: str | None) -> str:
    """Markdown of an item with images turned into links and dollar signs escaped.

    >>> safe_markdown("![x](http://e/t.png) costs $5")
    '\\\\![x](http://e/t.png) costs \\\\$5'
    """
    text = text or ""
    text = text.replace("$", "\\$")
    return re.sub(r"!\[", r"\\![", text)


def escape_markdown(text: str | None) -> str:
    """Text shown literally inside markdown (every markup character escaped, one line).

    >>> escape_markdown("*R*: NTA")
    '\\\\*R\\\\*\\\\: NTA'
    """
    return md_escape(" ".join((text or "").split()))


def nearest_label(score: float, labels: tuple[str, str, str]) -> str:
    """The scale label closest to ``score`` (-1, 0, +1; ties go to 0).

    >>> nearest_label(0.6, ("bad", "meh", "good"))
    'good'
    """
    anchors = ((0.0, labels[1]), (-1.0, labels[0]), (1.0, labels[2]))
    return min(anchors, key=lambda a: abs(score - a[0]))[1]


def fields_caption(fields: dict[str, Any]) -> str:
    """``name: value · name: value`` of an item's visible fields (escaped for markdown)."""
    return " · ".join(f"{escape_markdown(str(k))}: {escape_markdown(str(v))}" for k, v in fields.items())


def spread_label(row: dict[str, Any]) -> str:
    """One line describing a queue entry: item, spread, status and title."""
    status = {"needs_discussion": "needs discussion", "adjudicated": "adjudicated", "calculated": "agreed"}
    title = " ".join((row.get("prompt_title") or "").split())
    title = title if len(title) <= 70 else title[:69] + "…"
    return (f"#{row['item_id']} · spread {row['spread']:.2f} · "
            f"{status.get(row['consensus_source'], row['consensus_source'])} · {title}")
