"""The team mode's ``st.login`` sign-in in a real Chromium, against a local OpenID Connect provider.

``streamlit run`` gets an ``[auth]`` section from a secrets file in a temporary folder (the
``secrets.files`` option, through ``STREAMLIT_SECRETS_FILES``: nothing is written into the
checkout or the home folder) pointing at tests/oidc_server.py. The browser goes the whole way:
the app's Log in button, Streamlit's /auth/login, the provider's /authorize, Streamlit's
/oauth2callback (which redeems the code with the client secret and PKCE verifier and checks the
id_token's signature, issuer, audience, expiry and nonce), and back to the app, signed in.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import StreamlitServer, wait_ready
from tests.e2e.tour_helpers import Watch, wait_idle
from tests.oidc_server import OIDCServer

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("team_login")]
SHOTS = Path(os.environ.get("WORKBENCH_SCREENSHOTS", "/tmp/team-login-shots"))
MEMBER = {"email": "member@example.org", "name": "Mia Member"}
ADMIN = {"email": "Boss@Example.org", "name": "Bo Boss"}  # WORKBENCH_ADMINS lists it in lower case
CLIENT_SECRET, COOKIE_SECRET = secrets.token_urlsafe(16), secrets.token_hex(32)
LOGIN_SCREEN = "sign in to continue"
WORD_JOINER = "\u2060"  # md_escape breaks an e-mail address with it so that markdown does not link it


@pytest.fixture(scope="module")
def idp() -> Iterator[OIDCServer]:
    with OIDCServer(client_id="workbench-e2e", client_secret=CLIENT_SECRET) as server:
        yield server


@pytest.fixture(scope="module")
def app(small_demo, tmp_path_factory, idp) -> Iterator[StreamlitServer]:
    tmp = tmp_path_factory.mktemp("team-login")
    root = tmp / "ws"
    shutil.copytree(small_demo, root, ignore=shutil.ignore_patterns("runs", "jobs", "cache"))
    secrets_file = tmp / "secrets.toml"
    secrets_file.write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'  # Streamlit fills in its port
        f'cookie_secret = "{COOKIE_SECRET}"\n'
        f'client_id = "{idp.client_id}"\n'
        f'client_secret = "{CLIENT_SECRET}"\n'
        f'server_metadata_url = "{idp.metadata_url}"\n'
    )
    server = StreamlitServer(root, log_dir=tmp, extra_env={
        "WORKBENCH_MODE": "team", "STREAMLIT_SECRETS_FILES": str(secrets_file),
        "WORKBENCH_ADMINS": ADMIN["email"].lower(), "WORKBENCH_MODELS": "gpt-4o-mini",
        "WORKBENCH_ACCESS_CODE": "", "WORKBENCH_ADMIN_CODE": "",  # the login alone, no access-code form
    })
    idp.redirect_uris = [f"{server.url}/oauth2callback"]
    yield server
    server.stop()



@pytest.fixture(scope="module")
def outsider(chromium_browser):
    """One browser tab for the refused logins: each leaves it on the sign-in screen for the next."""
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


def _plain(text: str) -> str:
    """Text as read (the invisible word joiners md_escape puts into e-mail addresses dropped)."""
    return text.replace(WORD_JOINER, "")


def _checked(page) -> str:
    html = _plain(page.content())
    assert CLIENT_SECRET not in html
    assert page.get_by_test_id("stException").count() == 0, "a Streamlit exception is shown"
    assert "Traceback" not in html
    return html


def _login_screen(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("button", name="Log in").wait_for(timeout=30_000)
    wait_ready(page, LOGIN_SCREEN)
    assert page.get_by_label("Access code").count() == 0  # no access code is configured
    assert page.get_by_test_id("stSidebar").count() == 0  # nothing of the app before sign-in
    _checked(page)


def _log_in(page, app: StreamlitServer, idp: OIDCServer, user: dict[str, str], fault: str | None = None) -> None:
    idp.user, idp.fault = dict(user), fault
    if not (page.url.rstrip("/") == app.url and page.get_by_role("button", name="Log in").count()):
        _login_screen(page, app.url)
    with page.expect_navigation(url=lambda url: url.rstrip("/") == app.url, timeout=30_000):
        page.get_by_role("button", name="Log in").click()


def _models_offered(page) -> list[str]:
    """The options of the Runs page's Model select box (opened, read, closed)."""
    page.get_by_test_id("stSelectbox").filter(has_text="Model").first.locator("input").click()
    page.get_by_role("option").first.wait_for()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    page.get_by_role("option").first.wait_for(state="detached")  # closed: the next click goes to its target
    return options


def test_a_member_signs_in_through_the_provider_and_is_refused_admin_work(app, idp, page):
    watch = Watch(SHOTS)
    watch.attach(page)
    issued = idp.tokens_issued
    _log_in(page, app, idp, MEMBER)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Signed in as").wait_for(timeout=30_000)
    watch.check(page, "e2e-team-login-member-home", "See how benchmark ground truth")
    assert idp.tokens_issued == issued + 1
    assert "Signed in as member@example.org, a team member." in _plain(sidebar.inner_text())
    assert sidebar.locator("a").filter(has_text="example").count() == 0  # shown as text, not a mailto: link
    assert "boss@example.org" not in _checked(page).lower()

    page.goto(f"{app.url}/runs")  # a new session: Streamlit's signed identity cookie signs it in
    watch.check(page, "e2e-team-login-member-runs", "Launch a run")
    page.get_by_text("Only an admin may launch paid models").first.wait_for()
    assert "gpt-4o-mini" not in _models_offered(page)
    _checked(page)

    wait_idle(page)
    page.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="Log in").wait_for(timeout=30_000)
    assert idp.logouts >= 1  # RP-initiated logout went through the provider's end_session_endpoint
    _login_screen(page, f"{app.url}/runs")  # the identity cookie is gone: a reload stays signed out
    assert not [c for c in page.context.cookies() if c["name"].startswith("_streamlit_user")]
    assert page.get_by_text("Page not found").count() == 0  # a shared link to a page shows the sign-in
    watch.screenshot(page, "e2e-team-login-signed-out")
    assert not watch.errors, watch.errors


