"""Cell values of every kind a model's JSON or a database gives (edge cases, then random ones), and a comparable
outcome of typing one: for checking a fast path of a cell typing against the plain one it stands for."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from typing import Any

EDGES = (None, True, False, 0, 1, -1, 0.0, -0.0, 3.0, -2.0, 1.5, 1e20, 1e-5, 2.0**53, 2**53, 2**53 - 1, -(2**53),
         -(2**53) + 1, 2**63, 10**400, math.inf, -math.inf, math.nan, "", "null", "12", "1,500", "2K", "abc", "3.0",
         "true", "Yes", [1], {"a": 1})


def values(seed: str) -> Iterator[Any]:
    """Edge cases, then random integers, floats and number texts of every size."""
    rng = random.Random(seed)
    yield from EDGES
    for _ in range(3000):
        yield rng.choice((rng.randint(-(10**20), 10**20), rng.randint(-1000, 1000), rng.uniform(-1e9, 1e9),
                          float(rng.randint(-(10**6), 10**6)), rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30),
                          str(rng.randint(-(10**6), 10**6))))


def outcome(function: Callable[[Any], Any], value: Any) -> tuple[str, str]:
    """What ``function(value)`` gives, its type and text (so -0.0, NaN and 1 against 1.0 count), or the error."""
    try:
        got = function(value)
    except (OverflowError, ValueError) as err:
        return "raises", type(err).__name__
    return type(got).__name__, repr(got)
