"""Rater identity and roles.

Who is rating, in order of precedence (the page asks :func:`resolve_identity`):

1. the signed-in user when ``st.login`` is configured (``st.user.is_logged_in``): their e-mail;
2. the ``rater`` query parameter (``?rater=ana``): a bookmarkable link that survives reloads,
   new tabs opened from it and server restarts;
3. the code kept in the session (set once per browser session);
4. the ``workbench_rater`` cookie, written by the page with a one-line script when the code is
   entered, so a new tab without the query parameter is still the same rater.

A code is an identity, not a secret: without ``st.login`` anybody can type anybody's code. Deploy
with ``st.login`` (or behind an authenticating proxy) where that matters. Roles are ``rater``
(default), ``adjudicator`` (may use the review page and record consensus) and ``admin`` (also
grants roles). ``$WORKBENCH_LABEL_ADMINS`` (comma-separated codes) makes codes admins on first use.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.base.settings import env, require_writable

if TYPE_CHECKING:
    import polars as pl

    from core.labeling.store import LabelStore

COOKIE_NAME = "workbench_rater"
QUERY_PARAM = "rater"
COOKIE_MAX_AGE = 400 * 24 * 3600  # browsers cap cookie lifetime at 400 days
MODEL_RATER_PREFIX = "llm:"
_CODE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{1,63}")
_SHORT_CODE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")  # stored codes may be 1 character (imports)
_STORED_CODE_RE = re.compile(r"[^\s<>\"`\\]{1,200}")  # e-mails of signed-in users, llm:org/model:tag
REVIEW_ROLES = ("adjudicator", "admin")


@dataclass(frozen=True)
class Identity:
    """A resolved rater: their code, where it came from and their role."""

    code: str
    source: str  # "login" | "query" | "session" | "cookie"
    role: str = "rater"

    @property
    def can_review(self) -> bool:
        """Adjudicators and admins may open the review page."""
        return self.role in REVIEW_ROLES


def check_code(code: str | None) -> str:
    """Validate a rater code typed by a person (2-64 letters, digits, ``_ . @ + -``).

    >>> check_code(" ana ")
    'ana'
    """
    code = code.strip() if isinstance(code, str) else ""
    if not _CODE_RE.fullmatch(code):
        raise ValueError(
            f"invalid rater code {code!r}: use 2-64 letters, digits or _ . @ + -, starting with a letter or digit"
        )
    return code


def check_stored_code(code: object) -> str:
    """Validate any code stored as a rater: a typed code (:func:`check_code`), a signed-in user's
    e-mail or an imported model rater ``llm:MODEL`` (≤ 200 printable characters, no spaces,
    quotes or markup). Every way into the store (pages, ``labels role``, imports, the API of
    :mod:`core.labeling.assignment`) goes through this.

    >>> check_stored_code("llm:openai/gpt-oss-20b:free")
    'llm:openai/gpt-oss-20b:free'
    >>> check_stored_code("<b>x</b>")
    Traceback (most recent call last):
    ...
    ValueError: invalid rater code '<b>x</b>': use 1-64 letters, digits or _ . @ + - (an e-mail or llm:MODEL up to 200)
    """
    if isinstance(code, str) and (_SHORT_CODE_RE.fullmatch(code) or (
            (code.startswith(MODEL_RATER_PREFIX) or "@" in code) and _STORED_CODE_RE.fullmatch(code)
            and code.isprintable())):
        return code
    shown = repr(code[:80] + "…" if isinstance(code, str) and len(code) > 80 else code)
    raise ValueError(f"invalid rater code {shown}: use 1-64 letters, digits or _ . @ + - (an e-mail or llm:MODEL "
                     "up to 200)")


def is_valid_code(code: str | None) -> bool:
    """True when :func:`check_code` accepts ``code``."""
    try:
        check_code(code)
    except ValueError:
        return False
    return True


def resolve_identity(
    *, login_email: str | None, query_code: str | None, session_code: str | None, cookie_code: str | None
) -> tuple[str, str] | None:
    """Pick the rater code from the available sources (precedence in the module docstring).

    Returns:
        ``(code, source)`` or None when the person has to enter a code. Invalid codes are ignored.

    >>> resolve_identity(login_email=None, query_code="bad code", session_code=None, cookie_code="ana")
    ('ana', 'cookie')
    """
    if isinstance(login_email, str) and login_email.strip():
        return login_email.strip().lower(), "login"
    for code, source in ((query_code, "query"), (session_code, "session"), (cookie_code, "cookie")):
        if isinstance(code, str) and is_valid_code(code):
            return code.strip(), source
    return None


def cookie_script(code: str | None) -> str:
    """A ``<script>`` that stores (or, with None, forgets) the rater code in a cookie.

    The code is validated and JSON-encoded, so nothing from the URL reaches the script verbatim.
    """
    if code is None:
        return f"<script>document.cookie = '{COOKIE_NAME}=; path=/; max-age=0; SameSite=Lax';</script>"
    value = json.dumps(check_code(code))
    return (
        "<script>document.cookie = "
        f"'{COOKIE_NAME}=' + encodeURIComponent({value}) + '; path=/; max-age={COOKIE_MAX_AGE}; SameSite=Lax';"
        "</script>"
    )


def admin_codes() -> set[str]:
    """Codes named in ``$WORKBENCH_LABEL_ADMINS`` (comma-separated)."""
    return {c.strip() for c in (env("WORKBENCH_LABEL_ADMINS") or "").split(",") if c.strip()}


def kind_of(code: str) -> str:
    """``model`` for imported LLM raters (``llm:…``), else ``human``."""
    return "model" if code.startswith(MODEL_RATER_PREFIX) else "human"


def ensure_rater(conn, store: LabelStore, code: str, *, role: str | None = None, kind: str | None = None) -> None:
    """Insert ``code`` if it is new (inside the caller's transaction); never changes a role."""
    if code in store.known_raters:
        return
    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when the label store is used
    from core.labeling.store import catalog as sql

    # deferred: core.labeling.store pulls in sqlalchemy (~350 ms), only needed when ensure_rater() runs
    from core.labeling.store.tables import RATER_KINDS

    check_stored_code(code)
    if sql.rater_exists(conn, code):
        store.known_raters.add(code)  # only codes seen committed are cached
        return
    kind = kind or kind_of(code)
    if kind not in RATER_KINDS:
        raise ValueError(f"invalid rater kind {kind!r}; valid: {', '.join(RATER_KINDS)}")
    role = role or ("admin" if code in admin_codes() else "rater")
    sql.insert_rater_if_new(conn, store, code, role=role, kind=kind)


def register_rater(store: LabelStore, code: str, *, source: str = "session") -> Identity:
    """Make sure a person's code exists (role ``rater`` unless already set) and return it.

    Codes typed by a person are validated with :func:`check_code`; a signed-in user's e-mail
    (``source="login"``) only has to be non-blank and at most 200 characters; the code of a
    personal link (``source="link"``) is any stored code.
    """
    if source == "login":
        code = (code or "").strip().lower()
        if not code or len(code) > 200:
            raise ValueError("the signed-in user has no usable e-mail address")
    elif source == "link":  # a code an admin made a personal link for (checked when it was stored)
        code = check_stored_code(code)
    else:
        code = check_code(code)
    if code in retired_codes(store):
        raise ValueError(f"the rater code {code!r} was retired by an admin; use your own code")
    with store.write() as conn:
        ensure_rater(conn, store, code)
    return Identity(code, source, get_role(store, code))


def retire_rater(store: LabelStore, code: str, *, by: str, reason: str = "") -> None:
    """Retire ``code`` (e.g. a mistyped one): it cannot sign in again; its ratings stay, marked.

    Raises:
        ValueError: unknown code, or an admin retiring themselves.
    """
    require_writable("retire a rater code")
    if code == by:
        raise ValueError("you cannot retire your own code")
    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when the label store is used
    from core.labeling.store import catalog as sql

    if not sql.retire_code(store, code, by=by, reason=reason.strip()):
        raise ValueError(f"no rater {code!r}")


def retired_codes(store: LabelStore) -> set[str]:
    """Codes an admin retired."""
    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when the label store is used
    from core.labeling.store import catalog as sql

    return sql.retired_rater_codes(store)


def get_role(store: LabelStore, code: str) -> str:
    """The role of ``code`` (``rater`` for an unknown code; admins from the environment)."""
    if code in admin_codes():
        return "admin"
    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when the label store is used
    from core.labeling.store import catalog as sql

    return sql.rater_role(store, code) or "rater"


def set_role(store: LabelStore, code: str, role: str) -> None:
    """Give ``code`` a role (creating the rater if needed).

    Raises:
        ValueError: unknown role.
    """
    require_writable("change a rater's role")
    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when the label store is used
    from core.labeling.store import catalog as sql

    # deferred: core.labeling.store pulls in sqlalchemy (~350 ms), only needed when set_role() runs
    from core.labeling.store.tables import ROLES

    if role not in ROLES:
        raise ValueError(f"invalid role {role!r}; valid: {', '.join(ROLES)}")
    check_stored_code(code)
    with store.write() as conn:
        ensure_rater(conn, store, code, role=role)
        sql.update_rater_role(conn, code, role)


def list_raters(store: LabelStore) -> pl.DataFrame:
    """Every rater with role, kind, number of ratings (all projects) and retirement (null if active)."""
    import polars as pl  # noqa: F811 - imported here: the assignment path does not need polars

    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when the label store is used
    from core.labeling.store import catalog as sql

    rows = sql.rater_rows(store)
    schema = {"code": pl.String, "role": pl.String, "kind": pl.String, "created_at": pl.Datetime, "n_ratings": pl.Int64,
              "retired_at": pl.Datetime, "retired_by": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")
