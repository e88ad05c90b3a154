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


def workspace_roots() -> list[Path]:
    """Folders the app may open workspaces under: ``$WORKBENCH_WORKSPACE_ROOTS`` (``os.pathsep``
    separated) or, by default, the project's ``data/`` and the workspace the app was started on."""
    raw = env("WORKBENCH_WORKSPACE_ROOTS")
    chosen = [Path(p) for p in raw.split(os.pathsep) if p.strip()] if raw else [PROJECT_ROOT / "data", workspace_dir()]
    return [p.expanduser().resolve() for p in chosen]


def allowed_workspace(candidate: str | Path, roots: list[Path] | None = None) -> Path:
    """``candidate`` resolved (symlinks followed), if it lies under one of ``roots``.

    Raises:
        ValueError: the folder is outside every root (the message lists the roots).

    >>> allowed_workspace("/etc", [Path("/srv/data")])
    Traceback (most recent call last):
    ...
    ValueError: /etc is outside the workspace roots (/srv/data); set WORKBENCH_WORKSPACE_ROOTS to allow more
    """
    text = str(candidate).strip()
    if not text or "\x00" in text:
        raise ValueError("enter a workspace folder")
    roots = workspace_roots() if roots is None else roots
    path = Path(text).expanduser().resolve()
    if any(path == root or path.is_relative_to(root) for root in roots):
        return path
    listed = ", ".join(str(r) for r in roots)
    raise ValueError(f"{path} is outside the workspace roots ({listed}); set WORKBENCH_WORKSPACE_ROOTS to allow more")


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
