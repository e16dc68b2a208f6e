"""How isolated a sandboxed program was, in one word (``Level``), and the levels this process's programs got: what a
run records in its manifest (``sandbox.isolation``), so that its results say how the model-written code ran."""

from __future__ import annotations

from typing import Literal

from structbench.sandbox.config import Isolation, NamespaceMode

Level = Literal["namespaces", "guard", "off", "none"]

LEVELS: dict[str, str] = {
    "namespaces": "in Linux namespaces (network, filesystem and processes isolated by the kernel)",
    "guard": "without namespace isolation (the kernel refused namespaces: audit-hook guard only)",
    "off": "without namespace isolation (sandbox=off: audit-hook guard only)",
    "none": "without isolation (neither namespaces nor the audit-hook guard)",
}
"""Each level, strongest first, as a report says how model-written code ran."""

_seen: set[str] = set()
"""The levels of the programs this process ran since the last ``take`` (a set: ``add`` needs no lock in threads)."""


def level_of(isolation: Isolation, namespaces: NamespaceMode) -> Level:
    """The level of a program that got ``isolation`` when ``namespaces`` was asked for."""
    if isolation.complete:
        return "namespaces"
    if not isolation.guard:
        return "none"
    return "off" if namespaces == "off" else "guard"


def weakest(*levels: str | None) -> str | None:
    """The weakest of ``levels`` (None: none given); one this structbench does not know (a newer one's) counts as the
    weakest, so a report never says more for it than it knows."""
    order = list(LEVELS)
    given = [level for level in levels if level is not None]
    return max(given, key=lambda level: order.index(level) if level in order else len(order), default=None)


def saw(level: str) -> None:
    """A program of this process ran at ``level`` (``run_python``, once a program: a set's ``add``)."""
    _seen.add(level)


def take() -> str | None:
    """The weakest level this process's programs got since the last ``take`` (None: no program ran), forgotten."""
    level = weakest(*_seen)
    _seen.clear()
    return level


def seen() -> frozenset[str]:
    """The levels seen since the last ``take`` (for ``restore``)."""
    return frozenset(_seen)


def restore(levels: frozenset[str]) -> None:
    """Put back what ``seen`` returned: the programs run since were not the run's."""
    _seen.clear()
    _seen.update(levels)