def test_an_admin_from_workbench_admins_gets_the_paid_models(app, idp, page):
    watch = Watch(SHOTS)
    watch.attach(page)
    _log_in(page, app, idp, ADMIN)  # back on the app with Streamlit's identity cookie set
    sidebar = page.get_by_test_id("stSidebar")
    page.goto(f"{app.url}/runs")
    watch.check(page, "e2e-team-login-admin-runs", "Launch a run")
    assert "Signed in as Boss@Example.org, a team admin." in _plain(sidebar.inner_text())
    assert "member@example.org" not in _checked(page)
    assert page.get_by_text("Only an admin may").count() == 0
    assert "gpt-4o-mini" in _models_offered(page)

    page.goto(f"{app.url}/label-review")  # the rater is the login e-mail, whatever ?rater= says
    wait_ready(page, "Signed in as")
    page.get_by_test_id("stButtonGroup").get_by_text("Raters", exact=True).click()
    watch.check(page, "e2e-team-login-admin-raters", "Grant a role")
    assert "Signed in as boss@example.org (admin)" in _plain(page.inner_text("body"))


@pytest.mark.parametrize("fault", ["wrong_key", "wrong_audience", "foreign_audience", "wrong_issuer", "expired",
                                   "wrong_nonce", "alg_none", "denied"])
def test_a_bad_id_token_or_a_refusal_leaves_the_user_signed_out(app, idp, outsider, fault):
    issued = idp.tokens_issued
    _log_in(outsider, app, idp, ADMIN, fault=fault)
    _assert_signed_out(outsider)
    assert idp.tokens_issued == issued + (fault != "denied")  # the code was redeemed, the id_token refused
    cookies = [c for c in outsider.context.cookies() if c["name"].startswith("_streamlit_user")]
    if fault == "foreign_audience":  # Authlib accepts it (azp names us); the app checks aud itself
        assert cookies
        outsider.get_by_text("That sign-in was not accepted").wait_for()
        outsider.context.clear_cookies()
    else:  # refused by Streamlit's callback: no identity cookie at all
        assert not cookies
        assert outsider.get_by_text("That sign-in was not accepted").count() == 0


def _assert_signed_out(page) -> None:
    wait_ready(page, LOGIN_SCREEN)
    page.get_by_role("button", name="Log in").wait_for()
    assert page.get_by_test_id("stSidebar").count() == 0
    assert "boss@example.org" not in _checked(page).lower()


def _attacker_code(idp: OIDCServer, app: StreamlitServer) -> str:
    """A real code the provider minted for the attacker's own login (no PKCE), outside the browser."""
    idp.user = dict(ADMIN)
    query = urllib.parse.urlencode({"client_id": idp.client_id, "redirect_uri": f"{app.url}/oauth2callback",
                                    "response_type": "code", "scope": "openid email", "state": "attacker"})

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003 - keep the 302
            return None

    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.build_opener(NoRedirect).open(f"{idp.issuer}/authorize?{query}")
    return _query(answer.value.headers["Location"])["code"]


def _query(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


@pytest.mark.parametrize("swap", ["forged_state", "injected_code"])
def test_a_callback_this_login_did_not_ask_for_is_refused(app, idp, outsider, swap):
    """The browser starts a real login, but the answer it brings back to /oauth2callback is the
    attacker's code with a state of theirs (login CSRF: Streamlit finds no such state in this
    browser's session and redeems nothing) or with this login's state (code injection: the
    provider refuses the code, which was minted without this login's PKCE challenge)."""
    code = _attacker_code(idp, app)

    def replace(route) -> None:  # Playwright routes no redirect, so take the login's own answer
        answer = route.fetch(max_redirects=0)  # sets this login's state in the session cookie
        state = _query(answer.headers["location"])["state"] if swap == "injected_code" else "attacker"
        forged = urllib.parse.urlencode({"code": code, "state": state})
        route.fulfill(response=answer, headers={**answer.headers, "location": f"{app.url}/oauth2callback?{forged}"})

    issued, refused = idp.tokens_issued, idp.token_refusals
    outsider.route(f"{app.url}/auth/login*", replace)
    try:
        _log_in(outsider, app, idp, MEMBER)
        _assert_signed_out(outsider)
    finally:
        outsider.unroute(f"{app.url}/auth/login*")
    assert idp.tokens_issued == issued
    assert idp.token_refusals == refused + (swap == "injected_code")
    if swap == "injected_code":
        assert idp.refusals[-1] == "code_verifier"
    assert not [c for c in outsider.context.cookies() if c["name"].startswith("_streamlit_user")]


def test_the_server_log_holds_no_secret(app, idp, outsider):
    """The log names a refused login, never the client or cookie secret. A refused login is made here:
    under xdist other modules' tests may run between this module's, and pytest then starts the
    module's server anew, so the logins of the tests above need not be in this server's log."""
    _log_in(outsider, app, idp, ADMIN, fault="wrong_key")
    _assert_signed_out(outsider)
    log, deadline = "", time.monotonic() + 20
    while "OAuth token exchange failed" not in log and time.monotonic() < deadline:
        time.sleep(0.2)
        log = Path(app.log.name).read_text(encoding="utf-8")
    assert "OAuth token exchange failed" in log  # the refused login was logged
    assert CLIENT_SECRET not in log and COOKIE_SECRET not in log
