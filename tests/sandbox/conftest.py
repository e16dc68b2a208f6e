"""The sandbox's isolation modes, shared by its tests."""

from __future__ import annotations

import os
from typing import Any

import pytest

from sandbox.modes import degraded_python
from structbench.sandbox import probe


@pytest.fixture(params=["namespaces", "degraded"])
def mode(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Keyword arguments of ``run_python`` for each isolation mode this machine supports."""
    if request.param == "namespaces":
        if not probe().complete:
            pytest.skip(f"namespaces unavailable here: {probe().describe()}")
        return {"namespaces": "require", "guard": "off"}
    python = degraded_python()
    if python is None and os.geteuid() == 0:
        pytest.skip("no interpreter readable by an unprivileged uid for the degraded mode")
    return {"namespaces": "off", "guard": "auto", "python": python}
