"""Sign-in for the Labeling and Label review pages: who is rating, and what they may see.

Identity rules live in :mod:`core.labeling.identity`; this module is their Streamlit glue (session
keys, the sign-in form, the cookie script, the query parameter) shared by both pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from core.labeling import identity
from core.settings import env

if TYPE_CHECKING:
    from core.labeling.store import LabelStore

# Session keys shared by both labeling pages (page-prefixed constants, STYLE §6).
K_RATER, K_ROLE, K_SIGNED_OUT = "labeling.rater", "labeling.role", "labeling.signed_out"
K_COOKIE_SET, K_CODE_INPUT = "labeling.cookie_set", "labeling.code_input"
LABELING_URL_PATHS = ("labeling", "label-review")


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
    """(code, source) of whoever is rating, or None (see :func:`identity.resolve_identity`)."""
    signed_out = st.session_state.get(K_SIGNED_OUT, False)
    return identity.resolve_identity(
        login_email=login_email(), query_code=st.query_params.get(identity.QUERY_PARAM),
        session_code=st.session_state.get(K_RATER),
        cookie_code=None if signed_out else st.context.cookies.get(identity.COOKIE_NAME),
    )


def remember(code: str, source: str) -> None:
    """Keep a typed code in the link (bookmarkable) and, once per session, in a cookie."""
    if source == "login":
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
            me = identity.register_rater(store, code, source="login" if source == "login" else "session")
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
    """The rater-code form (and the Log in button when ``st.login`` is configured)."""
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
