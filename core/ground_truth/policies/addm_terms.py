"""ADDM's term libraries (``terms/_shared.yaml``, ``terms/<topic>.yaml``) and the small readers the
policy conversion (:mod:`core.ground_truth.policies.addm_convert`) uses on ADDM's YAML."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.base.errors import DataError
from core.base.files import read_yaml_mapping
from core.ground_truth.policies.loader import number

_TERM_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,127}")


class Terms:
    """Term libraries of a ``terms/`` folder: ``shared:ACCOUNT_TYPE`` → ``_shared.yaml``."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise DataError("terms folder not found", path=self.folder)
        self._cache: dict[str, dict[str, Any]] = {}

    def library(self, name: str, where: str, src: Path) -> dict[str, Any]:
        if name not in self._cache:
            path = self.library_path(name)
            if not path.exists():
                raise DataError(f"term library {name!r} not found in {self.folder}", path=src, field=where)
            self._cache[name] = read_yaml_mapping(path)
        return self._cache[name]

    def resolve(self, ref: str, where: str, src: Path) -> tuple[str, dict[str, Any], bool]:
        """(field name, term definition, whether it is a topic library term) of ``lib:TERM``."""
        lib, _, term_id = str(ref).partition(":")
        if not term_id or not _TERM_PART.fullmatch(lib) or not _TERM_PART.fullmatch(term_id):
            # a library is a file name in the terms folder, never a path ("../../x/outside:TERM")
            raise DataError(f"term reference {ref!r} is not library:TERM (letters, digits, _ and -)", path=src,
                            field=where)
        term = self.library(lib, where, src).get(term_id)
        if not isinstance(term, dict) or not isinstance(term.get("values"), list):
            raise DataError(f"term {term_id!r} not found in library {lib!r}", path=src, field=where)
        for i, v in enumerate(term["values"]):  # each {id, label?, description?, cues?}
            ok = isinstance(v, dict) and isinstance(v.get("id"), (str, int, bool)) and (
                isinstance(v.get("cues") or [], list) and all(isinstance(c, (str, int)) for c in v.get("cues") or []))
            if not ok:
                raise DataError(f"expected a mapping with an id (and cues as a list of words), got {v!r:.60}",
                                path=self.library_path(lib), field=f"{term_id}.values[{i}]")
        return term_id.lower(), term, lib != "shared"

    def library_path(self, name: str) -> Path:
        """The file of term library ``name``."""
        return self.folder / ("_shared.yaml" if name == "shared" else f"{name}.yaml")


def unknown_keys(keys: Iterable[str], allowed: set[str], src: Path, where: str) -> None:
    extra = sorted(set(keys) - allowed)
    if extra:
        raise DataError(f"cannot express {extra[0]!r} (supported: {', '.join(sorted(allowed))})",
                        path=src, field=f"{where}.{extra[0]}" if where else extra[0])


def listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def values_of(value: Any) -> list[str]:
    items = listed(value)
    return [("true" if v else "false") if isinstance(v, bool) else str(v).strip().lower() for v in items]


def by_k_of(raw: Any, src: Path, where: str) -> dict[int, float] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise DataError("expected a mapping K -> threshold", path=src, field=where)
    return {number(k, src, where, integer=True, minimum=1): number(v, src, f"{where}.{k}") for k, v in raw.items()}
