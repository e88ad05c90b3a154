"""Personal rater links: in the team mode, the one way a rater without a login signs in.

An admin creates a link for a rater code (``labels link CODE`` or the Label review page); its
token is 32 random URL-safe characters (192 bits, :func:`secrets.token_urlsafe`), shown once and
stored only as its SHA-256 (a token of that entropy needs no slow hash). Opening
``/labeling?key=TOKEN`` signs the browser in as that rater, for Labeling only (and Label review
when the rater is an adjudicator or admin). A link stops working when it is revoked or its code
is retired; a typed ``?rater=`` code is never an identity in the team mode.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import TYPE_CHECKING

from core.base.settings import require_writable
from core.labeling.identity import check_stored_code, ensure_rater

if TYPE_CHECKING:
    from core.labeling.store import LabelStore

QUERY_PARAM = "key"
_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{32,64}")


def hash_token(token: str) -> str:
    """The SHA-256 (hex) under which a link token is stored.

    >>> hash_token("a" * 32)[:12]
    '3ba3f5f43b92'
    """
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def create_link(store: LabelStore, code: str, *, by: str) -> str:
    """A new sign-in token for ``code`` (created as a rater if new); returned once, stored hashed."""
    require_writable("create a rater link")
    code = check_stored_code(code)
    token = secrets.token_urlsafe(24)
    # deferred: heavy optional import (sqlalchemy), only needed when the label store is used
    from core.labeling.store import catalog

    with store.write() as conn:
        ensure_rater(conn, store, code)
    catalog.insert_rater_link(store, hash_token(token), code, by=by)
    return token


def is_token(text: str) -> bool:
    """Whether ``text`` has the shape of a link token (URL-safe letters, 32-64 of them)."""
    return bool(_TOKEN_RE.fullmatch(text))


def rater_for_token(store: LabelStore, token: str | None) -> str | None:
    """The rater code a token signs in, or None (malformed, unknown, revoked, or its code retired)."""
    if not isinstance(token, str) or not _TOKEN_RE.fullmatch(token):
        return None
    # deferred: heavy optional import (sqlalchemy), only needed when the label store is used
    from core.labeling.store import catalog

    return catalog.rater_of_link(store, hash_token(token))


def revoke_links(store: LabelStore, code: str) -> int:
    """Revoke every link of ``code``; returns how many were active."""
    require_writable("revoke rater links")
    # deferred: heavy optional import (sqlalchemy), only needed when the label store is used
    from core.labeling.store import catalog

    return catalog.revoke_rater_links(store, code, store.clock())


def list_links(store: LabelStore) -> list[dict[str, object]]:
    """Every link (code, created_at, created_by, revoked_at), newest first; never a token or hash."""
    # deferred: heavy optional import (sqlalchemy), only needed when the label store is used
    from core.labeling.store import catalog

    return [{"code": c, "created_at": at, "created_by": by, "revoked_at": rv}
            for c, at, by, rv in catalog.rater_link_rows(store)]
