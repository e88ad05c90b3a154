"""Who may start work that calls a paid endpoint, and the confirmation with its pre-flight cost.

When sign-in is configured (an ``[auth]`` section in the secrets, i.e. ``st.login``), only a
signed-in admin may spend the API budget; without sign-in (a local workbench) anyone at the
keyboard may, after confirming the estimated cost.
"""

from __future__ import annotations

from core.labeling.identity import admin_codes, get_role
from core.ui import hosting
from core.ui.auth import auth_configured, login_admins, login_email
from core.workspace import Workspace


def paid_refusal(ws: Workspace) -> str | None:
    """None when this session may start a paid action, else why not (one line for the page).

    A demo never calls a paid endpoint and a team deployment needs an admin
    (:func:`core.ui.hosting.admin_refusal`); locally, with sign-in configured, an admin too.
    """
    if hosting.hosted():
        return hosting.admin_refusal(ws, "run a paid judge or model")
    if not auth_configured():
        return None
    email = (login_email() or "").strip().lower()
    if not email:
        return "Sign in as an admin to run a paid judge (sign-in is configured for this workbench)."
    if email in admin_codes() or email in login_admins():
        return None
    # deferred: heavy optional import (sqlalchemy, ~150 ms), only needed when a signed-in role is checked
    from core.labeling.store import open_store, store_exists

    role = get_role(open_store(ws.root), email) if email and store_exists(ws.root) else "rater"
    if role != "admin":
        return f"Only admins may run a paid judge; you are signed in as a {role}."
    return None


def cost_line(preflight: dict) -> str:
    """The pre-flight estimate in words (no markdown from data: model ids are escaped by callers).

    >>> cost_line({"to_judge": 12, "prompt_tokens": 3400, "completion_tokens": 1440, "cost_usd": 0.0013,
    ...            "model": "gpt-4o-mini"})
    '12 reviews to judge · about 3,400 prompt + 1,440 answer tokens · estimated $0.0013'
    """
    cost = preflight.get("cost_usd")
    money = "no known price for this model" if cost is None else f"estimated ${cost:,.4f}"
    return (f"{preflight['to_judge']:,} reviews to judge · about {preflight['prompt_tokens']:,} prompt + "
            f"{preflight['completion_tokens']:,} answer tokens · {money}")
