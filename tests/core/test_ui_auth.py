"""core/ui/auth.py: who is an admin by ``$WORKBENCH_ADMINS`` (only a signed-in ``st.login`` e-mail)."""

from __future__ import annotations

from core.labeling import identity
from core.ui import auth


def test_workbench_admins_make_a_login_an_admin_never_a_typed_code(store, monkeypatch):
    monkeypatch.setenv("WORKBENCH_ADMINS", " Boss@Example.org , chief@example.org")
    assert auth.login_admins() == {"boss@example.org", "chief@example.org"}
    assert auth.role_of(store, "boss@example.org", "login") == "admin"
    for source in ("query", "session", "cookie"):  # anyone can type an admin's e-mail as a rater code
        assert auth.role_of(store, "boss@example.org", source) == "rater"
    assert auth.role_of(store, "ana@example.org", "login") == "rater"
    identity.set_role(store, "ana@example.org", "adjudicator")  # the label store's roles still count
    assert auth.role_of(store, "ana@example.org", "login") == "adjudicator"
    monkeypatch.delenv("WORKBENCH_ADMINS")
    assert auth.login_admins() == set() and auth.role_of(store, "boss@example.org", "login") == "rater"
