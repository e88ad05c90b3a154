"""Links to the app's pages, printed by the command line when a base URL is configured.

``WORKBENCH_BASE_URL`` (e.g. ``https://bench.example.org``) is where the app is served; without it
no link is printed (a command does not know where its workspace is served).
"""

from __future__ import annotations

import urllib.parse

from core.base.settings import env


def base_url() -> str | None:
    """``$WORKBENCH_BASE_URL`` without a trailing slash, or None."""
    value = env("WORKBENCH_BASE_URL")
    return value.rstrip("/") if value else None


def page_link(page: str, **params: str | None) -> str | None:
    """``{base}/{page}?{params}`` (None values left out), or None without a base URL.

    >>> import os; os.environ["WORKBENCH_BASE_URL"] = "https://b.org/"
    >>> page_link("results", run="demo-amos-K25", baseline=None)
    'https://b.org/results?run=demo-amos-K25'
    >>> del os.environ["WORKBENCH_BASE_URL"]; page_link("results", run="x") is None
    True
    """
    base = base_url()
    if base is None:
        return None
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    return f"{base}/{page}" + (f"?{query}" if query else "")


def results_link(run_id: str, baseline: str | None = None) -> str | None:
    """The Results page of a run (compared with ``baseline`` when given)."""
    return page_link("results", run=run_id, baseline=baseline)
