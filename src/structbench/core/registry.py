"""A small named registry with lazy ``"module:attr"`` targets and "did you mean" errors."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar, cast

from structbench.core.errors import UsageError

T = TypeVar("T")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` Did you mean: a, b?`` naming up to three of ``known`` close to a misspelt ``name``; '' when none is."""
    close = difflib.get_close_matches(name, list(known), n=3)
    return f" Did you mean: {', '.join(close)}?" if close else ""


def load_target(target: str, what: str, *, plugin: bool = False) -> object:
    """The object a ``"package.module:attr"`` target names; an import or attribute error is a ``UsageError`` naming
    ``what``, and so is whatever a ``plugin``'s module raises (anyone's code; structbench's own raising is a bug)."""
    module_name, _, attr = target.partition(":")
    caught: tuple[type[BaseException], ...] = (Exception,) if plugin else (ImportError, AttributeError)
    try:
        return getattr(importlib.import_module(module_name), attr)
    except caught as err:
        raise UsageError(f"{what} failed to load from {target}: {type(err).__name__}: {err}") from None


class Registry(Generic[T]):
    """Maps names to objects; a target may be a ``"package.module:attr"`` string resolved on first use.

    A plugin's entry (``add_plugin``) never replaces one registered before it: the name then clashes, and using it
    is one clear error (naming both) until the plugin is renamed or removed; nothing else is affected. A plugin that
    fails to load is an error only where its name is used; ``usable`` leaves it out of listings with a warning."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}
        self._origins: dict[str, str] = {}
        """Name -> the plugin it came from (``plugins.Plugin.origin``); built-in names have none."""
        self._clashes: dict[str, str] = {}
        """Name -> why using it is refused: a plugin named it too."""

    def register(self, name: str, target: T | str) -> None:
        """Add ``name``; refuses duplicates so two plugins can never shadow each other."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = target

    def add_plugin(self, name: str, target: T | str, origin: str) -> None:
        """Add a plugin's ``name`` (from ``origin``); a name already taken is kept by its first owner and clashes."""
        if name in self._entries:
            owner = self._origins.get(name, "structbench's own")
            self._clashes[name] = (f"{self.kind} {name!r} is both {owner} and {origin}'s: a plugin never shadows a "
                                   f"{self.kind}; rename the entry point or uninstall its distribution")
            return
        self._entries[name] = target
        self._origins[name] = origin

    def clash(self, name: str) -> str | None:
        """Why using ``name`` is refused (a plugin names it too), or None."""
        return self._clashes.get(name)

    def usable(self, warn: Callable[[str], None] | None = None) -> Iterator[tuple[str, T]]:
        """Every entry, loaded, for listings and ``all``: one that fails to load is left out, and ``warn`` told why
        (a clash is told too, its first owner listed)."""
        for name in self._entries:
            clash = self._clashes.get(name)
            if clash is not None and warn is not None:
                warn(f"{clash} (using {name!r} is refused until then)")
            try:
                yield name, self._load(name)
            except UsageError as err:
                if warn is not None:
                    warn(f"{err}; left out")

    def decorator(self, name: str) -> Callable[[T], T]:
        """Register the decorated object under ``name``."""

        def wrap(obj: T) -> T:
            self.register(name, obj)
            return obj

        return wrap

    def names(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def get(self, name: str) -> T:
        """Return the object for ``name``, importing a lazy target; unknown names, a name a plugin clashes with and a
        plugin that fails to load raise ``UsageError``."""
        if name not in self._entries:
            hint = did_you_mean(name, self._entries)
            known = ", ".join(self._entries) or "none"
            raise UsageError(f"unknown {self.kind} {name!r}.{hint} Known: {known}.")
        clash = self._clashes.get(name)
        if clash is not None:
            raise UsageError(clash)
        return self._load(name)

    def _load(self, name: str) -> T:
        target = self._entries[name]
        if isinstance(target, str):
            origin = self._origins.get(name)
            what = f"{self.kind} {name!r}" + (f" ({origin})" if origin else "")
            obj = cast(T, load_target(target, what, plugin=origin is not None))
            self._entries[name] = obj
            return obj
        return target
