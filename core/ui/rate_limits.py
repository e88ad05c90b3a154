"""Rate limits in the app: per-session and server-wide token buckets, exports built on click
within a limit, and a refused download that says why at once (it reruns its session)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from core.base.errors import WorkbenchError
from core.base.limits import TokenBucket
from core.base.settings import deployment_mode, rate_limit

LOG = logging.getLogger("workbench.app")  # the app's log (core.ui.hosting's too)
K_BUCKETS = "hosted.buckets"  # this session's token buckets, by action


def hosted() -> bool:
    """True in the demo and team modes (the ones served to other people)."""
    return deployment_mode() != "local"


def take_token(action: str) -> str | None:
    """Spend one of this session's ``action`` tokens; None when allowed, else why not (one line).

    Local mode is not limited; demo and team allow ``$WORKBENCH_RATE_LIMIT[_ACTION]`` per session.
    """
    if not hosted():
        return None
    buckets: dict[str, TokenBucket] = st.session_state.setdefault(K_BUCKETS, {})
    now = time.monotonic()
    if action not in buckets:
        burst, refill = rate_limit(action)
        buckets[action] = TokenBucket(burst=burst, refill_s=refill, now=now)
    bucket = buckets[action]
    if bucket.take(now):
        return None
    return f"Too many requests ({action}) in this session: try again in {bucket.retry_after(now):.0f} s."


class SharedBucket:
    """A token bucket shared by every session of this server (sign-in attempts as a whole), with
    the lock its sessions' threads need."""

    def __init__(self, burst: int, refill_s: float) -> None:
        self.lock = threading.Lock()
        self.bucket = TokenBucket(burst=burst, refill_s=refill_s, now=time.monotonic())


@st.cache_resource(show_spinner=False)
def _shared_bucket(action: str, burst: int, refill_s: float) -> SharedBucket:
    return SharedBucket(burst, refill_s)


def take_shared_token(action: str, default: str, what: str = "sign-in attempts") -> str | None:
    """Like :func:`take_token`, but one bucket for all sessions (a reload starts a new session, so a
    per-session limit alone does not stop guessing): ``$WORKBENCH_RATE_LIMIT_<ACTION>``."""
    burst, refill = rate_limit(action, default)
    shared = _shared_bucket(action, burst, refill)
    with shared.lock:
        now = time.monotonic()
        if shared.bucket.take(now):
            return None
        wait = shared.bucket.retry_after(now)
    return f"Too many {what} on this server: try again in {wait:.0f} s."


K_DOWNLOADS = "hosted.download_buckets"
DOWNLOAD_LIMIT = "10/60"  # builds of an export file per session (``$WORKBENCH_RATE_LIMIT_DOWNLOAD``)


class RateLimitedError(WorkbenchError):
    """An expensive action refused by a rate limit (the message says when to try again)."""


def _download_bucket(action: str) -> SharedBucket:
    buckets: dict[str, SharedBucket] = st.session_state.setdefault(K_DOWNLOADS, {})
    if action not in buckets:
        buckets[action] = SharedBucket(*rate_limit(action, DOWNLOAD_LIMIT))
    return buckets[action]


def limited_download(build: Callable[[], Any], action: str = "download") -> tuple[Callable[[], Any], str | None]:
    """The ``data`` for ``st.download_button`` that builds an export only when clicked, and why the
    button is disabled now (None when it is not).

    Locally ``build`` itself. In demo and team modes each build spends one of this session's
    ``action`` tokens (``$WORKBENCH_RATE_LIMIT_DOWNLOAD``, default 10 a minute). Streamlit calls the
    returned function on a thread of its own, without the session: the bucket is taken from the
    session now and guarded by its lock there. A refused build raises :class:`RateLimitedError`
    (Streamlit shows its own "Failed to generate file" under the button), builds nothing, and asks
    the session for a rerun at once, which disables the button with the one-line reason.
    """
    if not hosted():
        return build, None
    shared = _download_bucket(action)
    session_id = _session_id()

    def data() -> Any:
        with shared.lock:
            now = time.monotonic()
            allowed, wait = shared.bucket.take(now), shared.bucket.retry_after(now)
        if not allowed:
            LOG.warning("%s refused by the rate limit", action)
            rerun_session(session_id)  # the page says why at once, beside the button
            raise RateLimitedError(f"Too many requests ({action}) in this session: try again in {wait:.0f} s.")
        return build()

    with shared.lock:
        wait = shared.bucket.retry_after(time.monotonic())
    refusal = f"Too many requests ({action}) in this session: try again in {wait:.0f} s." if wait > 0 else None
    return data, refusal


def _session_id() -> str | None:
    """This script run's session id (None outside a Streamlit server, e.g. AppTest)."""
    # deferred: Streamlit's runtime internals, only when a refused download reruns its session
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else None


def rerun_session(session_id: str | None) -> bool:
    """Ask session ``session_id`` to rerun its page, from any thread (a download's build runs on a
    thread of its own, without the session); False when there is no such live session."""
    if session_id is None:
        return False
    try:
        # deferred: Streamlit's runtime internals, only when a refused download reruns its session
        from streamlit.runtime import Runtime

        runtime = Runtime.instance()
        info = runtime._session_mgr.get_active_session_info(session_id)  # noqa: SLF001 - no public way
        if info is None:
            LOG.warning("no live session %s to rerun after a refused download", session_id)
            return False
        session = info.session  # rerun with its last client state (its page, its widgets), as a saved source file does
        runtime._get_async_objs().eventloop.call_soon_threadsafe(  # noqa: SLF001
            lambda: session.request_rerun(session._client_state))  # noqa: SLF001
    except Exception:  # noqa: BLE001 - the refusal still stands; the next rerun says why
        LOG.warning("could not rerun session %s after a refused download", session_id, exc_info=True)
        return False
    return True


def download_button(where: Any, label: str, build: Callable[[], Any], *, key: str, file_name: str, mime: str,
                    action: str = "download", **options: Any) -> None:
    """``where.download_button`` with an export built on click and rate-limited in demo and team
    modes (:func:`limited_download`); when refused, the button is disabled and says why."""
    data, refusal = limited_download(build, action)
    if refusal:
        options["help"] = refusal
    # on_click="ignore": a rerun would register a new callable while the click still asks for this one
    where.download_button(label, data, file_name=file_name, mime=mime, key=key, disabled=bool(refusal),
                          on_click="ignore", **options)
    if refusal:
        where.caption(refusal)
