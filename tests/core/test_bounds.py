"""``core.bounds``: a size at its bound passes, one past it is refused naming the option."""

from __future__ import annotations

import pytest

from structbench.core.bounds import at_most
from structbench.core.errors import UsageError


def test_at_most_passes_the_bound_and_refuses_past_it() -> None:
    assert at_most("--rows", 1_000, 1_000) == 1_000
    with pytest.raises(UsageError, match=r"^--rows 1001: at most 1,000 "):
        at_most("--rows", 1_001, 1_000)
