"""Deployment modes in the app: the team sign-in, who is an admin, why a control is disabled,
per-session rate limits, the demo banner and the page wrapper that hides error details.

The rules are in :mod:`core.base.settings` (``deployment_mode``, ``require_writable``, ``rate_limit``,
``labels_storage``) and :mod:`core.base.limits`; this module is their Streamlit glue, and the one place
besides :mod:`core.ui.auth` and :mod:`core.ui.paid` that reads ``st.secrets``.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import secrets as token_source
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec

import streamlit as st

from core.base.settings import (
    DEFAULT_WORKSPACE,
    deployment_mode,
    deployment_setup,
    env,
    labels_storage,
    labels_url,
    redact,
)
from core.labeling.identity import admin_codes, get_role
from core.labeling.render import escape_markdown
from core.ui import auth, visitor
from core.ui.rate_limits import (  # noqa: F401 - hosting's face
    DOWNLOAD_LIMIT,
    K_BUCKETS,
    K_DOWNLOADS,
    RateLimitedError,
    SharedBucket,
    download_button,
    hosted,
    limited_download,
    rerun_session,
    take_shared_token,
    take_token,
)
from core.workspace import Workspace
from core.workspace.choice import workspace_dir

LOG = logging.getLogger("workbench.app")

# Session keys (page-prefixed constants, STYLE §6). The role is set only by this module after a
# checked sign-in: a browser can send widget values, never session state.
K_ROLE, K_USER = "hosted.role", "hosted.user"
K_CODE, K_SIGNIN_ERROR, K_SEEN_VIEWS = "hosted.access_code", "hosted.sign_in_error", "hosted.seen_views"
ROLES = ("member", "admin")
K_SET_COOKIE, K_CLEAR_COOKIE = "hosted.set_cookie", "hosted.clear_cookie"
TEAM_COOKIE, TEAM_COOKIE_DAYS = "workbench_team", 7


def team_token(role: str, expires_at: int, key: str) -> str:
    """A signed sign-in token ``role.expires_at.mac`` (HMAC-SHA256 under ``key``), kept in a cookie
    so a reload or a shared link does not ask for the access code again.

    >>> team_token("member", 1700000000, "k")[:18]
    'member.1700000000.'
    >>> check_team_token(team_token("admin", 2000, "k"), "k", now=1000)
    'admin'
    >>> check_team_token(team_token("admin", 2000, "k").replace("admin", "member", 1), "k", now=1000) is None
    True
    >>> check_team_token(team_token("admin", 2000, "k"), "k", now=3000) is None  # expired
    True
    """
    payload = f"{role}.{expires_at}"
    return f"{payload}.{hmac.new(key.encode(), payload.encode(), 'sha256').hexdigest()}"


def check_team_token(token: str | None, key: str, *, now: float) -> str | None:
    """The role of a valid, unexpired ``token`` signed with ``key``, else None."""
    parts = (token or "").split(".")
    if len(parts) != 3 or parts[0] not in ROLES or not parts[1].isdigit() or not key:
        return None
    if int(parts[1]) < now or not hmac.compare_digest(team_token(parts[0], int(parts[1]), key), token or ""):
        return None
    return parts[0]


def _token_key() -> str:
    """The key of sign-in tokens: derived from both codes, so changing a code signs everyone out."""
    codes = f"{secret('WORKBENCH_ACCESS_CODE') or ''}\0{secret('WORKBENCH_ADMIN_CODE') or ''}"
    return "" if codes == "\0" else hashlib.sha256(codes.encode()).hexdigest()


def mode() -> str:
    """local, demo or team (:func:`core.base.settings.deployment_mode`)."""
    return deployment_mode()


def secret(name: str) -> str | None:
    """A root-level secret ``name`` from ``st.secrets`` (guarded: it raises without a secrets
    file), else the environment variable of that name. Never shown or logged."""
    try:
        value = st.secrets.get(name)
    except Exception:  # noqa: BLE001 - no secrets file
        value = None
    return value if isinstance(value, str) and value else env(name)


def code_matches(given: str, expected: str | None) -> bool:
    """Constant-time comparison of an access code (False when none is configured)."""
    if not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _login_role(email: str, ws: Workspace) -> str:
    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when a team login is checked
    from core.labeling.store import open_store, store_exists

    if email in auth.login_admins() or email in admin_codes():
        return "admin"
    if store_exists(ws.root) and get_role(open_store(ws.root), email) == "admin":
        return "admin"
    return "member"


def team_role(ws: Workspace) -> str | None:
    """member or admin for a signed-in team user, rater for a session signed in by a personal rater
    link (:func:`core.ui.auth.link_code`), None before sign-in."""
    email = auth.login_email()
    if auth.auth_configured() and email:
        return _login_role(email.strip().lower(), ws)
    role = st.session_state.get(K_ROLE)
    if role not in ROLES and not st.session_state.get(K_CLEAR_COOKIE):
        role = check_team_token(st.context.cookies.get(TEAM_COOKIE), _token_key(), now=time.time())
        if role:
            st.session_state[K_ROLE] = role
    if role in ROLES:
        return role
    return "rater" if auth.link_code(ws.root) else None  # a personal rater link: Labeling only


def is_admin(ws: Workspace) -> bool:
    """Whether this session may do admin work: anyone locally, nobody in the demo, a signed-in
    admin in a team deployment."""
    current = mode()
    if current == "local":
        return True
    return current == "team" and team_role(ws) == "admin"


def write_refusal(action: str) -> str | None:
    """One line saying why ``action`` (a write into the workspace) is disabled, or None."""
    if mode() == "demo":
        return f"Read-only demo: {action} is disabled here."
    return None


def admin_refusal(ws: Workspace, action: str) -> str | None:
    """One line saying why ``action`` (paid endpoints, roles) needs an admin, or None."""
    current = mode()
    if current == "demo":
        return f"Read-only demo: {action} is disabled here."
    if current == "team" and not is_admin(ws):
        return f"Only an admin may {action}; sign in with the admin code or an admin account."
    return None


def labels_line(ws: Workspace) -> str:
    """Where labels go and whether they persist, in one line (no password, no path)."""
    where, persists = labels_storage(labels_url(ws.root))
    return f"Labels are stored in {where}" + ("; they persist." if persists else ".")


def banner(ws: Workspace) -> None:
    """The demo's one-line banner: read-only, and where labels go."""
    if mode() == "demo":
        st.info(f"Read-only demo: browse everything, launch offline runs and rate items. {labels_line(ws)}",
                icon=":material/visibility:")


