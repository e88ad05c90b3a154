"""Sign-in for the Labeling and Label review pages: who is rating, and what they may see.

Identity rules live in :mod:`core.labeling.identity` and :mod:`core.labeling.links`; this module
is their Streamlit glue (session keys, the sign-in form, the cookie scripts, the query parameters)
shared by both pages and the frame.

Raters are who they say they are. Locally and in the demo a rater code is typed (an identity,
not a secret). In the team mode a typed code (``?rater=``, the form, the cookie) is never an
identity: a rater is their ``st.login`` e-mail or the code of their personal link
(``/labeling?key=TOKEN``, :mod:`core.labeling.links`). A link signs the browser in for Labeling
only (and Label review when its rater is an adjudicator or admin): :func:`navigation` gives such
a session those pages and nothing else. The token moves from the URL into a cookie at once, so it
does not stay in the address bar or the history; the session keeps the verified code, so revoking
a link ends it at the next session.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from core.base.settings import deployment_mode, env
from core.labeling import identity, links

if TYPE_CHECKING:
    from core.labeling.store import LabelStore

# Session keys shared by both labeling pages (page-prefixed constants, STYLE §6).
K_RATER, K_ROLE, K_SIGNED_OUT = "labeling.rater", "labeling.role", "labeling.signed_out"
K_COOKIE_SET, K_CODE_INPUT = "labeling.cookie_set", "labeling.code_input"
LABELING_URL_PATHS = ("labeling", "label-review")
# The verified code of this session's personal link (set only by link_code, after the store said so).
K_LINK_CODE, K_LINK_COOKIE, K_LINK_ERROR = "rater_link.code", "rater_link.set_cookie", "rater_link.error"
K_LINK_SIGNED_OUT = "rater_link.signed_out"
LINK_COOKIE, LINK_COOKIE_DAYS = "workbench_rater_key", 30


def team_mode() -> bool:
    """True in the team deployment, where only a login or a personal link identifies a rater."""
    return deployment_mode() == "team"


def link_code(workspace_root: Path) -> str | None:
    """The rater code of this session's personal link (team mode only), verified once per session.

    The token comes from ``?key=`` (then it moves into a cookie and leaves the URL) or the cookie.
    A token the store does not know (mistyped, revoked, its code retired) signs nobody in and
    leaves a one-line reason for the sign-in screen.
    """
    if not team_mode() or st.session_state.get(K_LINK_SIGNED_OUT):
        return None
    code = st.session_state.get(K_LINK_CODE)
    if code:
        return code
    from_url = st.query_params.get(links.QUERY_PARAM)
    token = from_url or st.context.cookies.get(LINK_COOKIE)
    if not isinstance(token, str) or not token:
        return None
    # deferred: heavy optional import (sqlalchemy), only when a link is checked
    from core.labeling.store import open_store, store_exists

    code = links.rater_for_token(open_store(workspace_root), token) if store_exists(workspace_root) else None
    if from_url:
        st.query_params.pop(links.QUERY_PARAM, None)  # not left in the address bar or the history
    if code is None:
        st.session_state[K_LINK_ERROR] = ("This rater link is not valid: it was revoked, its rater code retired, "
                                          "or it is incomplete. Ask an admin for a new one.")
        return None
    st.session_state.update({K_LINK_CODE: code, K_LINK_ERROR: None})
    if from_url:
        st.session_state[K_LINK_COOKIE] = token
    return code


def link_reviewer(workspace_root: Path) -> bool:
    """Whether this session's personal-link rater is an adjudicator or admin (opens Label review too)."""
    code = st.session_state.get(K_LINK_CODE)
    if not code:
        return False
    # deferred: heavy optional import (sqlalchemy), only when a link is checked
    from core.labeling.store import open_store

    return identity.get_role(open_store(workspace_root), code) in identity.REVIEW_ROLES


def forget_link() -> None:
    """Sign this session out of its personal link and clear the link cookie on the next run."""
    st.session_state.pop(K_LINK_CODE, None)
    st.session_state[K_LINK_SIGNED_OUT] = True
    st.session_state[K_LINK_COOKIE] = ""


