"""Upper bounds of the options that size a generated set (questions, datasets, tables, rows): a value far past any
real use (a typo's extra zeros, ``10**12``) is refused in one line before anything is made, where it would fill the
memory or run for days. Each benchmark declares its bounds once, beside the option (about a hundred times what its
paper's set and the scale runs use); ``run``'s options carry the same constant as their pydantic ``le``."""

from __future__ import annotations

from structbench.core.errors import UsageError


def at_most(flag: str, value: int, limit: int) -> int:
    """``value``, or ``UsageError`` naming ``flag`` where it is above ``limit``."""
    if value > limit:
        raise UsageError(f"{flag} {value}: at most {limit:,} (a bound far above any real set)")
    return value