def signed_in(ws: Workspace) -> bool:
    """True when this session may use a team deployment (always outside team mode)."""
    return mode() != "team" or team_role(ws) is not None


K_CALLBACK_ERROR = "hosted.callback_error"
P = ParamSpec("P")


def _reference_line(ref: str, what: str) -> str:
    return f"Something went wrong {what} (reference {ref}); the details are in the server log."


def guarded(callback: Callable[P, None]) -> Callable[P, None]:
    """Wrap an ``on_click``/``on_change`` callback that does real work (a store write, a sign-in).

    Streamlit runs callbacks before the page script, outside :func:`run_page`, and shows an error
    there with its own redacted text. In demo and team modes the wrapper logs the traceback
    (secrets redacted) under a reference id and leaves one line for :func:`run_page` to show at the
    top of the page; locally the error propagates, shown in full. ``st.rerun``/``st.stop`` pass through.
    """

    @functools.wraps(callback)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        if not hosted():
            callback(*args, **kwargs)
            return
        try:
            callback(*args, **kwargs)
        except Exception:  # noqa: BLE001 - st.rerun/st.stop are BaseExceptions and pass through
            ref = token_source.token_hex(4)
            LOG.error("callback error in %s, reference %s\n%s", callback.__qualname__, ref,
                      redact(traceback.format_exc()))
            st.session_state[K_CALLBACK_ERROR] = _reference_line(ref, "with that action")

    return wrapper


def show_callback_error() -> None:
    """The one line a :func:`guarded` callback left in this rerun, if any (then forgotten)."""
    line = st.session_state.pop(K_CALLBACK_ERROR, None)
    if line:
        st.error(line, icon=":material/error:")


@guarded
def _check_code() -> None:
    given = str(st.session_state.get(K_CODE) or "")
    st.session_state[K_CODE] = ""
    limited = take_token("sign-in") or take_shared_token("sign-in-all", "30/60")
    if limited:
        st.session_state[K_SIGNIN_ERROR] = limited
        return
    admin_ok = code_matches(given, secret("WORKBENCH_ADMIN_CODE"))
    member_ok = code_matches(given, secret("WORKBENCH_ACCESS_CODE"))
    if admin_ok or member_ok:
        role = "admin" if admin_ok else "member"
        st.session_state[K_ROLE] = role
        st.session_state[K_SET_COOKIE] = team_token(role, int(time.time()) + TEAM_COOKIE_DAYS * 86400, _token_key())
        st.session_state.pop(K_SIGNIN_ERROR, None)
        st.session_state.pop(K_CLEAR_COOKIE, None)
    else:
        LOG.warning("team sign-in: wrong access code")
        st.session_state[K_SIGNIN_ERROR] = "Wrong access code."


