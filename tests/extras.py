"""Tests of optional extras (``structbench[inspect]``, ``[datasets]``, ``[docs]``, ``[ray]``): skipped when the
extra is not installed, failed instead when ``STRUCTBENCH_REQUIRE_EXTRAS=1`` (CI installs every extra)."""

from __future__ import annotations

import importlib.util
import os

import pytest


def require_extra(module: str, extra: str) -> None:
    """Skip the calling test module unless ``module`` imports; fail when extras are required."""
    if importlib.util.find_spec(module) is not None:
        return
    message = f"{module} is missing: pip install -e '.[{extra}]'"
    if os.environ.get("STRUCTBENCH_REQUIRE_EXTRAS") == "1":
        pytest.fail(message + " (STRUCTBENCH_REQUIRE_EXTRAS=1)", pytrace=False)
    pytest.skip(message, allow_module_level=True)
