"""One registry type for every kind of named thing (tasks, formulas, policies, judges, methods, metrics).

A registry is an insertion-ordered mapping of names to frozen entries. Registering a name twice is
a programming error; looking up an unknown name raises :class:`~core.base.errors.UnknownNameError`,
whose message lists the valid names.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Thing:
...     name: str
...     description: str
>>> things: Registry[Thing] = Registry("thing")
>>> things.add(Thing("a", "the first")).name
'a'
>>> things["a"].description
'the first'
>>> things["b"]
Traceback (most recent call last):
...
core.base.errors.UnknownNameError: unknown thing 'b'; valid: a
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, Protocol, TypeVar

from core.base.errors import UnknownNameError


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(Mapping[str, T], Generic[T]):
    """Name → entry, in registration order; unknown names list the valid ones."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def add(self, entry: T, *, name: str | None = None) -> T:
        """Register ``entry`` under ``name`` (default ``entry.name``) and return it."""
        key = entry.name if name is None else name
        if key in self._entries:
            raise ValueError(f"{self.kind} {key!r} is registered twice")
        self._entries[key] = entry
        return entry

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, list(self._entries)) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        return list(self._entries)
