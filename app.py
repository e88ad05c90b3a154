"""Scale Workbench: the app Streamlit serves (``streamlit run app.py``).

An ``st.App`` around ``main.py``, the script every session runs (router and frame; pages live in
app_pages/, logic in core/). Its only addition is a startup hook: while the first browser loads
Streamlit's frontend (about a second), a thread imports the modules of the first page, which a
fresh process would otherwise import inside that page's first run (core.ui.warmup), with the
garbage collector paused meanwhile and what it made frozen out of the collector's walks after. This
module imports nothing else at startup, so the server answers as soon as Streamlit's own does.
"""

from __future__ import annotations

import gc
import importlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import streamlit as st


def _preload() -> None:
    # No garbage collection while the preload imports: its imports make ~150k objects that live as
    # long as the process, and the collections they would trigger walk them again and again (0.1-0.2 s
    # of the first page's wait); collection resumes, past the frozen start-up, when the preload ends.
    gc.disable()
    try:
        warmup = importlib.import_module("core.ui.warmup")
        warmup.preload_first_page()
        warmup.freeze()  # what the start-up made, out of the garbage collector's sight (see freeze)
    finally:
        gc.enable()


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    threading.Thread(target=_preload, name="workbench-preload", daemon=True).start()
    yield


app = st.App("main.py", lifespan=lifespan)
