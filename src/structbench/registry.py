"""A small named registry with lazy ``"module:attr"`` targets and "did you mean" errors."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar, cast

from structbench.errors import UsageError

T = TypeVar("T")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` Did you mean: a, b?`` naming up to three of ``known`` close to a misspelt ``name``; '' when none is."""
    close = difflib.get_close_matches(name, list(known), n=3)
    return f" Did you mean: {', '.join(close)}?" if close else ""


def load_target(target: str, what: str) -> object:
    """The object a ``"package.module:attr"`` target names; an import or attribute error is a ``UsageError``
    naming ``what``."""
    module_name, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise UsageError(f"{what} failed to load from {target}: {err}") from err


class Registry(Generic[T]):
    """Maps names to objects; a target may be a ``"package.module:attr"`` string resolved on first use."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}

    def register(self, name: str, target: T | str) -> None:
        """Add ``name``; refuses duplicates so two plugins can never shadow each other."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = target

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
        """Return the object for ``name``, importing a lazy target; unknown names raise ``UsageError``."""
        try:
            target = self._entries[name]
        except KeyError:
            hint = did_you_mean(name, self._entries)
            known = ", ".join(self._entries) or "none"
            raise UsageError(f"unknown {self.kind} {name!r}.{hint} Known: {known}.") from None
        if isinstance(target, str):
            obj = cast(T, load_target(target, f"{self.kind} {name!r}"))
            self._entries[name] = obj
            return obj
        return target
