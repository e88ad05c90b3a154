"""A local OpenID Connect provider for tests (no internet): what ``st.login`` talks to.

It serves the discovery document (``/.well-known/openid-configuration``), ``/authorize`` (which
signs in ``user`` without asking and redirects to the registered ``redirect_uri`` with a one-time
code and the client's ``state``), ``/token`` (the code, the client's id and secret and its PKCE
verifier → an RS256 ``id_token`` and an access token), ``/jwks``, ``/userinfo`` and ``/logout``
(RP-initiated logout: back to ``post_logout_redirect_uri``). The signing key is an RSA key made at
start; the id_token is built and signed here with ``cryptography`` alone, so the relying party's
Authlib/joserfc check is not checked against itself.

``fault`` spoils the next login only (one ``/authorize``): ``wrong_key`` (signed by another key
under the published key id), ``wrong_audience``, ``foreign_audience`` (``aud`` another client,
``azp`` this one), ``wrong_issuer``, ``expired``, ``wrong_nonce``,
``alg_none`` (an unsigned token) or ``denied`` (``/authorize`` answers ``error=access_denied``).
Counters: ``authorizations``, ``tokens_issued``, ``token_refusals`` (with ``refusals`` naming
why), ``logouts``.

Use it as a context manager::

    with OIDCServer(client_id="app", client_secret="s3cret") as idp:
        idp.redirect_uris = ["http://127.0.0.1:8501/oauth2callback"]
        idp.user = {"email": "ana@example.org", "name": "Ana"}
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.loopback_server import LoopbackServer

FAULTS = ("wrong_key", "wrong_audience", "foreign_audience", "wrong_issuer", "expired", "wrong_nonce", "alg_none", "denied")
CODE_TTL_S = 60


def b64url(data: bytes) -> str:
    """Unpadded base64url (RFC 7515 §2).

    >>> b64url(b"\\xfb\\xff")
    '-_8'
    """
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int_b64(n: int) -> str:
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def sign_jwt(claims: dict[str, Any], key: rsa.RSAPrivateKey | None, kid: str) -> str:
    """A compact JWS of ``claims``: RS256 under ``key``, or ``alg: none`` (unsigned) when ``key`` is None."""
    header = {"alg": "RS256" if key else "none", "typ": "JWT", "kid": kid}
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    if key is None:
        return signing_input + "."
    signature = key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64url(signature)}"


def at_hash(access_token: str) -> str:
    """The id_token's ``at_hash``: the left half of SHA-256 of the access token (OIDC Core §3.1.3.6)."""
    return b64url(hashlib.sha256(access_token.encode("ascii")).digest()[:16])


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    nonce: str | None
    challenge: str | None
    user: dict[str, Any]
    fault: str | None
    issued: float = field(default_factory=time.time)


