"""One registry per kind of thing (metrics, datasets, judges, backends).

Names are canonical; a typo gets a did-you-mean; plugins register through the
``dialeval.<kind>`` entry-point group. An entry may be a ``"module:object"`` string,
imported on first use; a registry made with a
``base`` holds only subclasses of it or factories (other callables), checked then. A plugin that cannot be
imported (or raises on import) is an error only where its name is asked for; it is imported once, and its error
kept for each later ask.

Example:
    >>> reg: Registry[int] = Registry("widget")
    >>> reg.register("seven", 7)
    >>> reg.get("seven")
    7
    >>> reg.get("sevn")
    Traceback (most recent call last):
    ...
    dialeval.errors.UnknownNameError: unknown widget "sevn"; did you mean "seven"?
    >>> from pathlib import PurePath
    >>> paths: Registry[type] = Registry("path kind", base=PurePath)
    >>> paths.register("posix", "pathlib:PurePosixPath")  # not imported until asked for
    >>> paths.get("posix").__name__
    'PurePosixPath'
    >>> paths.register("text", "builtins:str")
    >>> paths.get("text")
    Traceback (most recent call last):
    ...
    dialeval.registry.RegistryEntryError: path kind "text" (builtins:str) is neither a PurePath subclass nor a factory
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin, get_type_hints

from dialeval.errors import DialevalError, unknown_name

T = TypeVar("T")


class RegistryEntryError(DialevalError):
    """A registry entry that cannot be imported, or is not what the registry holds."""


class Registry(Generic[T]):
    """A name -> object map with helpful errors and entry-point plugins."""

    def __init__(
        self, kind: str, group: str | None = None, *, base: type | None = None, factories: bool = True
    ) -> None:
        """Make an empty registry of ``kind`` things.

        Plugins come from the entry-point ``group`` (default ``dialeval.<kind>s``). With
        ``base``, every entry must be a subclass of ``base`` or, unless ``factories`` is False,
        a factory (a callable that is not a class).
        """
        self.kind = kind
        self.group = group or f"dialeval.{kind}s"
        self.base = base
        self.factories = factories
        self._items: dict[str, T | str] = {}
        self._plugins_loaded = False
        self._plugins: dict[str, str] = {}  # name -> "module:object" of the entry point that gave it
        self._clashes: dict[str, str] = {}  # name -> why it cannot be used: a plugin and another entry share it
        self._broken: dict[str, str] = {}  # name -> why its "module:object" cannot be loaded, from its one import
        self._tuples: list[str] | None = None  # the class attributes base declares as tuples, once looked up

    def register(self, name: str, obj: T | str) -> None:
        """Add ``obj`` (or a lazy ``"module:object"``) under ``name``; another one under that name is an error.

        A name a plugin has is an error where it is asked for (:meth:`get`), as a plugin loaded after it is.
        """
        if name in self._plugins and self._items[name] is not obj:
            self._clash(name, obj, self._plugins[name])
        elif name in self._items and self._items[name] is not obj:
            raise ValueError(f'{self.kind} "{name}" is already registered')
        else:
            self._items[name] = obj

    def _clash(self, name: str, other: object, plugin: str) -> None:
        where = other if isinstance(other, str) else f"{getattr(other, '__module__', '?')}:" + getattr(
            other, "__qualname__", type(other).__qualname__
        )
        self._clashes[name] = (
            f'two {self.kind}s are named "{name}": {where} and the plugin {plugin}; '
            "rename the plugin's entry point (or uninstall it)"
        )

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
            try:  # loaded now: a prefix plugin registers families on import
                obj: Any = ep.load()
            except Exception as exc:  # a plugin's own error: kept, said when asked for
                obj = ep.value
                if ep.name not in self._items:
                    self._broken[ep.name] = self._cannot_load(ep.name, ep.value, exc)
            if ep.name not in self._items:
                self._items[ep.name] = obj
                self._plugins[ep.name] = ep.value
            elif self._items[ep.name] is not obj:  # one registered before, or while its module was imported
                self._clash(ep.name, self._items[ep.name], ep.value)

    def _cannot_load(self, name: str, spec: str, exc: Exception) -> str:
        return f'{self.kind} "{name}" ({spec}) cannot be loaded: {exc}'

    def _resolve(self, name: str) -> T:
        """Import a lazy entry (once: a failed import's error is kept) and check it against ``base``."""
        if name in self._broken:
            raise RegistryEntryError(self._broken[name])
        obj = self._items[name]
        spec = obj if isinstance(obj, str) else ""
        if spec:
            module, _, attr = spec.partition(":")
            try:
                found: Any = importlib.import_module(module.strip())
                for part in attr.strip().split(".") if attr.strip() else ():
                    found = getattr(found, part)
            except Exception as exc:  # a plugin's module may raise anything on import
                self._broken[name] = self._cannot_load(name, spec, exc)
                raise RegistryEntryError(self._broken[name]) from exc
            obj = found
        if self.base is not None:
            given = spec or self._plugins.get(name, "")  # a plugin's entry point, loaded when plugins load
            is_class = isinstance(obj, type)
            if (is_class and not issubclass(cast(type, obj), self.base)) or not callable(obj) or not (
                is_class or self.factories
            ):
                where = f" ({given})" if given else ""
                what = "neither a {} subclass nor a factory" if self.factories else "not a {} subclass"
                raise RegistryEntryError(f'{self.kind} "{name}"{where} is {what.format(self.base.__name__)}')
            if why := self._misfit(name, given, obj) or self._misnamed(name, obj):
                self._broken[name] = why
                raise RegistryEntryError(why)
        self._items[name] = obj
        return cast(T, obj)

    def _misfit(self, name: str, given: str, obj: object) -> str | None:
        """Say why a class whose class attribute is a string, where ``base`` declares a tuple, cannot be used.

        ``outputs = ("score")`` is the string "score": a listing showed the outputs s, c, o, r, e.
        """
        if not isinstance(obj, type):
            return None
        if self._tuples is None:
            self._tuples = _tuple_attributes(self.base)
        for attr in self._tuples:
            value = getattr(obj, attr, None)
            if isinstance(value, str):
                where = f" ({given})" if given else ""
                return (f'{self.kind} "{name}"{where} has {attr} "{value}", a string: write a tuple, ("{value}",) '
                        "with its comma")  # fmt: skip
        return None

    def _misnamed(self, name: str, obj: object) -> str | None:
        """Say why a plugin's class whose own ``name`` is another cannot be used under its entry point's name.

        Asked for by the entry point's name, it ran under its own, a name no listing or default set gives.
        """
        own = getattr(obj, "name", None)
        if name not in self._plugins or not isinstance(obj, type) or not isinstance(own, str) or own == name:
            return None
        return (f'{self.kind} "{name}" is the class {obj.__module__}.{obj.__qualname__}, named "{own}": '
                f'name its entry point "{own}" too')  # fmt: skip

    def get(self, name: str) -> T:
        """Return the object named ``name`` (importing a lazy entry) or raise with the closest names."""
        self._load_plugins()
        if name in self._clashes:
            raise RegistryEntryError(self._clashes[name])
        if name in self._items:
            return self._resolve(name)
        raise unknown_name(self.kind, name, self._items)

    def names(self) -> list[str]:
        """Return the registered names, sorted."""
        self._load_plugins()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def _tuple_attributes(base: type | None) -> list[str]:
    """Return the class attributes ``base`` declares as tuples (``ClassVar[tuple[...]]`` too); none without one.

    Example:
        >>> class Widget:
        ...     parts: ClassVar[tuple[str, ...]]
        ...     size: int
        >>> _tuple_attributes(Widget), _tuple_attributes(None)
        (['parts'], [])
    """
    try:
        hints = get_type_hints(base) if base is not None else {}
    except Exception:  # annotations that cannot be evaluated here: nothing to check against
        return []
    declared = {a: get_args(h)[0] if get_origin(h) is ClassVar else h for a, h in hints.items()}
    return [a for a, d in declared.items() if (get_origin(d) or d) is tuple]
