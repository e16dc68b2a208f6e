"""How errors raised deep in a run name its options: as the ``run`` command's flags (``--max-cost 1``) when the command
line gave them, as Python's keywords (``max_cost=1``) when ``evaluate``, ``configure`` or a suite file did.

The command line's entry point sets ``flag_words`` for its command; the library's words are the default. The flags'
spellings are ``runner.arguments``' (``FLAG_NAMES``, filled when that module is imported, which every run does). In
the core, so that the run files' checks (a sweep's keys and values) speak the caller's words too.
"""

from __future__ import annotations

from contextvars import ContextVar

flag_words: ContextVar[bool] = ContextVar("flag_words", default=False)
"""Whether the run's options were given as the ``run`` command's flags (set by the command line's entry point) or as
Python keywords (the default)."""

FLAG_NAMES: dict[str, str] = {}
"""Option -> how the ``run`` command spells it (``out`` -> ``--out``), from ``runner.arguments.FLAGS``."""


def word(name: str) -> str:
    """Option ``name`` alone in its caller's words: ``--max-cost`` or ``max_cost``."""
    if flag_words.get():
        return FLAG_NAMES.get(name) or "--" + name.replace("_", "-")
    return name


def spelt(name: str, value: str | None = None) -> str:
    """Option ``name`` in its caller's words: ``--max-cost`` or ``max_cost=``; with a value (as text),
    ``--max-cost 1`` or ``max_cost=1``."""
    if flag_words.get():
        return word(name) if value is None else f"{word(name)} {value}"
    return f"{name}=" if value is None else f"{name}={value}"


def swept(key: str) -> str:
    """A swept key in its caller's words: ``--sweep KEY`` from the command line, ``sweep['KEY']`` from Python."""
    return f"--sweep {key}" if flag_words.get() else f"sweep[{key!r}]"