class OIDCServer(LoopbackServer):
    """The provider: start it, register the relying party's ``redirect_uris``, choose ``user``."""

    thread_name = "oidc-server"

    def __init__(self, client_id: str, client_secret: str) -> None:
        self.client_id, self.client_secret = client_id, client_secret
        self.redirect_uris: list[str] = []
        self.user: dict[str, Any] = {"email": "member@example.org", "name": "A Member"}
        self.fault: str | None = None
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(4)
        self.authorizations = self.tokens_issued = self.token_refusals = self.logouts = 0
        self.refusals: list[str] = []
        self._codes: dict[str, _Grant] = {}
        self._access: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    # -- lifecycle (LoopbackServer) --------------------------------------------------------------
    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler(self)

    @property
    def issuer(self) -> str:
        return self.origin

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    # -- documents --------------------------------------------------------------------------------
    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "jwks_uri": f"{self.issuer}/jwks",
            "end_session_endpoint": f"{self.issuer}/logout",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["iss", "sub", "aud", "exp", "iat", "nonce", "email", "email_verified", "name"],
        }

    def jwks(self) -> dict[str, Any]:
        numbers = self.key.public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.kid,
                          "n": _int_b64(numbers.n), "e": _int_b64(numbers.e)}]}

    # -- the flow ---------------------------------------------------------------------------------
    def authorize(self, query: dict[str, str]) -> tuple[int, str]:
        """(status, Location or error text) of an authorization request."""
        redirect_uri = query.get("redirect_uri", "")
        if query.get("client_id") != self.client_id or redirect_uri not in self.redirect_uris:
            return 400, "unknown client or redirect_uri"  # never redirect to an unregistered URI
        with self._lock:
            self.authorizations += 1
            fault, self.fault = self.fault, None
        params: dict[str, str] = {}
        if query.get("state"):
            params["state"] = query["state"]
        if fault == "denied":
            params["error"] = "access_denied"
        elif query.get("response_type") != "code" or "openid" not in query.get("scope", "").split():
            params["error"] = "invalid_request"
        elif query.get("code_challenge") and query.get("code_challenge_method") != "S256":
            params["error"] = "invalid_request"
        else:
            code = secrets.token_urlsafe(24)
            with self._lock:
                self._codes[code] = _Grant(self.client_id, redirect_uri, query.get("nonce"),
                                           query.get("code_challenge"), dict(self.user), fault)
            params["code"] = code
        return 302, f"{redirect_uri}?{urllib.parse.urlencode(params)}"

    def _refuse(self, why: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.token_refusals += 1
            self.refusals.append(why)
        return 400, {"error": "invalid_grant" if why != "client" else "invalid_client", "error_description": why}

    def token(self, form: dict[str, str], authorization: str | None) -> tuple[int, dict[str, Any]]:
        """(status, JSON body) of a token request (authorization_code grant only)."""
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            decoded = base64.b64decode(authorization[6:]).decode("utf-8")
            client_id, _, client_secret = (urllib.parse.unquote(p) for p in decoded.partition(":"))
        if client_id != self.client_id or not hmac.compare_digest(client_secret or "", self.client_secret):
            return self._refuse("client")
        if form.get("grant_type") != "authorization_code":
            return self._refuse("grant_type")
        with self._lock:
            grant = self._codes.pop(form.get("code", ""), None)  # one use only
        if grant is None or time.time() - grant.issued > CODE_TTL_S:
            return self._refuse("code")
        if form.get("redirect_uri") != grant.redirect_uri:
            return self._refuse("redirect_uri")
        verifier = form.get("code_verifier")
        if grant.challenge is None and verifier is not None:  # a PKCE downgrade (RFC 9700 §4.8.2)
            return self._refuse("code_verifier")
        if grant.challenge is not None and (
                b64url(hashlib.sha256((verifier or "").encode("ascii")).digest()) != grant.challenge):
            return self._refuse("code_verifier")
        access_token = secrets.token_urlsafe(24)
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer, "sub": hashlib.sha256(grant.user["email"].encode()).hexdigest()[:16],
            "aud": grant.client_id, "iat": now, "exp": now + 300, "auth_time": now,
            "at_hash": at_hash(access_token), "email_verified": True, **grant.user,
        }
        if grant.nonce is not None:
            claims["nonce"] = grant.nonce
        key: rsa.RSAPrivateKey | None = self.key
        if grant.fault == "wrong_key":
            key = self.other_key
        elif grant.fault == "wrong_audience":
            claims["aud"] = "another-client"
        elif grant.fault == "foreign_audience":  # for another client, naming this one as authorized party
            claims.update(aud="another-client", azp=grant.client_id)
        elif grant.fault == "wrong_issuer":
            claims["iss"] = "http://127.0.0.1:1"
        elif grant.fault == "expired":
            claims.update(iat=now - 3600, exp=now - 1800, auth_time=now - 3600)
        elif grant.fault == "wrong_nonce":
            claims["nonce"] = "forged-nonce"
        elif grant.fault == "alg_none":
            key = None
        with self._lock:
            self.tokens_issued += 1
            self._access[access_token] = dict(grant.user, sub=claims["sub"])
        return 200, {"access_token": access_token, "token_type": "Bearer", "expires_in": 300,
                     "scope": "openid email profile", "id_token": sign_jwt(claims, key, self.kid)}

    def userinfo(self, authorization: str | None) -> tuple[int, dict[str, Any]]:
        token = (authorization or "").removeprefix("Bearer ")
        with self._lock:
            user = self._access.get(token)
        return (200, user) if user else (401, {"error": "invalid_token"})

    def logout(self, query: dict[str, str]) -> tuple[int, str]:
        target = query.get("post_logout_redirect_uri", "")
        if target not in self.redirect_uris:
            return 400, "unknown post_logout_redirect_uri"
        with self._lock:
            self.logouts += 1
        return 302, target


def _handler(idp: OIDCServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

        def _send(self, status: int, body: dict[str, Any] | str, location: str | None = None) -> None:
            data = (json.dumps(body) if isinstance(body, dict) else body).encode("utf-8")
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Type", "application/json" if isinstance(body, dict) else "text/plain")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            if url.path == "/.well-known/openid-configuration":
                self._send(200, idp.discovery())
            elif url.path == "/jwks":
                self._send(200, idp.jwks())
            elif url.path == "/userinfo":
                self._send(*idp.userinfo(self.headers.get("Authorization")))
            elif url.path in ("/authorize", "/logout"):
                status, text = idp.authorize(query) if url.path == "/authorize" else idp.logout(query)
                self._send(status, "" if status == 302 else text, text if status == 302 else None)
            else:
                self._send(404, {"error": "not_found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode("utf-8")))
            if urllib.parse.urlsplit(self.path).path == "/token":
                self._send(*idp.token(form, self.headers.get("Authorization")))
            elif urllib.parse.urlsplit(self.path).path == "/userinfo":
                self._send(*idp.userinfo(self.headers.get("Authorization")))
            else:
                self._send(404, {"error": "not_found"})

    return Handler
