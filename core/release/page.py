"""The release's page: ``index.html`` with its script and style (``core/release/static``), the
figures it draws (``release-data.js``) and the Vega JavaScript that draws its charts (``vega.js``).

The Vega, Vega-Lite and Vega-Embed libraries are the copy the installed Streamlit ships, linked
into one classic script (:mod:`core.release.vega_bundle`) that sets ``window.vegaEmbed``. Loaded as
classic scripts, all of it works from ``file://`` (module scripts do not) and from any static host,
with no request outside the folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from core.base.files import write_bytes_atomic
from core.release.vega_bundle import vega_bundle

STATIC = Path(__file__).resolve().parent / "static"
STATIC_FILES = ("index.html", "app.js", "style.css")
DATA_JS = "release-data.js"
VEGA_JS = "vega.js"


def data_js(payload: Mapping[str, Any]) -> bytes:
    """``release-data.js``: ``window.RELEASE = {figures, meta, datasheet, files};`` (JSON is JavaScript;
    a separate file, so no text in it can close an HTML script element)."""
    return b"window.RELEASE = " + orjson.dumps(dict(payload), option=orjson.OPT_SORT_KEYS) + b";\n"


def write_static(out: Path) -> None:
    """Copy the page's own files and write the Vega bundle into ``out``."""
    for name in STATIC_FILES:
        write_bytes_atomic(out / name, (STATIC / name).read_bytes())
    write_bytes_atomic(out / VEGA_JS, vega_bundle())
