"""The registry: lazy targets, duplicates refused, helpful unknown-name errors."""

from __future__ import annotations

import pytest

from structbench.core.errors import UsageError
from structbench.core.registry import Registry


def test_lazy_target_and_errors() -> None:
    reg: Registry[object] = Registry("thing")
    reg.register("path", "os.path:join")
    import os.path

    assert reg.get("path") is os.path.join
    with pytest.raises(ValueError, match="already registered"):
        reg.register("path", "x:y")
    with pytest.raises(UsageError, match="Did you mean: path"):
        reg.get("pth")
