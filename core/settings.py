"""Settings, read from environment variables only.

Streamlit exports root-level keys of ``.streamlit/secrets.toml`` as environment variables, so a
hosted deployment sets the same names there. API keys are read here and never printed or logged.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WORKSPACE = PROJECT_ROOT / "data" / "demo"


def env(name: str, default: str | None = None) -> str | None:
    """The value of environment variable ``name``, or ``default`` when unset or blank."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def workspace_dir(explicit: str | Path | None = None) -> Path:
    """The workspace folder: ``explicit`` > ``$WORKBENCH_WORKSPACE`` > ``data/demo``."""
    chosen = explicit or env("WORKBENCH_WORKSPACE")
    return Path(chosen).expanduser().resolve() if chosen else DEFAULT_WORKSPACE


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


SECRET_VARIABLES = ("OPENAI_API_KEY",)


def redact(text: str) -> str:
    """``text`` with the configured API key(s) replaced by ``***`` (every error message passes here:
    an endpoint may echo the key it was sent).

    >>> import os; os.environ["OPENAI_API_KEY"] = "sk-test-123456"
    >>> redact("401: invalid key sk-test-123456")
    '401: invalid key ***'
    >>> del os.environ["OPENAI_API_KEY"]
    """
    for name in SECRET_VARIABLES:
        secret = env(name)
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return text
