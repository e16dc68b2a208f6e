"""Majority vote over parsed answers, as self-consistency scorers take it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def _identity(value: T) -> Hashable:
    return value


def majority(values: Sequence[T | None], *, key: Callable[[T], Hashable] = _identity) -> T | None:
    """The most frequent non-None value, values being equal when their ``key`` is; None when all are None.

    Ties go to the value that comes first; the winner returned is its first occurrence.
    """
    parsed = [v for v in values if v is not None]
    if not parsed:
        return None
    counts = Counter(key(v) for v in parsed)
    best = max(counts.values())
    return next(v for v in parsed if counts[key(v)] == best)
