"""Text from data or a URL, shown as text: the one helper every page uses for it.

Streamlit renders the strings of ``st.markdown``, ``st.caption``, ``st.warning``, ``st.subheader``
… as markdown (links, images, badges). A page's own wording is trusted; a value from data (a
restaurant name, categories) or from a URL (``?dataset=…``) is not. :func:`show` and
:func:`safe` fill a trusted template with values escaped for markdown, so a crafted value can
never become a link, an image or a badge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.datasets.review_text import md_escape

__all__ = ["md_escape", "safe", "show"]


def safe(template: str, /, **values: Any) -> str:
    """``template`` (trusted markdown) with each ``{name}`` filled by its value escaped as text.

    >>> print(safe("Dataset {name} is missing.", name="[log in](http://x)").replace("\\u2060", ""))  # word joiner: no autolink
    Dataset \\[log in\\]\\(http\\://x\\) is missing.
    """
    return template.format(**{k: md_escape(v) for k, v in values.items()})


def show(element: Callable[..., Any], template: str, /, **values: Any) -> Any:
    """Call a Streamlit element (``st.warning``, ``st.caption``, ``col.subheader`` …) with
    :func:`safe` text. Wrap an element with ``functools.partial`` for its other arguments."""
    return element(safe(template, **values))
