"""Who this session is on a shared server, and which method runs it is shown.

The Runs page, Results, the Ground truth page's Runs tab and Home list method runs; in the demo mode
each of them lists only the runs shipped with the workspace (no visitor's) and this visitor's own,
through :func:`visible` (one rule: :func:`core.runs.owners.visible_runs`). The team and local
modes list every run.
"""

from __future__ import annotations

from core.runs import owners
from core.ui import hosting, visitor
from core.workspace import Workspace

K_VISITOR = visitor.K_VISITOR


def who(ws: Workspace) -> str:
    """The owner of the runs this session launches: ``visitor:TOKEN`` in the demo mode (one random
    token per browser, kept in a cookie: :mod:`core.ui.visitor`), ``user:EMAIL`` (or ``team:ROLE``)
    in the team mode, else ``local``."""
    current = hosting.mode()
    if current == "demo":
        return f"{owners.VISITOR}{visitor.token()}"
    if current == "team":
        email = hosting.auth.login_email()
        return f"user:{email.strip().lower()}" if email else f"team:{hosting.team_role(ws) or 'guest'}"
    return "local"


def visible(ws: Workspace, run_ids: list[str]) -> list[str]:
    """The runs of ``run_ids`` this session is shown, in the same order: in the demo mode, not other
    visitors' runs (an admin sees all); every run in the other modes."""
    if hosting.mode() != "demo":
        return list(run_ids)
    return owners.visible_runs(ws, run_ids, who(ws), admin=hosting.is_admin(ws))
