"""Scale Workbench: the app Streamlit serves (``streamlit run app.py``).

An ``st.App`` around ``main.py``, the script every session runs (router and frame; pages live in
app_pages/, logic in core/). Its only addition is a startup hook: while the first browser loads
Streamlit's frontend (about a second), a thread imports the modules of the first page, which a
fresh process would otherwise import inside that page's first run (core.ui.warmup). This module
imports nothing else at startup, so the server answers as soon as Streamlit's own does.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import streamlit as st


def _preload() -> None:
    warmup = importlib.import_module("core.ui.warmup")
    warmup.preload_first_page()
    warmup.freeze()  # what the start-up made, out of the garbage collector's sight (see freeze)


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    threading.Thread(target=_preload, name="workbench-preload", daemon=True).start()
    yield


app = st.App("main.py", lifespan=lifespan)