def link_cookie_script() -> None:
    """Write (or clear) the link cookie that :func:`link_code` or :func:`forget_link` asked for.

    Written on every run of the session, not once: a run that :func:`st.rerun` cuts short (an
    adjudicator's first run does) replaces its elements before the browser runs their scripts.
    """
    token = st.session_state.get(K_LINK_COOKIE)
    if token is None:
        return
    age = LINK_COOKIE_DAYS * 86400 if token else 0
    value = token if token and links.is_token(token) else ""  # URL-safe letters only: nothing else is written
    st.html(f"<script>document.cookie = '{LINK_COOKIE}={value}; path=/; max-age={age}; SameSite=Strict';</script>",
            unsafe_allow_javascript=True)


def login_email() -> str | None:
    """The signed-in user's e-mail when ``st.login`` is configured and used, and its id_token was
    issued to this app (:func:`issued_to_us`)."""
    try:
        email = st.user.get("email") if st.user.is_logged_in else None
        return email if isinstance(email, str) and issued_to_us() else None
    except Exception:  # noqa: BLE001 - st.login not configured
        return None


def issued_to_us() -> bool:
    """Whether the signed-in user's id_token names this app's ``client_id`` in its ``aud`` claim.

    OpenID Connect Core §3.1.3.7 requires it; Authlib (which Streamlit's ``/oauth2callback`` uses)
    accepts a token for another audience when its ``azp`` names this client. ``st.user`` carries
    the id_token's claims and the provider's name, so the app checks it here.
    """
    section = st.secrets.get("auth") or {}
    provider = str(st.user.get("provider") or "default")
    client_id = (section.get(provider) or {}).get("client_id") or (
        section.get("client_id") if provider == "default" else None)
    aud = st.user.get("aud")
    return bool(client_id) and client_id in (aud if isinstance(aud, list) else [aud])


def refused_login() -> bool:
    """True when the provider signed someone in whom the app does not accept (no e-mail, or an
    id_token issued to another app)."""
    try:
        return bool(st.user.is_logged_in) and login_email() is None
    except Exception:  # noqa: BLE001 - st.login not configured
        return False


def auth_configured() -> bool:
    """True when ``.streamlit/secrets.toml`` has an ``[auth]`` section (``st.login`` works)."""
    try:
        return "auth" in st.secrets
    except Exception:  # noqa: BLE001 - no secrets file
        return False


def login_admins() -> set[str]:
    """The lower-cased e-mails of ``$WORKBENCH_ADMINS``: ``st.login`` users who are admins."""
    return {a.strip().lower() for a in (env("WORKBENCH_ADMINS") or "").split(",") if a.strip()}


def role_of(store: LabelStore, code: str, source: str) -> str:
    """The labeling role of ``code``: a signed-in (``source == "login"``) e-mail of
    ``$WORKBENCH_ADMINS`` is an admin; a typed code never is by that list (anyone can type it)."""
    if source == "login" and code.strip().lower() in login_admins():
        return "admin"
    return identity.get_role(store, code)


def resolve() -> tuple[str, str] | None:
    """(code, source) of whoever is rating, or None (see :func:`identity.resolve_identity`).

    In the team mode only a login (``login``) or the session's verified personal link (``link``)
    counts: a ``?rater=`` code, a typed code or a rater cookie is ignored.
    """
    if team_mode():
        email = login_email()
        if email:
            return email.strip().lower(), "login"
        code = st.session_state.get(K_LINK_CODE)
        return (code, "link") if code else None
    signed_out = st.session_state.get(K_SIGNED_OUT, False)
    return identity.resolve_identity(
        login_email=login_email(), query_code=st.query_params.get(identity.QUERY_PARAM),
        session_code=st.session_state.get(K_RATER),
        cookie_code=None if signed_out else st.context.cookies.get(identity.COOKIE_NAME),
    )


def remember(code: str, source: str) -> None:
    """Keep a typed code in the link (bookmarkable) and, once per session, in a cookie."""
    if source in ("login", "link"):
        return
    st.query_params[identity.QUERY_PARAM] = code
    if not st.session_state.get(K_COOKIE_SET):
        st.html(identity.cookie_script(code), unsafe_allow_javascript=True)  # validated code only
        st.session_state[K_COOKIE_SET] = True


