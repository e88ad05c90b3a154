"""Settings, read from environment variables only.

Streamlit exports root-level keys of ``.streamlit/secrets.toml`` as environment variables, so a
hosted deployment sets the same names there. API keys are read here and never printed or logged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from urllib.parse import unquote, urlsplit

from core.base.errors import ReadOnlyError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_WORKSPACE = PROJECT_ROOT / "data" / "demo"


def env(name: str, default: str | None = None) -> str | None:
    """The value of environment variable ``name``, or ``default`` when unset or blank."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def labels_url(workspace: Path) -> str:
    """SQLAlchemy URL of the label store: ``$WORKBENCH_LABELS_URL`` or SQLite in the workspace."""
    return env("WORKBENCH_LABELS_URL") or f"sqlite:///{workspace / 'labels.sqlite'}"


def openai_settings() -> dict[str, str | None]:
    """Base URL, API key and default model of the OpenAI-compatible endpoint (key never logged)."""
    return {
        "base_url": env("OPENAI_BASE_URL"),
        "api_key": env("OPENAI_API_KEY"),
        "model": env("WORKBENCH_JUDGE_MODEL"),
    }


def openai_configured() -> bool:
    """True when an API key (or a base URL of a local endpoint) is configured."""
    s = openai_settings()
    return bool(s["api_key"] or s["base_url"])


SECRET_VARIABLES = ("OPENAI_API_KEY", "WORKBENCH_ACCESS_CODE", "WORKBENCH_ADMIN_CODE")


def secret_values() -> list[str]:
    """Every configured secret: API keys (also each endpoint's), access codes, the label store's password.

    >>> import os; os.environ["WORKBENCH_ENDPOINT_LOCAL_KEY"] = "sk-local-999999"
    >>> "sk-local-999999" in secret_values()
    True
    >>> del os.environ["WORKBENCH_ENDPOINT_LOCAL_KEY"]
    """
    names = [*SECRET_VARIABLES, *(n for n in os.environ if n.startswith("WORKBENCH_ENDPOINT_") and n.endswith("_KEY"))]
    found = [v for v in (env(n) for n in names) if v]
    password = _url_password(env("WORKBENCH_LABELS_URL") or "")
    return [*found, *([password] if password else [])]


def _url_password(url: str) -> str | None:
    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None


def redact(text: str) -> str:
    """``text`` with every configured secret (:func:`secret_values`) replaced by ``***`` (every error
    message passes here: an endpoint may echo the key it was sent).

    >>> import os; os.environ["OPENAI_API_KEY"] = "sk-test-123456"
    >>> redact("401: invalid key sk-test-123456")
    '401: invalid key ***'
    >>> del os.environ["OPENAI_API_KEY"]
    """
    for secret in sorted(secret_values(), key=len, reverse=True):
        if len(secret) >= 6:
            text = text.replace(secret, "***")
    return text


# -- Deployment modes ---------------------------------------------------------------------------
# local: everything allowed (a researcher's own machine). demo: a public read-only demo; only
# the offline model and the no-LLM baselines run, labels go to the configured label store.
# team: sign-in required, roles gate admin work, labels in PostgreSQL.
MODES = ("local", "demo", "team")
_SETUP: ContextVar[bool] = ContextVar("workbench_setup", default=False)


def deployment_mode() -> str:
    """``$WORKBENCH_MODE`` (local, demo or team); ``WORKBENCH_HOSTED=1`` is an alias of demo.

    Raises:
        ValueError: an unknown mode (the app refuses to start rather than guess).

    >>> import os; os.environ["WORKBENCH_HOSTED"] = "1"
    >>> deployment_mode()
    'demo'
    >>> del os.environ["WORKBENCH_HOSTED"]
    """
    raw = (env("WORKBENCH_MODE") or "").strip().lower()
    if not raw:
        return "demo" if env("WORKBENCH_HOSTED") == "1" else "local"
    if raw not in MODES:
        raise ValueError(f"WORKBENCH_MODE={raw!r} is not a deployment mode; use one of {', '.join(MODES)}")
    return raw


def warmup_enabled() -> bool:
    """``WORKBENCH_WARMUP`` (default on): import every page's modules in the background once the
    first page is drawn (:mod:`core.ui.warmup`); ``0`` turns it off."""
    return env("WORKBENCH_WARMUP", "1") != "0"


def read_only() -> bool:
    """True when the workspace must not be written (demo mode), outside :func:`deployment_setup`."""
    return deployment_mode() == "demo" and not _SETUP.get()


@contextmanager
def deployment_setup() -> Iterator[None]:
    """Lift the demo's read-only rule for the deployer's own setup (``workbench demo`` builds the
    demo workspace); nothing a page runs enters it."""
    token = _SETUP.set(True)
    try:
        yield
    finally:
        _SETUP.reset(token)


def require_writable(action: str) -> None:
    """Refuse ``action`` (e.g. "import a dataset") in a read-only deployment.

    Every core function that writes into a workspace (other than the offline runs a demo allows)
    calls this first, so a request the page would not offer cannot write either.

    Raises:
        ReadOnlyError: the deployment is a read-only demo.
    """
    if read_only():
        raise ReadOnlyError(f"this is a read-only demo: cannot {action} (WORKBENCH_MODE=demo)")


def rate_limit(action: str, default: str = "5/60") -> tuple[int, float]:
    """(burst, seconds per token) of ``action`` per session in demo and team modes.

    ``$WORKBENCH_RATE_LIMIT_<ACTION>`` (e.g. ``WORKBENCH_RATE_LIMIT_LAUNCH=3/60``: 3 at once, then
    one more every 60 s / 3) overrides ``$WORKBENCH_RATE_LIMIT`` (default ``default``).

    >>> rate_limit("launch")
    (5, 12.0)
    """
    raw = env(f"WORKBENCH_RATE_LIMIT_{action.upper().replace('-', '_')}") or env("WORKBENCH_RATE_LIMIT") or default
    count, _, seconds = raw.partition("/")
    try:
        burst, window = int(count), float(seconds or 60)
    except ValueError as exc:
        raise ValueError(f"rate limit {raw!r} for {action}: use COUNT/SECONDS, e.g. 5/60") from exc
    if burst < 1 or window <= 0:
        raise ValueError(f"rate limit {raw!r} for {action}: COUNT ≥ 1 and SECONDS > 0")
    return burst, window / burst


def labels_storage(url: str) -> tuple[str, bool]:
    """(where labels are stored, whether they persist) for the label store ``url``, in words
    without the password.

    >>> labels_storage("postgresql+psycopg://ann:pw@db.example.org:5432/labels")
    ('PostgreSQL database labels on db.example.org', True)
    >>> labels_storage("sqlite:////srv/ws/labels.sqlite")[1]
    False
    """
    parts = urlsplit(url)
    scheme = parts.scheme.split("+")[0]
    if scheme == "sqlite":
        persist = env("WORKBENCH_LABELS_PERSIST") == "1"
        where = "a SQLite file on this server's disk"
        return where + ("" if persist else " (an ephemeral container: labels are lost when the app restarts)"), persist
    name = parts.path.lstrip("/") or "(default)"
    kind = {"postgresql": "PostgreSQL", "mysql": "MySQL"}.get(scheme, scheme)
    return f"{kind} database {name} on {parts.hostname or 'localhost'}", True
