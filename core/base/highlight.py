"""The one text highlighter: a text as escaped HTML with spans of it wrapped in ``<mark>``. Each
caller finds its own spans (an excerpt's pieces, keywords, snippets); the markup is made here,
so text from data is escaped the same way everywhere."""

from __future__ import annotations

import html
from collections.abc import Iterable


def marked_html(text: str, spans: Iterable[tuple[int, int]], *, css_class: str | None = None) -> str:
    """``text`` HTML-escaped with each (start, end) span (sorted, not overlapping) in ``<mark>``.

    >>> marked_html("<b>hives</b> & more", [(3, 8)], css_class="found")
    '&lt;b&gt;<mark class="found">hives</mark>&lt;/b&gt; &amp; more'
    """
    tag = f'<mark class="{html.escape(css_class)}">' if css_class else "<mark>"
    out, pos = [], 0
    for start, end in spans:
        out.append(html.escape(text[pos:start]))
        out.append(f"{tag}{html.escape(text[start:end])}</mark>")
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)