def sign_in(store: LabelStore) -> tuple[str, str, str] | None:
    """(code, source, role) of the signed-in rater, registering them once per session; else the form."""
    resolved = resolve()
    if resolved is None:
        if st.session_state.get(K_SIGNED_OUT):
            st.html(identity.cookie_script(None), unsafe_allow_javascript=True)  # forget the old code
        sign_in_form()
        return None
    code, source = resolved
    if st.session_state.get(K_RATER) != code or K_ROLE not in st.session_state:
        try:
            me = identity.register_rater(store, code, source=source if source in ("login", "link") else "session")
        except ValueError as exc:
            st.session_state.pop(K_RATER, None)
            st.query_params.pop(identity.QUERY_PARAM, None)
            st.session_state[K_SIGNED_OUT] = True
            st.error(str(exc))
            sign_in_form()
            return None
        code = me.code
        role = role_of(store, code, source)
        st.session_state.update({K_RATER: code, K_ROLE: role, K_COOKIE_SET: False})
        if role in identity.REVIEW_ROLES:
            st.rerun()  # the frame drew the sidebar before the role was known: adjudicators get its controls
    remember(code, source)
    return code, source, st.session_state[K_ROLE]


def sign_in_form() -> None:
    """The rater-code form (and the Log in button when ``st.login`` is configured); in the team
    mode no code can be typed: a rater opens their personal link or logs in."""
    if team_mode():
        st.info("In this team workbench you rate as yourself: open your personal rater link (an admin creates "
                "it on Label review → Raters, or with `workbench labels link CODE`)"
                + (" or log in." if auth_configured() else ".") + " A typed rater code is not accepted here.",
                icon=":material/badge:")
        if auth_configured():
            st.button("Log in", on_click=st.login, type="primary", key="labeling.login")
        return
    st.write("Enter your rater code once. It stays in this page's link (bookmark it) and in a cookie.")
    if auth_configured():
        st.button("Log in", on_click=st.login, type="primary", key="labeling.login")
    with st.form("labeling.sign_in", border=False):
        st.text_input("Rater code", key=K_CODE_INPUT, placeholder="e.g. ana", max_chars=64)
        if st.form_submit_button("Start rating", type="primary", key="labeling.start"):
            code = st.session_state.get(K_CODE_INPUT, "")
            if not identity.is_valid_code(code):
                st.error(f"Invalid rater code {code!r}: use 2-64 letters, digits or _ . @ + -.")
            else:
                st.session_state[K_RATER] = identity.check_code(code)
                st.session_state.pop(K_ROLE, None)
                st.session_state[K_COOKIE_SET] = False
                st.session_state[K_SIGNED_OUT] = False
                st.rerun()


def sign_out() -> None:
    """Forget the rater of this session (the next run shows the form and clears the cookie)."""
    for key in (K_RATER, K_ROLE, K_COOKIE_SET):
        st.session_state.pop(key, None)
    st.query_params.pop(identity.QUERY_PARAM, None)
    st.session_state[K_SIGNED_OUT] = True


def workspace_controls_visible(url_path: str) -> bool:
    """Whether the sidebar shows the workspace and dataset controls on the page at ``url_path``.

    Raters do not see them: on the labeling pages they are shown only to a signed-in adjudicator
    or admin, and a signed-in rater does not see them anywhere.
    """
    role = st.session_state.get(K_ROLE)
    if role is not None and role not in identity.REVIEW_ROLES:
        return False
    return url_path not in LABELING_URL_PATHS or role in identity.REVIEW_ROLES


def navigation(pages: tuple, *, rater_only: bool, reviewer: bool) -> object:
    """The top navigation: every page, or for a rater signed in by their link (``rater_only``)
    Labeling only (and Label review for a ``reviewer``), the other pages' addresses kept as hidden
    pages that say so (a shared link shows why, not "Page not found")."""
    allowed = {"labeling"} | ({"label-review"} if reviewer else set())
    sections: dict[str, list] = {}
    for spec in pages:
        if rater_only and spec.url_path not in allowed:
            # the default page answers "/" (Streamlit ignores its url_path): it opens Labeling
            target = _rater_home if spec.default else _not_for_raters
            sections.setdefault(spec.section, []).append(st.Page(
                target, title=spec.title, url_path=spec.url_path, visibility="hidden", default=spec.default))
            continue
        sections.setdefault(spec.section, []).append(
            st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path, default=spec.default))
    return st.navigation(sections, position="top")


def _rater_home() -> None:
    st.switch_page("app_pages/labeling.py")


def _not_for_raters() -> None:
    st.title("Labeling only")
    st.info("Your personal rater link opens Labeling (and Label review for adjudicators), nothing else.",
            icon=":material/lock:")
    st.page_link("app_pages/labeling.py", label="Go to Labeling", icon=":material/thumbs_up_down:")
