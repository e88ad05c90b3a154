"""Bench only: a Streamlit server started by bench/browser.py writes the time of each rerun request it
receives and of each finished script run it sends into the file named by WORKBENCH_BENCH_CLOCK.

Python imports this module at start-up because the bench puts this folder on the server's
PYTHONPATH; the app never loads it. The times are ``time.perf_counter()`` (CLOCK_MONOTONIC, the
same clock in every process of the machine), so the bench compares them with its own: server time
is then measured in the server, from the request received to the ``script_finished`` message
queued for the browser, without the time the frames take to reach the bench through Chromium and
Playwright (60-200 ms on a loaded 2-core machine; that is in the browser figure).
"""

from __future__ import annotations

import os
import time

_PATH = os.environ.get("WORKBENCH_BENCH_CLOCK")

if _PATH:
    from streamlit.runtime.runtime import Runtime
    from streamlit.web.server.starlette.starlette_websocket import StarletteSessionClient

    _out = open(_PATH, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (open for the process's life)
    _handle_backmsg, _write_forward_msg = Runtime.handle_backmsg, StarletteSessionClient.write_forward_msg

    def _handle(self, session_id, msg, *args, **kwargs):  # type: ignore[no-untyped-def]
        if msg.WhichOneof("type") == "rerun_script":
            _out.write(f"request {time.perf_counter():.6f}\n")
        return _handle_backmsg(self, session_id, msg, *args, **kwargs)

    def _write(self, msg):  # type: ignore[no-untyped-def]
        _write_forward_msg(self, msg)
        if msg.WhichOneof("type") == "script_finished":
            _out.write(f"finished {time.perf_counter():.6f}\n")

    Runtime.handle_backmsg = _handle  # type: ignore[method-assign]
    StarletteSessionClient.write_forward_msg = _write  # type: ignore[method-assign]
