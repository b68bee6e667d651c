"""One registry per kind of thing (metrics, datasets, judges, backends).

Names are canonical; a typo gets a did-you-mean; plugins register through the
``dialeval.<kind>`` entry-point group.

Example:
    >>> reg: Registry[int] = Registry("widget")
    >>> reg.register("seven", 7)
    >>> reg.get("seven")
    7
    >>> reg.get("sevn")
    Traceback (most recent call last):
    ...
    dialeval.errors.UnknownNameError: unknown widget "sevn"; did you mean "seven"?
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from dialeval.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """A name -> object map with helpful errors and entry-point plugins."""

    def __init__(self, kind: str, group: str | None = None) -> None:
        """Make an empty registry of ``kind`` things.

        Plugins come from the entry-point ``group`` (default ``dialeval.<kind>s``).
        """
        self.kind = kind
        self.group = group or f"dialeval.{kind}s"
        self._items: dict[str, T] = {}
        self._plugins_loaded = False

    def register(self, name: str, obj: T) -> None:
        """Add ``obj`` under ``name``; a second object under the same name is an error."""
        if name in self._items and self._items[name] is not obj:
            raise ValueError(f'{self.kind} "{name}" is already registered')
        self._items[name] = obj

    def decorator(self, name: str) -> Callable[[T], T]:
        """Return a decorator that registers what it decorates under ``name``."""

        def wrap(obj: T) -> T:
            self.register(name, obj)
            return obj

        return wrap

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=self.group):
            if ep.name not in self._items:
                self._items[ep.name] = ep.load()

    def get(self, name: str) -> T:
        """Return the object named ``name`` or raise with the closest names."""
        self._load_plugins()
        if name in self._items:
            return self._items[name]
        close = difflib.get_close_matches(name, list(self._items), n=3, cutoff=0.5)
        hint = f'; did you mean "{close[0]}"?' if close else f"; known: {', '.join(sorted(self._items))}"
        raise UnknownNameError(f'unknown {self.kind} "{name}"{hint}')

    def names(self) -> list[str]:
        """Return the registered names, sorted."""
        self._load_plugins()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
