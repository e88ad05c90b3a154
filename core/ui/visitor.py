"""The demo mode's visitor: one random token per browser, kept in a cookie so a reload keeps it.

A visitor owns the runs they launch (:mod:`core.runs.owners`, ``visitor:TOKEN``). The token is
``secrets.token_urlsafe(24)`` (192 random bits: not guessable), made on the browser's first visit
and stored in a cookie (``SameSite=Strict``, ``Secure`` over HTTPS, one day); a reloaded tab, or
another tab of the same browser, sends it back (``st.context.cookies``) and is the same visitor.
A cookie and not the URL's query parameters: a link copied from the address bar (``/results?run=…``)
would hand the ownership to whoever opens it. The token is never written into the page as text; a
cookie that is not such a token is ignored. A browser that refuses cookies is a visitor per session.
"""

from __future__ import annotations

import json
import re
import secrets

import streamlit as st

K_VISITOR = "runs.visitor"  # this session's token
K_REMEMBERED = "visitor.remembered"  # the cookie was written (once per session)
COOKIE = "workbench_visitor"
COOKIE_MAX_AGE = 24 * 3600  # a visitor's stopped runs go after $WORKBENCH_DEMO_RUN_TTL (an hour) anyway
TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{32}")  # what secrets.token_urlsafe(24) gives


def token() -> str:
    """This browser's visitor token: the session's, else the cookie's (a reload), else a new one."""
    current = st.session_state.get(K_VISITOR)
    if not current:
        sent = st.context.cookies.get(COOKIE)
        current = sent if isinstance(sent, str) and TOKEN_RE.fullmatch(sent) else secrets.token_urlsafe(24)
        st.session_state[K_VISITOR] = current
    return str(current)


def cookie_script(value: str) -> str:
    """The ``<script>`` that stores ``value`` (a checked token, JSON-encoded) in the visitor cookie."""
    if not TOKEN_RE.fullmatch(value):
        raise ValueError("not a visitor token")
    return ("<script>document.cookie = " + json.dumps(f"{COOKIE}=") + f" + {json.dumps(value)} + "
            + json.dumps(f"; path=/; max-age={COOKIE_MAX_AGE}; SameSite=Strict")
            + " + (location.protocol === 'https:' ? '; Secure' : '');</script>")


def remember() -> None:
    """Write this session's token into the browser's cookie, once per session, unless it is there."""
    if st.session_state.get(K_REMEMBERED):
        return
    value = token()
    if st.context.cookies.get(COOKIE) != value and TOKEN_RE.fullmatch(value):
        st.html(cookie_script(value), unsafe_allow_javascript=True)
    st.session_state[K_REMEMBERED] = True
