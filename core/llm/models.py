"""The models an endpoint serves (its ``/models`` list), for pages that offer any of them."""

from __future__ import annotations

import re
from typing import Any

from core.base.errors import WorkbenchError

MAX_MODELS = 500  # names kept from one listing
MODEL_NAME = re.compile(r"[\w.:/@+-]{1,200}")  # what a model id looks like (no spaces, no markup)


def served_models(endpoint: Any, *, timeout: float = 5.0) -> list[str]:
    """Model ids listed by ``endpoint``'s ``GET /models`` (sorted, at most :data:`MAX_MODELS`;
    ids that do not look like model names are left out).

    Raises:
        WorkbenchError: the endpoint has no key, cannot be reached or refuses (one line).
    """
    import openai  # deferred: heavy optional import, only when a page asks for the list

    key = endpoint.api_key() or ("local" if endpoint.is_local else None)
    if not key:
        raise WorkbenchError(f"endpoint {endpoint.name!r} has no API key: set {endpoint.key_env}")
    client = openai.OpenAI(base_url=endpoint.base_url, api_key=key, timeout=timeout, max_retries=0)
    try:
        page = client.models.list()
        ids = [str(getattr(m, "id", "")) for _, m in zip(range(MAX_MODELS * 4), page.data, strict=False)]
    except openai.APIError as exc:
        raise WorkbenchError(f"endpoint {endpoint.name!r} did not list its models: {type(exc).__name__}") from None
    finally:
        client.close()
    return sorted({m for m in ids if MODEL_NAME.fullmatch(m)})[:MAX_MODELS]
