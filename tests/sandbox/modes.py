"""Interpreters for the sandbox's degraded mode."""

from __future__ import annotations

import os
import shutil

import pytest

from structbench.sandbox import SandboxUnavailableError, probe

_NONE = "(none)"


def _first_runnable() -> str | None:
    """The first interpreter the degraded mode can run (None: the sandbox's own), ``_NONE`` when none can."""
    for candidate in (None, "/usr/bin/python3", "/usr/local/bin/python3", shutil.which("python3")):
        if candidate is not None and not os.path.exists(candidate):
            continue
        try:
            probe("off", candidate)
        except SandboxUnavailableError:
            continue
        return candidate
    return _NONE


def degraded_python() -> str | None:
    """An interpreter the degraded mode can run (as root it must be readable by an unprivileged uid); None: the
    sandbox's own, or none can."""
    found = _first_runnable()
    return None if found == _NONE else found


def degraded_python_or_skip() -> str | None:
    """``degraded_python``, skipping the test where no interpreter can run without namespaces."""
    found = _first_runnable()
    if found == _NONE:
        pytest.skip("no interpreter readable by an unprivileged uid for the degraded mode")
    return found