def sign_in_screen() -> None:
    """The team deployment's sign-in: ``st.login`` when configured, else the shared access code."""
    st.title("Scale Workbench")
    show_callback_error()
    st.write("This workbench is shared with a team: sign in to continue.")
    if st.session_state.get(K_CLEAR_COOKIE):
        st.html(f"<script>document.cookie = '{TEAM_COOKIE}=; path=/; max-age=0; SameSite=Strict';</script>",
                unsafe_allow_javascript=True)
    if st.session_state.get(auth.K_LINK_ERROR):
        st.error(st.session_state[auth.K_LINK_ERROR])
    auth.link_cookie_script()  # clears the cookie of a link signed out of
    has_code = bool(secret("WORKBENCH_ACCESS_CODE") or secret("WORKBENCH_ADMIN_CODE"))
    if auth.auth_configured():
        if auth.refused_login():
            st.error("That sign-in was not accepted (no e-mail address, or a token issued to another app): "
                     "log in again.")
        st.button("Log in", on_click=st.login, type="primary", key="hosted.login")
    if not has_code:
        if not auth.auth_configured():
            st.error("No sign-in is configured: add an [auth] section or WORKBENCH_ACCESS_CODE to the secrets.")
        return
    with st.form("hosted.sign_in", border=False):
        st.text_input("Access code", type="password", key=K_CODE, max_chars=200)
        st.form_submit_button("Sign in", type="primary", on_click=_check_code, key="hosted.sign_in_submit")
    if st.session_state.get(K_SIGNIN_ERROR):
        st.error(st.session_state[K_SIGNIN_ERROR])


def sign_in_navigation(url_paths: list[str]) -> Any:
    """The navigation of a signed-out team session: the sign-in screen only, also under every
    page's ``url_paths`` (a shared link to a page shows it, not Streamlit's "Page not found")."""
    pages = [st.Page(sign_in_screen, title="Sign in", url_path="sign-in", default=True)]
    pages += [st.Page(sign_in_screen, title="Sign in", url_path=path) for path in url_paths if path]
    return st.navigation(pages, position="hidden")


def sign_out() -> None:
    """Forget the team role of this session and its cookie (``st.logout`` for a login)."""
    st.session_state.pop(K_ROLE, None)
    st.session_state[K_CLEAR_COOKIE] = True
    if auth.team_mode():
        auth.forget_link()
    if auth.login_email():
        st.logout()


def run_page(page: Any) -> None:
    """Run the chosen page; in demo and team modes an error shows one line with a reference id
    and its traceback (secrets redacted) goes to the server log. Locally errors show in full."""
    if not hosted():
        page.run()
        return
    show_callback_error()
    try:
        page.run()
    except Exception:  # noqa: BLE001 - st.rerun/st.stop are BaseExceptions and pass through
        ref = token_source.token_hex(4)
        LOG.error("page error, reference %s\n%s", ref, redact(traceback.format_exc()))
        st.error(_reference_line(ref, "on this page"), icon=":material/error:")


def sidebar_account(ws: Workspace) -> None:
    """Team mode: the signed-in role (and e-mail, for an ``st.login`` user) and a sign-out button in the
    sidebar. Demo mode: the visitor's cookie (:mod:`core.ui.visitor`: a reload keeps one's runs)."""
    if mode() == "demo":
        visitor.remember()
    if mode() != "team":
        return
    token = st.session_state.pop(K_SET_COOKIE, None)
    if token:  # a signed token of letters, digits and dots only (team_token)
        st.html(f"<script>document.cookie = '{TEAM_COOKIE}={token}; path=/; max-age={TEAM_COOKIE_DAYS * 86400}; "
                "SameSite=Strict';</script>", unsafe_allow_javascript=True)
    auth.link_cookie_script()
    role, email = team_role(ws) or "guest", auth.login_email() if auth.auth_configured() else None
    if role == "rater":  # a personal rater link: the code, shown literally
        st.caption(f"Signed in as rater **{escape_markdown(st.session_state.get(auth.K_LINK_CODE) or '')}** "
                   "(personal link): Labeling only.")
    elif email:  # an st.login user: their e-mail, shown literally
        st.caption(f"Signed in as **{escape_markdown(email)}**, a team {role}.")
    else:
        st.caption(f"Signed in as a team {role}.")
    st.button("Sign out", on_click=sign_out, key="hosted.sign_out", type="tertiary")


@st.cache_resource(show_spinner="Generating the demo workspace (first start only)…")
def _generated_demo(root: str) -> bool:
    # deferred: core.demo pulls in numpy, the ground truth and gold packages (~120 modules, ~300 ms),
    # only needed when the hosted default workspace is served (every page imports this module)
    from core.demo import default_truth_path, demo_is_current, generate_demo, is_demo_workspace

    path = Path(root)
    if not is_demo_workspace(path) or demo_is_current(path):
        return False
    with deployment_setup():  # the deployer's setup, not a request: the demo may write it once
        generate_demo(path, truth_path=default_truth_path(path))
    return True


def ensure_demo() -> None:
    """On a fresh hosted container (Streamlit Community Cloud) the embedded demo workspace is
    generated once, before the first page; any other workspace is served as it is."""
    if workspace_dir() == DEFAULT_WORKSPACE.resolve():
        _generated_demo(str(workspace_dir()))


def view_allowed(action: str, key: Any) -> bool:
    """Whether this session may compute the bootstrap-heavy view ``key`` now: a view it computed
    before is free (cached); a new one spends an ``action`` token. When refused, says so."""
    if not hosted():
        return True
    seen: set = st.session_state.setdefault(K_SEEN_VIEWS, set())
    if (action, key) in seen:
        return True
    limited = take_token(action)
    if limited:
        st.warning(limited, icon=":material/hourglass_top:")
        return False
    seen.add((action, key))
    return True
